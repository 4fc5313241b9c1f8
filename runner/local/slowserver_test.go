package local_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/runner/local/localtest"
)

// holdServer is a live server that answers every exchange at once but the
// every-th, which it holds until the client gives up (or a minute): a
// server with occasional requests far slower than the timeout, or, with
// every 1, one that accepts connections but answers none in time. It
// counts what it did.
type holdServer struct {
	url              string
	answered, held   atomic.Int64
	requests, accept atomic.Int64
}

func newHoldServer(t *testing.T, every int64) *holdServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &holdServer{url: "http://" + ln.Addr().String() + "/as/token.oauth2"}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if s.requests.Add(1)%every == 0 {
			s.held.Add(1)
			select { // the client closes the connection at its timeout
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"at","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer"}`))
		s.answered.Add(1)
	}), ReadHeaderTimeout: 5 * time.Second, ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.accept.Add(1)
		}
	}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// TestCampaignCompletesWhenTheServerHoldsSomeRequests is issue 23 item 1:
// a server that holds every N-th request past the timeout while it answers
// the others at once is alive. The campaign used to stop as "target
// unreachable" (exit 2) as soon as the first held request timed out, its
// send time taken as the last sign of life. Now it completes (exit 0 or 1),
// every held request a timeout, every other one a success, as the server
// counted them, and the timeouts say the connection was established.
func TestCampaignCompletesWhenTheServerHoldsSomeRequests(t *testing.T) {
	for _, every := range []int64{3, 10, 37} {
		t.Run(fmt.Sprintf("1 in %d held", every), func(t *testing.T) {
			t.Parallel()
			s := newHoldServer(t, every)
			c := tinyCampaign()
			c.Target.URL = s.url
			c.Stages, c.Rounds = []float64{40}, 1
			c.Duration, c.Warmup = 2*time.Second, 0
			c.Sanity.Enabled = false
			c.Request.Timeout = time.Second
			c.Target.UnreachableAfter = time.Second // the timeout: the first held request stopped it
			c.Thresholds.P95Ms = float64(c.Request.Timeout / time.Millisecond)
			r := runCampaign(t, context.Background(), c, filepath.Join(t.TempDir(), "hold"), nil, nil, nil)
			if r.err != nil || r.summary.Status != summary.CampaignDone {
				t.Fatalf("the campaign did not complete (exit 2): %v", r.err)
			}
			run := r.summary.Stages[0].Runs[0]
			held, answered := s.held.Load(), s.answered.Load()
			t.Logf("server: %d answered, %d held; tokex: %d requests, %d ok, errors %v, thresholds passed %v",
				answered, held, run.Requests, run.OK, run.Errors, run.ThresholdsPassed)
			if busy := dialTimeouts(run); busy > 0 {
				t.Skipf("the machine is too busy to judge: %d requests could not connect within the 1 s timeout, so the server never saw them", busy)
			}
			if run.Status != stats.StatusDone || run.Requests != held+answered || run.OK != answered ||
				len(run.Errors) != 1 || run.Errors["timeout"] != held || held == 0 {
				t.Errorf("run %s: %d requests, %d ok, errors %v; the server answered %d and held %d",
					run.Status, run.Requests, run.OK, run.Errors, answered, held)
			}
			if run.ThresholdsPassed { // success 1 - 1/N < 99 %: exit 1
				t.Errorf("thresholds passed at %.2f %% success", run.SuccessRatio*100)
			}
			for _, e := range run.TopErrors {
				for _, d := range e.Descriptions {
					if !strings.Contains(d.Text, "on an established connection") {
						t.Errorf("a timeout of a request the server accepted is described as %q", d.Text)
					}
				}
			}
		})
	}
}

// dialTimeouts counts the run's timeouts whose connection was never made:
// requests a starved host did not connect within the timeout.
func dialTimeouts(run *stats.Run) int64 {
	var n int64
	for _, e := range run.TopErrors {
		for _, d := range e.Descriptions {
			if strings.HasPrefix(d.Text, "dial ") {
				n += d.Count
			}
		}
	}
	return n
}

// TestSanityRunOfAServerHoldingSomeRequests: with the sanity run on, as a
// user runs it, a server that holds one request in 37 past the timeout
// passes the sanity run (it answers, it refuses nothing) and the campaign
// completes; its counted run fails the success threshold.
func TestSanityRunOfAServerHoldingSomeRequests(t *testing.T) {
	t.Parallel()
	s := newHoldServer(t, 37)
	c := tinyCampaign()
	c.Target.URL = s.url
	c.Stages, c.Rounds = []float64{80}, 1
	c.Duration, c.Warmup = time.Second, 0
	c.Sanity.Enabled, c.Sanity.Rate, c.Sanity.Duration = true, 80, time.Second
	c.Request.Timeout = time.Second
	c.Target.UnreachableAfter = time.Second
	c.Thresholds.P95Ms = float64(c.Request.Timeout / time.Millisecond)
	r := runCampaign(t, context.Background(), c, filepath.Join(t.TempDir(), "hold"), nil, nil, nil)
	if r.err != nil || r.summary.Status != summary.CampaignDone {
		t.Fatalf("the campaign did not complete: %v", r.err)
	}
	if n := len(r.summary.Stages); n != 1 || len(r.summary.Stages[0].Runs) != 1 {
		t.Fatalf("%d stages: the counted run did not run", n)
	}
	if run := r.summary.Stages[0].Runs[0]; run.Errors["timeout"] == 0 || run.ThresholdsPassed {
		t.Errorf("counted run: errors %v, thresholds passed %v", run.Errors, run.ThresholdsPassed)
	}
}

// TestCapacityProbeOfAServerSlowerThanTheTimeout: a server that accepts
// every connection but answers no request within the timeout is
// overloaded, not dead: each probe of a capacity search reads it as broken
// and the search ends without a capacity, where the first timed-out
// request used to stop the campaign as "target unreachable".
func TestCapacityProbeOfAServerSlowerThanTheTimeout(t *testing.T) {
	t.Parallel()
	s := newHoldServer(t, 1)
	c := tinyCampaign()
	c.Target.URL = s.url
	c.Sanity.Enabled = false
	c.Duration, c.Warmup = time.Second, 0
	c.Request.Timeout = 500 * time.Millisecond
	c.Target.UnreachableAfter = time.Second
	c.Capacity.Start, c.Capacity.Min, c.Capacity.Factor = 20, 10, 2
	c.Capacity.Rounds, c.Capacity.MaxProbes, c.Capacity.CoolDown = 1, 2, 100*time.Millisecond
	res := localtest.Run(t, context.Background(), c, filepath.Join(t.TempDir(), "search"), localtest.Options{Search: true})
	if res.Err != nil || res.Summary.Status != summary.CampaignDone {
		t.Fatalf("the search stopped (exit 2): %v", res.Err)
	}
	k := res.Summary.Capacity
	if k == nil || len(k.Probes) == 0 {
		t.Fatalf("no probe: %+v", k)
	}
	for _, p := range k.Probes {
		if p.Verdict != curve.Broken {
			t.Errorf("probe at %g/s: %s (%s)", p.Rate, p.Verdict, p.Reason)
		}
	}
	var probes int
	for _, st := range res.Summary.Stages {
		for _, run := range st.Runs {
			probes++
			if run.Status != stats.StatusDone || run.OK != 0 || run.Errors["timeout"] != run.Requests || run.Requests == 0 {
				t.Errorf("probe run %s: %s, %d requests, %d ok, errors %v", run.ID, run.Status, run.Requests, run.OK, run.Errors)
			}
		}
	}
	t.Logf("%d probe runs; the server accepted %d connections and held %d requests; capacity %s", probes, s.accept.Load(), s.held.Load(), k.Bracket())
}
