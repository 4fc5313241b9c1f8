// Package knowncost is an HTTP server of known CPU cost per request, for
// tests of tokex's CPU figures: every POST burns a known amount of CPU (by
// the handler thread's own CPU clock) and answers like an RFC 8693 token
// endpoint (the amount is fixed, or falls with the rate the server measures
// itself serving: a Profile, -cost-low, -fall-from, -fall-to), GOMAXPROCS
// fixes the cores it can use (its capacity is about procs ÷ cost), and GET
// /stats reports the server's own getrusage CPU and request count (GET /stats/window: over an
// interval, read at the completions nearest its edges), so the truth a test
// compares with is measured, not assumed. It can expose Prometheus process metrics
// (/metrics, client_golang's process collector) and run behind wrapper
// processes (like `sh -c`, npm start or a java launcher), which do no work.
//
// Tests run it by re-executing their own binary: call RunIfServer first in
// TestMain, then Start.
package knowncost

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sys/unix"
)

// envServer marks a process (and its wrapped children) as the server.
const envServer = "TOKEX_KNOWNCOST_SERVER"

// listening prefixes the line that announces the URL on stdout.
const listening = "knowncost: listening on "

// Stats is GET /stats: the server's own account of its work.
type Stats struct {
	PID    int     `json:"pid"`
	Procs  int     `json:"procs"`   // GOMAXPROCS
	CostMs float64 `json:"cost_ms"` // CPU burnt per request (rate-dependent: up to FallFrom)
	// CostLowMs, FallFrom and FallTo are a rate-dependent cost (Profile):
	// the marginal cost falls from CostMs at FallFrom/s to CostLowMs at
	// FallTo/s. Zero: a fixed cost.
	CostLowMs float64 `json:"cost_low_ms,omitempty"`
	FallFrom  float64 `json:"fall_from,omitempty"`
	FallTo    float64 `json:"fall_to,omitempty"`
	// Rate is the arrival rate the server last measured (rate-dependent
	// cost only).
	Rate       float64 `json:"rate,omitempty"`
	Requests   int64   `json:"requests"`    // POSTs answered
	CPUSeconds float64 `json:"cpu_seconds"` // getrusage(RUSAGE_SELF) user+system, the whole process
	// BurnSeconds is the handlers' thread CPU inside Burn: the known part
	// of CPUSeconds.
	BurnSeconds float64 `json:"burn_seconds"`
}

// CPUPerRequest is the CPU-ms per request between two snapshots.
func CPUPerRequest(before, after Stats) float64 {
	n := after.Requests - before.Requests
	if n <= 0 {
		return 0
	}
	return (after.CPUSeconds - before.CPUSeconds) * 1000 / float64(n)
}

// BurnPerRequest is the CPU-ms per request inside Burn between two
// snapshots: the known cost, as measured.
func BurnPerRequest(before, after Stats) float64 {
	n := after.Requests - before.Requests
	if n <= 0 {
		return 0
	}
	return (after.BurnSeconds - before.BurnSeconds) * 1000 / float64(n)
}

// burnChunk is the SHA-256 rounds between two reads of the thread's clock
// (about 35 µs on a 2 GHz EPYC; the read, a system call, about 1 µs).
const burnChunk = 256

// Burn spends d of CPU on the calling goroutine: locked to its thread, it
// hashes until the thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID) has
// advanced by d, and returns what the clock advanced (d plus at most one
// chunk). A fixed number of hash rounds would not do: on a shared machine
// the CPU time of the same rounds drifts with what runs beside them (issue
// 13: 10.3–10.5 ms per request at 20–40/s, 9.4–9.8 ms at 60–95/s, for
// rounds calibrated to 10 ms), and a cost that falls with the rate reads as
// a lower marginal cost plus a fixed cost that is not there.
func Burn(d time.Duration) (spent time.Duration, sink byte) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var b [sha256.Size * 2]byte
	start := threadCPU()
	for spent < d {
		for range burnChunk {
			s := sha256.Sum256(b[:])
			copy(b[:], s[:])
		}
		spent = threadCPU() - start
	}
	return spent, b[0]
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// ProcessCPU is getrusage(RUSAGE_SELF): user+system CPU of every thread.
func ProcessCPU() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// Server is the handler; Cost is the CPU each POST burns, or with a Low
// cost the Profile{Cost, Low, FallFrom, FallTo} at the arrival rate the
// server measures over RateWindow (default 2 s).
type Server struct {
	Cost             time.Duration
	Low              time.Duration
	FallFrom, FallTo float64
	RateWindow       time.Duration
	Metrics          bool
	// Every StallEvery the server stops answering for StallFor (a
	// periodic stall: a GC pause, a connection-pool refresh).
	StallEvery, StallFor time.Duration
	gate                 sync.RWMutex
	requests             atomic.Int64
	burnt                atomic.Int64 // ns of thread CPU in Burn
	sink                 atomic.Uint32
	meter                rateMeter
	rate                 atomic.Uint64 // math.Float64bits of the last measured rate

	mu  sync.Mutex
	log []mark // ring of the latest completions
	n   int    // marks written
}

// mark is the server's state right after one request completed.
type mark struct {
	atUS     int64
	cpu      float64
	burnt    int64
	requests int64
}

// logSize bounds the completion log (8 MB): 17 minutes at 250 requests/s.
const logSize = 1 << 18

// response is a well-formed RFC 8693 success, as tokex classifies it.
var response = []byte(`{"access_token":"known-cost","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"N_A","expires_in":60}`)

// Handler serves POST (any path) with the burn, GET /stats and, if enabled,
// GET /metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Stats())
	})
	if s.Metrics {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "knowncost_requests_total", Help: "POST requests answered.",
		}, func() float64 { return float64(s.requests.Load()) }))
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	}
	// One burn per core at a time: a burning goroutine holds its thread, and
	// GOMAXPROCS goroutines preempted in turn would each hold one more.
	cores := make(chan struct{}, runtime.GOMAXPROCS(0))
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<16))
		cost := s.cost()
		s.gate.RLock()
		cores <- struct{}{}
		spent, b := Burn(cost)
		<-cores
		s.gate.RUnlock()
		s.burnt.Add(int64(spent))
		s.sink.Add(uint32(b))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(response)
		s.complete()
	})
	mux.HandleFunc("GET /stats/window", func(w http.ResponseWriter, r *http.Request) {
		from, err1 := strconv.ParseInt(r.FormValue("from_us"), 10, 64)
		to, err2 := strconv.ParseInt(r.FormValue("to_us"), 10, 64)
		st, ok := s.Window(from, to)
		if err1 != nil || err2 != nil || !ok {
			http.Error(w, "window not covered by the completion log", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})
	return mux
}

func (s *Server) complete() { s.mark(s.requests.Add(1)) }

// Profile is the server's cost against the rate.
func (s *Server) Profile() Profile {
	return Profile{High: s.Cost, Low: s.Low, From: s.FallFrom, To: s.FallTo}
}

// cost records an arrival and is what it burns: the profile's cost per
// request at the rate the server measures (Cost when fixed).
func (s *Server) cost() time.Duration {
	p := s.Profile()
	if p.Fixed() {
		return s.Cost
	}
	rate := s.meter.arrive(time.Now().UnixNano(), cmp.Or(s.RateWindow, 2*time.Second))
	s.rate.Store(math.Float64bits(rate))
	return p.PerRequest(rate)
}

// Stall runs the periodic stall until done is closed.
func (s *Server) Stall(done <-chan struct{}) {
	if s.StallEvery <= 0 || s.StallFor <= 0 {
		return
	}
	t := time.NewTicker(s.StallEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			s.gate.Lock()
			time.Sleep(s.StallFor)
			s.gate.Unlock()
		}
	}
}

// Ready marks the start of serving, so that a window opening before the
// first completion is covered.
func (s *Server) Ready() { s.mark(s.requests.Load()) }

func (s *Server) mark(n int64) {
	m := mark{atUS: time.Now().UnixMicro(), cpu: ProcessCPU(), burnt: s.burnt.Load(), requests: n}
	s.mu.Lock()
	if s.log == nil {
		s.log = make([]mark, logSize)
	}
	s.log[s.n%logSize] = m
	s.n++
	s.mu.Unlock()
}

// Window is the server's own account of (from, to] (unix µs): the requests
// it completed and its CPU, read at the completions (or Ready) nearest the
// edges.
func (s *Server) Window(fromUS, toUS int64) (Stats, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := max(0, s.n-logSize)
	at := func(i int) mark { return s.log[i%logSize] }
	// The last completion at or before t, as an index into the ring.
	find := func(t int64) int {
		lo, hi := first, s.n // invariant: marks before lo are ≤ t
		for lo < hi {
			mid := (lo + hi) / 2
			if at(mid).atUS <= t {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		return lo - 1
	}
	a, b := find(fromUS), find(toUS)
	if s.n == 0 || a < first || b <= a || toUS <= fromUS {
		return Stats{}, false
	}
	st := s.statsLocked()
	st.Requests = at(b).requests - at(a).requests
	st.CPUSeconds = at(b).cpu - at(a).cpu
	st.BurnSeconds = float64(at(b).burnt-at(a).burnt) / 1e9
	return st, true
}

// Stats snapshots the server's own counters.
func (s *Server) Stats() Stats {
	st := s.statsLocked()
	st.Requests, st.CPUSeconds = s.requests.Load(), ProcessCPU()
	st.BurnSeconds = float64(s.burnt.Load()) / 1e9
	return st
}

func (s *Server) statsLocked() Stats {
	st := Stats{PID: os.Getpid(), Procs: runtime.GOMAXPROCS(0), CostMs: float64(s.Cost) / 1e6}
	if !s.Profile().Fixed() {
		st.CostLowMs, st.FallFrom, st.FallTo = float64(s.Low)/1e6, s.FallFrom, s.FallTo
		st.Rate = math.Float64frombits(s.rate.Load())
	}
	return st
}

// RunIfServer runs the server and exits when this process was started as
// one by Start; call it first in TestMain.
func RunIfServer() {
	if os.Getenv(envServer) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
}

// Main is the server's command line: -addr, -cost, -procs,
// -metrics, -wrap N (run the server N wrapper processes deep).
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("knowncost", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	cost := fs.Duration("cost", 2*time.Millisecond, "CPU per request, by the handler thread's CPU clock")
	procs := fs.Int("procs", 1, "GOMAXPROCS: the cores the server may use")
	metrics := fs.Bool("metrics", false, "serve Prometheus process metrics at /metrics")
	wrap := fs.Int("wrap", 0, "start the server as a child this many processes deep")
	stallEvery := fs.Duration("stall-every", 0, "stop answering periodically, this often")
	stallFor := fs.Duration("stall-for", 0, "for this long")
	low := fs.Duration("cost-low", 0, "a rate-dependent cost: the marginal CPU per request above -fall-to (0: a fixed -cost)")
	from := fs.Float64("fall-from", 0, "requests/s up to which one more request costs -cost")
	to := fs.Float64("fall-to", 0, "requests/s from which one more request costs -cost-low")
	window := fs.Duration("rate-window", 2*time.Second, "the window over which the server measures its arrival rate")
	reuse := fs.Bool("reuseport", false, "listen with SO_REUSEPORT: several servers share -addr's port (the kernel spreads connections)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *wrap > 0 {
		return wrapChild(args, *wrap, stderr)
	}
	prof := Profile{High: *cost, Low: *low, From: *from, To: *to}
	if err := prof.Validate(); *procs < 1 || err != nil || *window <= 0 {
		fmt.Fprintln(stderr, "knowncost: -procs must be at least 1, -rate-window above 0 and the cost valid:", err)
		return 2
	}
	runtime.GOMAXPROCS(*procs)
	s := &Server{Cost: *cost, Low: *low, FallFrom: *from, FallTo: *to, RateWindow: *window, Metrics: *metrics, StallEvery: *stallEvery, StallFor: *stallFor}
	var lc net.ListenConfig
	if *reuse {
		lc.Control = reusePort
	}
	ln, err := lc.Listen(context.Background(), "tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "knowncost:", err)
		return 1
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		_ = srv.Close()
	}()
	s.Ready()
	stop := make(chan struct{})
	defer close(stop)
	go s.Stall(stop)
	fmt.Fprintf(stdout, "%shttp://%s (cost %s, procs %d, pid %d)\n", listening, ln.Addr(), s.Cost, *procs, os.Getpid())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "knowncost:", err)
		return 1
	}
	return 0
}

// wrapChild is a wrapper process that does no work itself: it starts the
// same command one level less deep, forwards SIGTERM/SIGINT and waits.
func wrapChild(args []string, depth int, stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "knowncost:", err)
		return 1
	}
	child := append(append([]string{}, args...), "-wrap", strconv.Itoa(depth-1)) // the last -wrap wins
	cmd := exec.Command(exe, child...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), envServer+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // no server outlives its wrapper
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "knowncost:", err)
		return 1
	}
	go func() {
		for s := range sig {
			_ = cmd.Process.Signal(s)
		}
	}()
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() >= 0 {
			return ee.ExitCode()
		}
		return 1
	}
	return 0
}

// reusePort sets SO_REUSEPORT before the socket binds.
func reusePort(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}); err != nil {
		return err
	}
	return serr
}
