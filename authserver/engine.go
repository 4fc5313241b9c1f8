package authserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The engine is the reference server run as a child process of tokex's
// local driver: `tokex-engine --config FILE --ready-fd 3` (or tokex itself
// in engine mode). Once it accepts connections it writes one JSON object,
// Ready, to the inherited descriptor and closes it; the parent reads it with
// a timeout and a size bound. Nothing is parsed from its log lines.

// ReadyProtocol is the version of the ready report.
const ReadyProtocol = 1

// MaxReadyBytes bounds the ready report a parent reads.
const MaxReadyBytes = 64 << 10

var errNoReport = errors.New("no ready report")

// Ready is the engine's report that it serves.
type Ready struct {
	Protocol int    `json:"protocol"`
	URL      string `json:"url"` // base URL: scheme://host:port
	PID      int    `json:"pid"`
	Version  string `json:"version"` // the engine binary's build (BuildVersion)
	Go       string `json:"go"`
}

// BuildVersion names the running binary's build: module version, VCS
// revision and whether the tree was modified, as the Go toolchain stamped
// them ("(devel)" alone for `go run`).
func BuildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v
}

// EngineMain is the engine's program: flags --config FILE (required),
// --ready-fd N and -v. It serves until SIGINT or SIGTERM and returns the
// exit code: 0, or 2 when it cannot serve.
func EngineMain(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("tokex-engine", flag.ContinueOnError)
	fl.SetOutput(stderr)
	config := fl.String("config", "", "server YAML (the format of tokex serve --config)")
	readyFD := fl.Int("ready-fd", 0, "write the ready report (JSON) to this inherited descriptor, then close it")
	var verbose bool
	fl.BoolVar(&verbose, "v", false, "log at debug level")
	fl.BoolVar(&verbose, "verbose", false, "log at debug level")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if err := runEngine(*config, *readyFD, verbose, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "tokex-engine:", err)
		return 2
	}
	return 0
}

func runEngine(config string, readyFD int, verbose bool, stdout, stderr io.Writer) error {
	if config == "" {
		return errors.New("--config is required")
	}
	var ready *os.File
	if readyFD > 0 {
		ready = os.NewFile(uintptr(readyFD), "ready")
		defer ready.Close()
	}
	cfg, doc, err := Load(config)
	if err == nil {
		err = cfg.Validate(doc)
	}
	if err != nil {
		return err
	}
	source := cfg.Subject.JWKSURL + cfg.Subject.JWKSFile
	if source == "" {
		return errors.New("subject.jwks_url or subject.jwks_file is required")
	}
	opt := Options{Logger: NewLogger(stderr, verbose)}
	if len(cfg.Clients) == 0 {
		opt.ClientSecret = os.Getenv(cfg.DefaultClients.SecretEnv)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, cfg, opt, Banner{Out: stdout, SubjectSource: source, ClientsFrom: config}, func(s *Server) error {
		if ready == nil {
			return nil
		}
		err := writeReady(ready, Ready{Protocol: ReadyProtocol, URL: s.BaseURL(), PID: os.Getpid(), Version: BuildVersion(), Go: runtime.Version()})
		if cerr := ready.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

func writeReady(w io.Writer, r Ready) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ParseReady reads a ready report: one JSON object of at most MaxReadyBytes
// with this protocol, a pid and an http(s) base URL with a host and port.
func ParseReady(b []byte) (Ready, error) {
	var r Ready
	if len(b) > MaxReadyBytes {
		return r, fmt.Errorf("ready report over %d bytes", MaxReadyBytes)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return r, errNoReport
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("ready report: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return r, errors.New("ready report: more than one JSON value")
	}
	if r.Protocol != ReadyProtocol {
		return r, fmt.Errorf("ready report: protocol %d, want %d (an engine of another tokex version?)", r.Protocol, ReadyProtocol)
	}
	if r.PID <= 0 {
		return r, fmt.Errorf("ready report: pid %d", r.PID)
	}
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return r, fmt.Errorf("ready report: url %.100q is not an http(s) base URL", r.URL)
	}
	if host, port, err := net.SplitHostPort(u.Host); err != nil || host == "" || port == "" {
		return r, fmt.Errorf("ready report: url %.100q has no host and port", r.URL)
	}
	if len(r.Version) > 256 || len(r.Go) > 64 {
		return r, errors.New("ready report: version too long")
	}
	return r, nil
}

// EngineCommand is how a parent starts an engine.
type EngineCommand struct {
	Path string   // the program
	Args []string // before the engine's flags (tokex itself: "engine")
	// Config is the server YAML; Env the whole environment (the default
	// clients' secret travels there, never in argv).
	Config      string
	Env         []string
	SysProcAttr *syscall.SysProcAttr
	// Stdout and Stderr receive each line the engine prints.
	Stdout, Stderr func(line string)
	// Timeout bounds the wait for the ready report (default 15 s).
	Timeout time.Duration
}

// EngineProcess is a started engine, from its parent's side.
type EngineProcess struct {
	Ready   Ready
	cmd     *exec.Cmd
	exited  chan struct{}
	exitErr error
	mu      sync.Mutex
	last    string // the latest line on stderr
}

func (p *EngineProcess) lastLine() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// StartEngine starts the engine and waits for its ready report. On any
// error the process is stopped; the error says how it ended when it did.
func StartEngine(ctx context.Context, c EngineCommand) (*EngineProcess, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	args := append(append([]string{}, c.Args...), "--config", c.Config, "--ready-fd", "3")
	cmd := exec.Command(c.Path, args...)
	cmd.Env, cmd.SysProcAttr, cmd.ExtraFiles = c.Env, c.SysProcAttr, []*os.File{w}
	p := &EngineProcess{cmd: cmd, exited: make(chan struct{})}
	if err := p.start(c.Stdout, c.Stderr); err != nil {
		w.Close()
		return nil, fmt.Errorf("start engine %s: %w", c.Path, err)
	}
	w.Close() // the child holds the only write end: its exit is EOF
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	p.Ready, err = readReady(ctx, r, timeout)
	if err == nil && p.Ready.PID != cmd.Process.Pid {
		err = fmt.Errorf("the engine reports pid %d, tokex started %d: a wrapper must exec the engine", p.Ready.PID, cmd.Process.Pid)
	}
	if err != nil {
		return nil, p.notReady(err)
	}
	return p, nil
}

// notReady stops an engine that gave no valid ready report and says how it
// ended. A report cut short by the engine's exit is waited for briefly, so
// that its exit status and last error line can be told.
func (p *EngineProcess) notReady(err error) error {
	if errors.Is(err, errNoReport) {
		select {
		case <-p.exited:
		case <-time.After(2 * time.Second):
		}
	}
	select {
	case <-p.exited:
		if last := p.lastLine(); last != "" {
			return fmt.Errorf("engine exited before it was ready (%v; last line: %.300q): %w", p.exitErr, last, err)
		}
		return fmt.Errorf("engine exited before it was ready (%v): %w", p.exitErr, err)
	default:
		p.Stop(time.Second)
		return err
	}
}

// start runs the command with its output piped to the line handlers; the
// process is waited for once both pipes are drained.
func (p *EngineProcess) start(stdout, stderr func(string)) error {
	outR, err := p.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	errR, err := p.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := p.cmd.Start(); err != nil {
		return err
	}
	var drained sync.WaitGroup
	for _, s := range []struct {
		r io.Reader
		f func(string)
	}{{outR, stdout}, {errR, func(line string) {
		p.mu.Lock()
		p.last = line
		p.mu.Unlock()
		if stderr != nil {
			stderr(line)
		}
	}}} {
		drained.Add(1)
		go func() {
			defer drained.Done()
			pipeLines(s.r, s.f)
		}()
	}
	go func() {
		drained.Wait()
		p.exitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return nil
}

func readReady(ctx context.Context, r *os.File, timeout time.Duration) (Ready, error) {
	if err := r.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return Ready{}, err
	}
	stop := context.AfterFunc(ctx, func() { _ = r.SetReadDeadline(time.Now()) })
	defer stop()
	b, err := io.ReadAll(io.LimitReader(r, MaxReadyBytes+1))
	switch {
	case ctx.Err() != nil:
		return Ready{}, ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded):
		return Ready{}, fmt.Errorf("engine not ready within %s", timeout)
	case err != nil:
		return Ready{}, err
	}
	return ParseReady(b)
}

func pipeLines(r io.Reader, f func(string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		if f != nil {
			f(sc.Text())
		}
	}
	_, _ = io.Copy(io.Discard, r) // a line over 1 MiB: keep the child unblocked
}

// PID is the engine's process id.
func (p *EngineProcess) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the engine has ended.
func (p *EngineProcess) Exited() <-chan struct{} { return p.exited }

// ExitErr is how the engine ended, once Exited is closed.
func (p *EngineProcess) ExitErr() error { return p.exitErr }

// Stop sends SIGTERM and, after grace, SIGKILL; it returns once the engine
// has ended.
func (p *EngineProcess) Stop(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// String is "path (pid N)" for logs.
func (p *EngineProcess) String() string {
	return p.cmd.Path + " (pid " + strconv.Itoa(p.PID()) + ")"
}
