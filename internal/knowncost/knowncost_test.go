package knowncost

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	RunIfServer()
	os.Exit(m.Run())
}

func post(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Post(url+"/as/token.oauth2", "application/x-www-form-urlencoded", strings.NewReader("grant_type=x"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return string(b)
}

func TestServerCountsItsWork(t *testing.T) {
	t.Parallel()
	s := &Server{Cost: time.Millisecond, Metrics: true}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	if _, ok := s.Window(0, time.Now().UnixMicro()); ok {
		t.Error("a window before any request")
	}
	s.Ready()
	if w, ok := s.Window(time.Now().UnixMicro(), time.Now().Add(time.Hour).UnixMicro()); ok {
		t.Errorf("a window after the last mark: %+v", w)
	}
	var start time.Time
	for i := range 20 {
		if b := post(t, ts.URL); !strings.Contains(b, `"issued_token_type"`) {
			t.Fatalf("response %s", b)
		}
		if i == 0 {
			start = time.Now()
		}
	}
	st := s.Stats()
	// getrusage lags the running thread by up to a tick (10 ms at HZ=100).
	if st.Requests != 20 || st.CostMs != 1 || st.BurnSeconds < 0.020 || st.CPUSeconds < st.BurnSeconds-0.010 {
		t.Errorf("stats %+v", st)
	}
	w, ok := s.Window(start.UnixMicro(), time.Now().UnixMicro())
	// The window opens after the first completion: 19 requests in it.
	if !ok || w.Requests != 19 || w.CPUSeconds <= 0 || w.BurnSeconds < 0.019 || w.BurnSeconds > w.CPUSeconds+0.020 {
		t.Errorf("window %+v %v", w, ok)
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"process_cpu_seconds_total ", "process_resident_memory_bytes ", "knowncost_requests_total 20"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestBurnSpendsItsCost: Burn spends its cost on the thread's CPU clock,
// as getrusage(RUSAGE_THREAD) counts it too, however busy the machine (the
// clock is the thread's CPU, not the wall's). getrusage lags the running
// thread by up to a scheduler tick (10 ms at HZ=100) at either end.
func TestBurnSpendsItsCost(t *testing.T) {
	t.Parallel()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const tick = 10 * time.Millisecond
	for _, d := range []time.Duration{0, time.Millisecond, 100 * time.Millisecond} {
		before := threadRusage(t)
		spent, _ := Burn(d)
		used := threadRusage(t) - before
		if spent < d || spent > d+2*time.Millisecond {
			t.Errorf("Burn(%s) spent %s", d, spent)
		}
		if used < spent-tick || used > spent+tick+2*time.Millisecond {
			t.Errorf("Burn(%s): the thread used %s, Burn says %s", d, used, spent)
		}
	}
}

func threadRusage(t *testing.T) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestProcessBehindWrappers starts the server bare, under Go wrapper
// processes and under a shell, and finds the serving process below.
func TestProcessBehindWrappers(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	for _, o := range []Options{{Cost: time.Millisecond}, {Cost: time.Millisecond, Wrap: 2}, {Cost: time.Millisecond, Shell: true}} {
		p, err := Start(context.Background(), exe, o)
		if err != nil {
			t.Fatal(err)
		}
		post(t, p.URL)
		st, err := p.Stats()
		if err != nil || st.Requests != 1 || st.Procs != 1 {
			t.Errorf("%+v: stats %+v %v", o, st, err)
		}
		wrapped := o.Wrap > 0 || o.Shell
		if (p.PID != p.ServerPID) != wrapped {
			t.Errorf("%+v: started %d, serving %d", o, p.PID, p.ServerPID)
		}
		p.Close()
		select {
		case <-p.Exited():
		default:
			t.Errorf("%+v: still running after Close", o)
		}
	}
}

// TestStallHoldsRequests: while the server stalls no request completes;
// they all complete once it ends.
func TestStallHoldsRequests(t *testing.T) {
	t.Parallel()
	s := &Server{Cost: time.Microsecond, StallEvery: time.Hour, StallFor: time.Hour}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	s.gate.Lock() // what Stall does every StallEvery
	done := make(chan error, 3)
	for range 3 {
		go func() {
			resp, err := http.Post(ts.URL+"/as/token.oauth2", "application/x-www-form-urlencoded", strings.NewReader("grant_type=x"))
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
	}
	time.Sleep(200 * time.Millisecond)
	if n := s.requests.Load(); n != 0 {
		t.Fatalf("%d requests completed during the stall", n)
	}
	s.gate.Unlock()
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if n := s.requests.Load(); n != 3 {
		t.Fatalf("%d requests after the stall, want 3", n)
	}
}
