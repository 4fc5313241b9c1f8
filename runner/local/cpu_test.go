package local_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/internal/knowncost"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/subject"
)

// knownCostCampaign drives one run at rate against a knowncost server
// through the local driver, sampling target.pid.
func knownCostCampaign(rate float64, url string, pid int) config.Campaign {
	c := config.Article()
	c.Name = "known-cost"
	c.Target.URL = url + "/as/token.oauth2"
	c.Target.PID = pid
	c.Stages = []float64{rate}
	c.Rounds = 1
	c.Warmup = time.Second
	c.Duration = 4 * time.Second
	c.Sanity.Enabled = false
	c.Agents.Count = 4
	c.Agents.MaxInFlight = 500 // room for the backlog: nothing is dropped
	c.Request.Timeout = time.Minute
	c.Subject.Alg = subject.ES256
	return c
}

// startKnownCost starts a one-core knowncost server (optionally behind
// wrappers) and stops it at the end of the test.
func startKnownCost(t *testing.T, o knowncost.Options) *knowncost.Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := knowncost.Start(context.Background(), exe, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// measureKnownCost runs the campaign and returns the reported run and the
// server's own CPU-ms per request over its measured window (getrusage at
// the server's completions nearest the window's edges). The cost of the
// same work drifts by 10 % and more on a shared machine, so the truth is
// taken over the same interval as the figure it checks; the whole run's
// average is logged beside it.
func measureKnownCost(t *testing.T, p *knowncost.Process, c config.Campaign) (*stats.Run, float64) {
	t.Helper()
	before, err := p.Stats()
	if err != nil {
		t.Fatal(err)
	}
	r := runCampaign(t, context.Background(), c, filepath.Join(t.TempDir(), "kc"), nil, nil, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	after, err := p.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.summary.Stages) != 1 || len(r.summary.Stages[0].Runs) != 1 {
		t.Fatalf("summary: %+v", r.summary)
	}
	run := r.summary.Stages[0].Runs[0]
	w, err := p.Window(run.MeasuredStart, run.MeasuredEnd)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server over the whole run: %d requests, %.3f CPU-ms each; over the measured window: %d requests",
		after.Requests-before.Requests, knowncost.CPUPerRequest(before, after), w.Requests)
	return run, knowncost.CPUPerRequest(knowncost.Stats{}, w)
}

// TestEngineCPUPerExchangeKnownCost checks CPU-ms per exchange against a
// server process whose cost per request is measured by the server itself:
// below its capacity and at twice it, where a backlog builds up and
// requests scheduled in the measured window are served after it (issue 16
// item 1: −50 % here before the fix).
func TestEngineCPUPerExchangeKnownCost(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a server process for ~20 s")
	}
	const cost = 4 * time.Millisecond // one core: capacity ≈ 250/s
	p := startKnownCost(t, knowncost.Options{Cost: cost, Procs: 1})
	capacity := float64(time.Second / cost)
	for _, tc := range []struct {
		name   string
		factor float64
	}{
		{"below capacity", 0.4},
		{"twice capacity", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, truth := measureKnownCost(t, p, knownCostCampaign(tc.factor*capacity, p.URL, p.PID))
			if run.EngineCPU == nil || truth <= 0 {
				t.Fatalf("engine cpu %+v, truth %v", run.EngineCPU, truth)
			}
			got := run.EngineCPU.CPUMsPerExchange
			t.Logf("%s: %.0f/s, server's own CPU per request %.3f ms, reported %.3f ms (%+.1f %%), %s",
				tc.name, tc.factor*capacity, truth, got, (got/truth-1)*100, run.EngineCPU.Method)
			if tc.factor > 1 && float64(run.EngineCPU.Exchanges) > 0.75*float64(run.Requests) {
				t.Errorf("the server kept up (%d responses in the window for %d arrivals): not an overload", run.EngineCPU.Exchanges, run.Requests)
			}
			if math.Abs(got/truth-1) > 0.05 {
				t.Errorf("CPU per exchange %.3f ms, the server's own figure %.3f ms: off by more than 5 %%", got, truth)
			}
		})
	}
}
