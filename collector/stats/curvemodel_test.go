package stats

import (
	"testing"

	"github.com/tokex-dev/tokex/collector/curve"
)

func TestCurveModel(t *testing.T) {
	var m CurveModel
	run := func(id string, rate float64, passed bool) *Run {
		cores := 0.1 + 2*rate/1000
		return &Run{ID: id, TargetRPS: rate, Status: StatusDone, ThresholdsPassed: passed, MeasuredSeconds: 10,
			LatencyMs: Latency{P50: 1, P95: rate / 100, P99: rate / 50},
			EngineCPU: &CPU{CPUMsPerExchange: cores * 1000 / rate, Exchanges: int64(rate * 10)}}
	}
	m.AddRun(run("b", 200, true))
	m.AddRun(run("a", 100, true))
	m.AddRun(&Run{ID: "s", Sanity: true, Status: StatusDone})
	m.AddRun(&Run{ID: "x", Status: StatusAborted})
	if m.Fit() == nil || m.Fit().OK() {
		t.Errorf("two runs: fit %+v, want poor", m.Fit())
	}
	m.AddRun(run("c", 400, false))
	m.AddRun(run("c", 400, false)) // a replayed event: once
	pts := m.Points()
	if len(pts) != 3 || pts[0].Run != "a" || pts[2].P95 != 4 || !pts[2].Broken || pts[1].Rate != 200 {
		t.Fatalf("points %+v", pts)
	}
	if f := m.Fit(); !f.OK() || f.MarginalCPUMs < 1.999 || f.MarginalCPUMs > 2.001 {
		t.Errorf("fit %s", f.Line())
	}
	if m.Bracket() != "" {
		t.Error("a bracket without a search")
	}
	m.SetSearch(curve.Result{Capacity: 200, Upper: 400}, 300)
	if r, next := m.Search(); m.Bracket() != "≥ 200/s, < 400/s" || next != 300 || r == nil {
		t.Errorf("search %q next %v", m.Bracket(), next)
	}
}
