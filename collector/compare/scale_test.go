package compare

import (
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// scaledStage is a stage of n engines at 100/s whose rounds' p95 are given.
func scaledStage(n int, p95s ...float64) *summary.Stage {
	st := &summary.Stage{TargetRPS: 100, Replicas: n, ThresholdsPassed: true}
	for i, p := range p95s {
		r := &stats.Run{ID: strings.Repeat("r", i+1), Round: i + 1, Replicas: n, TargetRPS: 100, Status: stats.StatusDone, Requests: 100, OK: 100,
			SuccessRatio: 1, ThresholdsPassed: true, LatencyMs: stats.Latency{P50: p / 2, P95: p, P99: 2 * p}}
		st.Runs = append(st.Runs, r)
	}
	st.ReportedRun = summary.MedianRun(st.Runs)
	return st
}

// TestCompareMatchesEngineCounts (issue 28): two campaigns over engine
// counts compare count by count, never one count's stage with another's,
// and the gate names the count.
func TestCompareMatchesEngineCounts(t *testing.T) {
	a := &summary.Summary{CampaignID: "a", Stages: []*summary.Stage{scaledStage(1, 10, 10.2), scaledStage(2, 20, 20.2)}}
	b := &summary.Summary{CampaignID: "b", Stages: []*summary.Stage{scaledStage(1, 10, 10.2), scaledStage(2, 30, 30.2)}}
	r := Compare(a, b)
	if len(r.Stages) != 2 || r.Stages[0].Replicas != 1 || r.Stages[1].Replicas != 2 {
		t.Fatalf("stages %+v", r.Stages)
	}
	if m := r.Stages[0].Metrics[1]; m.Name != "p95" || m.Diff != 0 {
		t.Errorf("1 engine's p95 compared with another count's: %+v", m)
	}
	regs := r.Regressions()
	if len(regs) == 0 || !strings.HasPrefix(regs[0].String(), "100/s, 2 engines p95") {
		t.Errorf("regressions %v", regs)
	}
	if !strings.Contains(r.Text(), "100/s, 2 engines") {
		t.Errorf("table:\n%s", r.Text())
	}
}
