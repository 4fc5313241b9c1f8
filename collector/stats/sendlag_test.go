package stats

import (
	"strings"
	"testing"
	"time"
)

// A k6 agent mints the subject token inside the iteration: 3–4 ms of its
// send lag is RS256 signing, not lateness. The late rule judges k6's start
// lag when the driver splits the send lag; without the split it judges the
// whole send lag (the local driver, whose tokens are minted ahead).
func TestLateRuleJudgesStartLagOfK6Agents(t *testing.T) {
	t.Parallel()
	start := time.Unix(1796064361, 0)
	m := RunMeta{ID: "r", TargetRPS: 500, Agents: 10, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(10 * time.Second), Status: StatusDone}
	var rows []Request
	for i := 0; i < 1000; i++ {
		rows = append(rows, Request{Phase: Measured, ScheduledUS: start.UnixMicro() + int64(i)*10000, SendLagUS: 4000 + int64(i%3)*1000,
			DurationUS: 9000, Status: 200, Outcome: "ok"})
	}
	late := func(r *Run) string {
		for _, w := range r.Warnings {
			if w.Code == WarnGeneratorLate {
				return w.Detail
			}
		}
		return ""
	}
	// Send lag p99 6 ms > the 5 ms floor at 500/s: late, for the local driver.
	if d := late(ComputeRun(m, rows, nil, Thresholds{P95Ms: 500, SuccessRatio: 0.99})); !strings.HasPrefix(d, "send lag p99 6.0 ms exceeds 5.0 ms") {
		t.Errorf("without the split: %q", d)
	}
	// The same rows from k6 agents: start lag p99 2 ms, minting 3 ms.
	m.SendLagParts = &SendLagParts{StartLagMs: Latency{Count: 1000, P50: 1, P99: 2}, MintMs: Latency{Count: 1000, P50: 3, P99: 4}, ClockResolutionMs: 1}
	r := ComputeRun(m, rows, nil, Thresholds{P95Ms: 500, SuccessRatio: 0.99})
	if d := late(r); d != "" {
		t.Errorf("k6 agents with 2 ms start lag flagged late: %q", d)
	}
	if r.SendLagParts == nil || r.SendLagParts.MintMs.P50 != 3 {
		t.Errorf("parts not carried into the run: %+v", r.SendLagParts)
	}
	// A k6 agent that starts iterations late is still judged late.
	m.SendLagParts.StartLagMs.P99 = 12
	if d := late(ComputeRun(m, rows, nil, Thresholds{})); !strings.HasPrefix(d, "k6 start lag p99 (minting excluded) 12.0 ms exceeds 5.0 ms") {
		t.Errorf("late k6 agent: %q", d)
	}
}
