package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The embedded server is tokex's reference server (authserver) run by the
// local driver as a child process; "engine" names the server under test,
// whichever it is. Its program is still called tokex-engine, its variable
// TOKEX_ENGINE, its flag --engine and tokex's hidden mode engine, for
// compatibility with the scripts and configs that name them.

// ServerBinary is the embedded server's own binary (cmd/tokex-engine).
const ServerBinary = "tokex-engine"

// ServerEnv names the embedded server's program for the command line, after --engine
// and before target.embedded.engine.
const ServerEnv = "TOKEX_ENGINE"

// ServerArg makes tokex itself the embedded server (its hidden command).
const ServerArg = "engine"

// ServerProgram is the program the local driver starts as the embedded
// server.
type ServerProgram struct {
	Path string
	Args []string // before the server's flags
	// Inflated: the program is tokex itself, so its memory includes the
	// pages of tokex's own binary (client-go and the rest).
	Inflated bool
	How      string // how it was found, for the log
}

// InflatedDetail is the engine_memory_inflated warning's text.
const InflatedDetail = "engine memory includes tokex's own binary pages (the embedded server ran as `tokex engine`, no tokex-engine was found): " +
	"install both with `go install ./cmd/...`, or pass --engine PATH (target.embedded.engine), for the server's own figure"

// ProgramSearch is where FindServerProgram looks; a zero Self is the
// running process.
type ProgramSearch struct {
	Explicit string   // --engine, $TOKEX_ENGINE or target.embedded.engine
	Self     string   // the running tokex (os.Executable)
	SelfArgs []string // how Self runs as the embedded server; nil: it cannot
}

// FindServerProgram resolves the embedded server's program: (a) the
// explicit path; (b) tokex-engine beside the running tokex (`go install
// ./cmd/...` installs both); (c) tokex itself in its engine mode, Inflated.
func FindServerProgram(s ProgramSearch) (ServerProgram, error) {
	if s.Explicit != "" {
		if err := executable(s.Explicit); err != nil {
			return ServerProgram{}, fmt.Errorf("embedded server program %s: %w", s.Explicit, err)
		}
		return ServerProgram{Path: s.Explicit, How: "given"}, nil
	}
	if s.Self == "" {
		s.Self, _ = os.Executable()
	}
	beside := filepath.Join(filepath.Dir(s.Self), ServerBinary)
	if s.Self != "" && executable(beside) == nil {
		return ServerProgram{Path: beside, How: "beside tokex"}, nil
	}
	if s.SelfArgs == nil || s.Self == "" {
		return ServerProgram{}, fmt.Errorf("embedded server: no %s beside %s, and no --engine", ServerBinary, s.Self)
	}
	return ServerProgram{Path: s.Self, Args: s.SelfArgs, Inflated: true, How: "tokex itself: no " + ServerBinary + " beside it"}, nil
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
