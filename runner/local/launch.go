package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/tokex-dev/tokex/authserver"
)

// The parent's side of the embedded server's start: the child process, its
// ready report (authserver.Ready, read with a timeout and a size bound), its
// log lines, its stop.

// serverCommand is how the local driver starts the embedded server
// (authserver.EmbeddedMain, in tokex-engine or tokex itself).
type serverCommand struct {
	Path string   // the program
	Args []string // before the server's flags (tokex itself: "engine")
	// Config is the server YAML; Env the whole environment (the default
	// clients' secret travels there, never in argv).
	Config      string
	Env         []string
	SysProcAttr *syscall.SysProcAttr
	// Stdout and Stderr receive each line the server prints.
	Stdout, Stderr func(line string)
	// Timeout bounds the wait for the ready report (default 15 s).
	Timeout time.Duration
}

// serverProcess is a started embedded server, from its parent's side.
type serverProcess struct {
	Ready   authserver.Ready
	cmd     *exec.Cmd
	exited  chan struct{}
	exitErr error
	mu      sync.Mutex
	last    string // the latest line on stderr
}

func (p *serverProcess) lastLine() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// startServer starts the embedded server and waits for its ready report. On any
// error the process is stopped; the error says how it ended when it did.
func startServer(ctx context.Context, c serverCommand) (*serverProcess, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	args := append(append([]string{}, c.Args...), "--config", c.Config, "--ready-fd", "3")
	cmd := exec.Command(c.Path, args...)
	cmd.Env, cmd.SysProcAttr, cmd.ExtraFiles = c.Env, c.SysProcAttr, []*os.File{w}
	p := &serverProcess{cmd: cmd, exited: make(chan struct{})}
	if err := p.start(c.Stdout, c.Stderr); err != nil {
		w.Close()
		return nil, fmt.Errorf("start %s: %w", c.Path, err)
	}
	w.Close() // the child holds the only write end: its exit is EOF
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	p.Ready, err = readReady(ctx, r, timeout)
	if err == nil && p.Ready.PID != cmd.Process.Pid {
		err = fmt.Errorf("the embedded server reports pid %d, tokex started %d: a wrapper must exec the server", p.Ready.PID, cmd.Process.Pid)
	}
	if err != nil {
		return nil, p.notReady(err)
	}
	return p, nil
}

// notReady stops a server that gave no valid ready report and says how it
// ended. A report cut short by the server's exit is waited for briefly, so
// that its exit status and last error line can be told.
func (p *serverProcess) notReady(err error) error {
	if errors.Is(err, authserver.ErrNoReport) {
		select {
		case <-p.exited:
		case <-time.After(2 * time.Second):
		}
	}
	select {
	case <-p.exited:
		if last := p.lastLine(); last != "" {
			return fmt.Errorf("the embedded server exited before it was ready (%v; last line: %.300q): %w", p.exitErr, last, err)
		}
		return fmt.Errorf("the embedded server exited before it was ready (%v): %w", p.exitErr, err)
	default:
		p.Stop(time.Second)
		return err
	}
}

// start runs the command with its output piped to the line handlers; the
// process is waited for once both pipes are drained.
func (p *serverProcess) start(stdout, stderr func(string)) error {
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

func readReady(ctx context.Context, r *os.File, timeout time.Duration) (authserver.Ready, error) {
	if err := r.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return authserver.Ready{}, err
	}
	stop := context.AfterFunc(ctx, func() { _ = r.SetReadDeadline(time.Now()) })
	defer stop()
	b, err := io.ReadAll(io.LimitReader(r, authserver.MaxReadyBytes+1))
	switch {
	case ctx.Err() != nil:
		return authserver.Ready{}, ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded):
		return authserver.Ready{}, fmt.Errorf("the embedded server was not ready within %s", timeout)
	case err != nil:
		return authserver.Ready{}, err
	}
	return authserver.ParseReady(b)
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

// PID is the server's process id.
func (p *serverProcess) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the server has ended.
func (p *serverProcess) Exited() <-chan struct{} { return p.exited }

// ExitErr is how the server ended, once Exited is closed.
func (p *serverProcess) ExitErr() error { return p.exitErr }

// Stop sends SIGTERM and, after grace, SIGKILL; it returns once the server
// has ended.
func (p *serverProcess) Stop(grace time.Duration) {
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
func (p *serverProcess) String() string {
	return p.cmd.Path + " (pid " + strconv.Itoa(p.PID()) + ")"
}
