package local

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/tokex-dev/tokex/internal/statedir"
)

// EngineName is the reference engine's binary (cmd/tokex-engine).
const EngineName = "tokex-engine"

// EngineEnv names the engine's path for the command line, after --engine
// and before target.embedded.engine.
const EngineEnv = "TOKEX_ENGINE"

// EngineArg puts tokex itself in engine mode (its hidden command).
const EngineArg = "engine"

// modulePath is tokex's module, whose source can build the engine.
const modulePath = "github.com/tokex-dev/tokex"

// Engine is the program the local driver starts as the embedded server.
type Engine struct {
	Path string
	Args []string // before the engine's flags
	// Inflated: the engine is tokex itself, so its memory includes the
	// pages of tokex's own binary (client-go and the rest).
	Inflated bool
	How      string // how it was found, for the log
}

// InflatedDetail is the engine_memory_inflated warning's text.
const InflatedDetail = "engine memory includes tokex's own binary pages (the engine ran as `tokex engine`, no tokex-engine was found): " +
	"install both with `go install ./cmd/...`, or pass --engine PATH (target.embedded.engine), for the server's own figure"

// EngineSearch is where FindEngine looks; zero fields take the running
// process's own values.
type EngineSearch struct {
	Explicit string   // --engine, $TOKEX_ENGINE or target.embedded.engine
	Self     string   // the running tokex (os.Executable)
	SelfArgs []string // how Self runs as the engine; nil: it cannot
	Build    *debug.BuildInfo
	WorkDir  string
	StateDir string // where engines built from source are kept
	Go       string // the go command; "" looks it up on PATH
	Log      func(string)
	// build runs `go build` (tests replace it).
	build func(ctx context.Context, goCmd, root, out string) error
}

// FindEngine resolves the engine: (a) the explicit path; (b) tokex-engine
// beside the running tokex (`go install ./cmd/...` installs both); (c) when
// tokex runs from its module source (`go run ./cmd/tokex`: main module
// github.com/tokex-dev/tokex at version (devel), a go command on PATH and
// the module root above the working directory), tokex-engine built once
// into the state folder, keyed by tokex's build; (d) tokex itself in engine
// mode, Inflated.
func FindEngine(ctx context.Context, s EngineSearch) (Engine, error) {
	s.defaults()
	if s.Explicit != "" {
		if err := executable(s.Explicit); err != nil {
			return Engine{}, fmt.Errorf("engine %s: %w", s.Explicit, err)
		}
		return Engine{Path: s.Explicit, How: "given"}, nil
	}
	if s.Self != "" {
		beside := filepath.Join(filepath.Dir(s.Self), EngineName)
		if executable(beside) == nil {
			return Engine{Path: beside, How: "beside tokex"}, nil
		}
	}
	e, why := s.fromSource(ctx)
	if why == "" {
		return e, nil
	}
	if ctx.Err() != nil {
		return Engine{}, ctx.Err()
	}
	if s.SelfArgs == nil || s.Self == "" {
		return Engine{}, fmt.Errorf("find engine: no %s beside %s and %s", EngineName, s.Self, why)
	}
	return Engine{Path: s.Self, Args: s.SelfArgs, Inflated: true, How: "tokex itself: " + why}, nil
}

func (s *EngineSearch) defaults() {
	if s.Self == "" {
		s.Self, _ = os.Executable()
	}
	if s.Build == nil {
		s.Build, _ = debug.ReadBuildInfo()
	}
	if s.WorkDir == "" {
		s.WorkDir, _ = os.Getwd()
	}
	if s.StateDir == "" {
		s.StateDir, _ = statedir.EngineDir()
	}
	if s.Log == nil {
		s.Log = func(string) {}
	}
	if s.build == nil {
		s.build = goBuild
	}
}

// fromSource is step (c); why says why it did not apply.
func (s *EngineSearch) fromSource(ctx context.Context) (Engine, string) {
	if s.Build == nil || s.Build.Main.Path != modulePath || s.Build.Main.Version != "(devel)" {
		return Engine{}, "tokex was not run from its module source"
	}
	root := moduleRoot(s.WorkDir)
	if root == "" {
		return Engine{}, "the module source is not above the working directory"
	}
	goCmd := s.Go
	if goCmd == "" {
		var err error
		if goCmd, err = exec.LookPath("go"); err != nil {
			return Engine{}, "no go command on PATH to build it"
		}
	}
	key, err := buildKey(s.Self)
	if err != nil || s.StateDir == "" {
		return Engine{}, fmt.Sprintf("cannot key a built engine to this tokex: %v", err)
	}
	dst := filepath.Join(s.StateDir, EngineName+"-"+key)
	if executable(dst) == nil {
		return Engine{Path: dst, How: "built from " + root}, ""
	}
	s.Log(fmt.Sprintf("building the reference engine from %s once for this tokex build (go build ./cmd/%s → %s)", root, EngineName, dst))
	if err := s.buildInto(ctx, goCmd, root, dst); err != nil {
		return Engine{}, "building it failed: " + err.Error()
	}
	return Engine{Path: dst, How: "built from " + root}, ""
}

// buildInto builds in a temporary folder and renames, so that a
// concurrent tokex never starts half a binary (go build refuses to write
// over a file that is not one); older builds are removed.
func (s *EngineSearch) buildInto(ctx context.Context, goCmd, root, dst string) error {
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, EngineName)
	if err := s.build(ctx, goCmd, root, out); err != nil {
		return err
	}
	if err := executable(out); err != nil {
		return fmt.Errorf("go build wrote no engine: %w", err)
	}
	if err := os.Rename(out, dst); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(dir, EngineName+"-*"))
	for _, o := range old {
		if o != dst {
			_ = os.Remove(o)
		}
	}
	return nil
}

func goBuild(ctx context.Context, goCmd, root, out string) error {
	cmd := exec.CommandContext(ctx, goCmd, "build", "-o", out, "./cmd/"+EngineName)
	cmd.Dir = root
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(buf.String())
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		return fmt.Errorf("%w: %s", err, msg)
	}
	return nil
}

// moduleRoot is the folder at or above dir whose go.mod declares tokex's
// module and holds the engine's command; "" when there is none.
func moduleRoot(dir string) string {
	for i := 0; dir != "" && i < 64; i++ {
		if declares(filepath.Join(dir, "go.mod"), modulePath) {
			if _, err := os.Stat(filepath.Join(dir, "cmd", EngineName, "main.go")); err == nil {
				return dir
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}

func declares(gomod, module string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module"); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == module
		}
	}
	return false
}

// buildKey names tokex's build: its Go build ID (which changes with any
// source or toolchain change), else a hash of the binary.
func buildKey(exe string) (string, error) {
	if exe == "" {
		return "", errors.New("unknown executable")
	}
	id, err := goBuildID(exe)
	if err != nil {
		b, rerr := os.ReadFile(exe)
		if rerr != nil {
			return "", rerr
		}
		id = b
	}
	sum := sha256.Sum256(id)
	return hex.EncodeToString(sum[:8]), nil
}

// goBuildID reads the ELF note the Go linker writes (.note.go.buildid).
func goBuildID(exe string) ([]byte, error) {
	f, err := elf.Open(exe)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return nil, errors.New("no Go build ID")
	}
	b, err := sec.Data()
	if err != nil {
		return nil, err
	}
	// namesz, descsz, type, "Go\0\0", then the ID.
	if len(b) < 16 || !bytes.Equal(b[12:16], []byte("Go\x00\x00")) {
		return nil, errors.New("malformed Go build ID note")
	}
	descsz := int(f.ByteOrder.Uint32(b[4:8]))
	if descsz <= 0 || 16+descsz > len(b) {
		return nil, errors.New("malformed Go build ID note")
	}
	return b[16 : 16+descsz], nil
}

// executable reports whether path is a regular file someone may execute.
func executable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}
