package local_test

import (
	"testing"
	"time"

	"github.com/tokex-dev/tokex/internal/knowncost"
	"github.com/tokex-dev/tokex/internal/truth"
)

// TestTruthOverloadTwiceCapacity is issue 23 item 1's deliberate overload:
// a one-core server of known cost driven at twice its capacity by 10
// agents with 300 requests in flight each, with the default request
// timeout and unreachable_after (10 s each). Its backlog grows by its
// capacity every second, so the requests sent after about 10 s wait longer
// than the timeout while it answers the older ones at full speed. The first
// of them used to stop the campaign as "target unreachable" (exit 2). Now
// the run completes and fails its thresholds (exit 1); its errors are
// timeouts only, on established connections, and its CPU-ms per exchange
// is within 5 % of the server's own getrusage over the measured window.
func TestTruthOverloadTwiceCapacity(t *testing.T) {
	truth.Require(t)
	const cost = 10 * time.Millisecond // one core: capacity ≈ 100/s
	p := knowncost.StartForTest(t, knowncost.Options{Cost: cost, Procs: 1})
	c := knownCostCampaign(2*float64(time.Second/cost), p.URL, p.PID)
	c.Agents.Count, c.Agents.MaxInFlight = 10, 300
	c.Request.Timeout = 10 * time.Second // the defaults
	c.Target.UnreachableAfter = 10 * time.Second
	run, truthMs := measureKnownCost(t, p, c)
	t.Logf("%s: %d requests, %d ok, %d dropped, errors %v, thresholds passed %v, p95 %.0f ms",
		run.ID, run.Requests, run.OK, run.Dropped, run.Errors, run.ThresholdsPassed, run.LatencyMs.P95)
	if run.ThresholdsPassed {
		t.Errorf("a run at twice the server's capacity passed its thresholds")
	}
	timeouts := run.Errors["timeout"]
	if timeouts == 0 || len(run.Errors) != 1 || run.OK+timeouts != run.Requests {
		t.Errorf("errors %v, %d ok of %d: want timeouts only, some", run.Errors, run.OK, run.Requests)
	}
	for _, e := range run.TopErrors {
		for _, d := range e.Descriptions {
			t.Logf("%s: %q ×%d", e.Error, d.Text, d.Count)
		}
	}
	if run.EngineCPU == nil || truthMs <= 0 {
		t.Fatalf("engine cpu %+v, truth %v", run.EngineCPU, truthMs)
	}
	checkCPU(t, run, run.EngineCPU.CPUMsPerExchange, truthMs)
}
