package knowncost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Options of a server process started by Start.
type Options struct {
	Addr    string        // listen address; default 127.0.0.1:0
	Cost    time.Duration // CPU per request; default 2ms
	Procs   int           // GOMAXPROCS; default 1
	Metrics bool          // serve /metrics
	Wrap    int           // Go wrapper processes above the server
	Shell   bool          // start it all under `/bin/sh -c` (a shell that stays the parent)
	// StallEvery and StallFor inject a periodic stall (see Server).
	StallEvery, StallFor time.Duration
	// CostLow, FallFrom and FallTo make the cost fall with the rate
	// (Profile{Cost, CostLow, FallFrom, FallTo}); RateWindow is the
	// server's window for its arrival rate (default 2 s).
	CostLow          time.Duration
	FallFrom, FallTo float64
	RateWindow       time.Duration
	// ReusePort listens with SO_REUSEPORT: servers started on one Addr
	// share its port (a fleet of engines).
	ReusePort bool
}

// Process is a running server process (or its outermost wrapper).
type Process struct {
	URL       string // http://127.0.0.1:port
	PID       int    // the process Start started: the outermost wrapper if any
	ServerPID int    // the process that serves and burns
	cmd       *exec.Cmd
	exited    chan struct{}
}

// Start runs exe (a binary whose main or TestMain calls RunIfServer) as a
// server in its own process group and waits for its URL.
func Start(ctx context.Context, exe string, o Options) (*Process, error) {
	args := []string{"-procs", strconv.Itoa(max(o.Procs, 1))}
	if o.Addr != "" {
		args = append(args, "-addr", o.Addr)
	}
	if o.Cost > 0 {
		args = append(args, "-cost", o.Cost.String())
	}
	if o.Metrics {
		args = append(args, "-metrics")
	}
	if o.Wrap > 0 {
		args = append(args, "-wrap", strconv.Itoa(o.Wrap))
	}
	if o.CostLow > 0 {
		args = append(args, "-cost-low", o.CostLow.String(), "-fall-from", strconv.FormatFloat(o.FallFrom, 'g', -1, 64),
			"-fall-to", strconv.FormatFloat(o.FallTo, 'g', -1, 64))
	}
	if o.ReusePort {
		args = append(args, "-reuseport")
	}
	if o.RateWindow > 0 {
		args = append(args, "-rate-window", o.RateWindow.String())
	}
	if o.StallEvery > 0 && o.StallFor > 0 {
		args = append(args, "-stall-every", o.StallEvery.String(), "-stall-for", o.StallFor.String())
	}
	var cmd *exec.Cmd
	if o.Shell {
		// Two commands, so the shell cannot exec the last one in its place.
		cmd = exec.Command("/bin/sh", append([]string{"-c", `"$0" "$@"; exit $?`, exe}, args...)...)
	} else {
		cmd = exec.Command(exe, args...)
	}
	cmd.Env = append(os.Environ(), envServer+"=1")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	line := make(chan string, 1)
	cmd.Stdout = &announce{line: line}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{PID: cmd.Process.Pid, cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	select {
	case l := <-line:
		p.URL, _, _ = strings.Cut(l, " ")
	case <-p.exited:
		return nil, errors.New("knowncost server exited at start")
	case <-time.After(30 * time.Second):
		p.Close()
		return nil, errors.New("knowncost server did not start within 30s")
	case <-ctx.Done():
		p.Close()
		return nil, ctx.Err()
	}
	st, err := p.Stats()
	if err != nil {
		p.Close()
		return nil, err
	}
	p.ServerPID = st.PID
	return p, nil
}

// announce watches the server's stdout for the line with its URL.
type announce struct {
	buf  []byte
	line chan string
}

func (a *announce) Write(b []byte) (int, error) {
	if a.line == nil {
		return len(b), nil
	}
	a.buf = append(a.buf, b...)
	for {
		i := bytes.IndexByte(a.buf, '\n')
		if i < 0 {
			break
		}
		l := string(a.buf[:i])
		a.buf = a.buf[i+1:]
		if rest, ok := strings.CutPrefix(l, listening); ok {
			a.line <- rest // buffered: the first and only announcement
			a.line, a.buf = nil, nil
			break
		}
	}
	if len(a.buf) > 1<<16 {
		a.buf = a.buf[:0]
	}
	return len(b), nil
}

// Stats asks the server for its own counters.
func (p *Process) Stats() (Stats, error) { return p.get("/stats") }

func (p *Process) get(path string) (Stats, error) {
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(p.URL + path)
	if err != nil {
		return Stats{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return Stats{}, fmt.Errorf("knowncost %s: %s: %s", path, resp.Status, bytes.TrimSpace(b))
	}
	var s Stats
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&s); err != nil {
		return Stats{}, fmt.Errorf("knowncost /stats: %w", err)
	}
	return s, nil
}

// Window asks for the server's own account of the interval (from, to].
func (p *Process) Window(from, to time.Time) (Stats, error) {
	return p.get(fmt.Sprintf("/stats/window?from_us=%d&to_us=%d", from.UnixMicro(), to.UnixMicro()))
}

// Exited is closed when the started process ends.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Close stops the process group it started (SIGTERM, SIGKILL after 5 s).
func (p *Process) Close() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = syscall.Kill(-p.PID, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-p.PID, syscall.SIGKILL)
		<-p.exited
	}
}

// StartForTest starts the running test binary (whose TestMain calls
// RunIfServer) as a server and stops it when t ends.
func StartForTest(t testing.TB, o Options) *Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(context.Background(), exe, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}
