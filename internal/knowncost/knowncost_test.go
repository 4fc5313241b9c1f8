package knowncost

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
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
	s := &Server{Work: Calibrate(time.Millisecond), Metrics: true}
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
	if st.Requests != 20 || st.CPUSeconds <= 0 || st.Work != s.Work {
		t.Errorf("stats %+v", st)
	}
	w, ok := s.Window(start.UnixMicro(), time.Now().UnixMicro())
	// The window opens after the first completion: 19 requests in it.
	if !ok || w.Requests != 19 || w.CPUSeconds <= 0 {
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

func TestCalibrateScales(t *testing.T) {
	a, b := Calibrate(time.Millisecond), Calibrate(4*time.Millisecond)
	if a < 1 || b < 2*a { // 4× the time, at least twice the rounds however noisy
		t.Errorf("rounds for 1ms %d, for 4ms %d", a, b)
	}
}

// TestProcessBehindWrappers starts the server bare, under Go wrapper
// processes and under a shell, and finds the serving process below.
func TestProcessBehindWrappers(t *testing.T) {
	exe, _ := os.Executable()
	for _, o := range []Options{{Work: 10}, {Work: 10, Wrap: 2}, {Work: 10, Shell: true}} {
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
	s := &Server{Work: 1, StallEvery: time.Hour, StallFor: time.Hour}
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
