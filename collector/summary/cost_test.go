package summary

import (
	"math"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
)

// probeRun is a capacity-search round at rate that served served/s on
// cores engine cores over 10 s.
func probeRun(id string, rate, served, cores float64) *stats.Run {
	ex := int64(served * 10)
	return &stats.Run{ID: id, TargetRPS: rate, Status: stats.StatusDone, Requests: ex, OK: ex, Responses: ex,
		AchievedRPS: served, MeasuredSeconds: 10,
		EngineCPU: &stats.CPU{AvgCores: cores, Exchanges: ex, CPUMsPerExchange: cores * 1000 / served, Method: "cumulative"}}
}

// TestCostFitLeavesOutTheCeiling: a server of constant cost (20 CPU-ms
// per exchange, 0.02 cores at rest) searched 20 → 40 → 80/s. At 80/s it
// broke the objective: its one core was full and it served 40/s, part of
// its work abandoned by the client. That point measures the ceiling; in
// the fit it bent the curve at the capacity (TestTruthCapacityKnownCost's
// skipped fit). It is left out and named, and the fit is the server's.
func TestCostFitLeavesOutTheCeiling(t *testing.T) {
	line := func(rate float64) float64 { return 0.02 + 0.020*rate }
	var runs []*stats.Run
	res := &curve.Result{Status: curve.StatusFound, Capacity: 40, Upper: 80}
	for _, rate := range []float64{20, 40, 80} {
		p := curve.Probe{Rate: rate, Verdict: curve.Pass}
		for _, id := range []string{"a", "b"} {
			id := curve.RateLabel(rate) + id
			r := probeRun(id, rate, rate, line(rate))
			if rate == 80 {
				p.Verdict, p.Broken = curve.Broken, []string{"p95 412 ms ≥ 200 ms"}
				r = probeRun(id, rate, 40, 1.0)
			}
			runs = append(runs, r)
			p.Rounds = append(p.Rounds, curve.Round{RunID: id})
		}
		res.Probes = append(res.Probes, p)
	}
	if f, _ := CostCurve(runs); f.OK() && math.Abs(f.MarginalCPUMs-20) < 0.5 {
		t.Fatalf("the test's ceiling does not disturb a fit of every run: %+v", f)
	}
	s := &Summary{Capacity: res}
	BuildSummary(s, runs, true)
	c := s.Cost
	if c == nil || !c.Fit.OK() || math.Abs(c.Fit.MarginalCPUMs-20) > 1e-6 || math.Abs(c.Fit.FixedCores-0.02) > 1e-6 {
		t.Fatalf("fit %+v, want 20 CPU-ms per exchange and 0.02 cores", c)
	}
	if c.Curve.Bent() {
		t.Errorf("curve bent without the ceiling: %s", c.Curve.Line())
	}
	if len(c.LeftOut) != 2 || c.LeftOut[0].Run != "80/sa" || c.LeftOut[0].TargetRPS != 80 || !strings.Contains(c.LeftOut[0].Reason, "p95 412 ms") {
		t.Errorf("left out %+v", c.LeftOut)
	}
	// A campaign without a search leaves every run in.
	s = &Summary{}
	BuildSummary(s, runs, true)
	if len(s.Cost.LeftOut) != 0 || (s.Cost.Fit.OK() && math.Abs(s.Cost.Fit.MarginalCPUMs-20) < 0.5 && !s.Cost.Curve.Bent()) {
		t.Errorf("without a search: left out %+v, fit %+v", s.Cost.LeftOut, s.Cost.Fit)
	}
}
