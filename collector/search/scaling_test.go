package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// scaledRuns are two rounds at 50 and 100/s of one engine burning
// 0.1 cores + 5 CPU-ms an exchange and of two burning 0.2 + 5.5.
func scaledRuns(replicas func(n int) int) []*stats.Run {
	run := func(n int, rate float64, round int, fixed, cpuMs float64) *stats.Run {
		cores, ex := fixed+cpuMs*rate/1000, int64(rate*10)
		return &stats.Run{ID: fmt.Sprintf("n%d-r%d-%g", n, round, rate), Replicas: replicas(n), TargetRPS: rate, Round: round,
			Status: stats.StatusDone, ThresholdsPassed: true, Requests: ex, OK: ex, Responses: ex, AchievedRPS: rate,
			MeasuredSeconds: 10, LatencyMs: stats.Latency{P95: 5 + rate/100},
			EngineCPU: &stats.CPU{AvgCores: cores, Exchanges: ex, CPUMsPerExchange: cores * 1000 / rate, Method: "cumulative"}}
	}
	var runs []*stats.Run
	for round := 1; round <= 2; round++ {
		for _, rate := range []float64{50, 100} {
			runs = append(runs, run(1, rate, round, 0.1, 5))
			if replicas(2) > 0 {
				runs = append(runs, run(2, rate, round, 0.2, 5.5))
			}
		}
	}
	return runs
}

// TestProjectionUsesMeasuredEfficiency (issue 28 item 2): the engines a
// rate needs come from the measured efficiency, held beyond the largest
// count, instead of assuming 1.
func TestProjectionUsesMeasuredEfficiency(t *testing.T) {
	capa := &curve.Result{Capacity: 100, Upper: 110, Objective: curve.Objective{P95Ms: 500}}
	s := &summary.Summary{Thresholds: stats.Thresholds{P95Ms: 500}, Capacities: map[int]*curve.Result{
		1: capa, 2: {Capacity: 180, Upper: 200}}}
	summary.BuildSummary(s, scaledRuns(func(n int) int { return n }), true)
	Project(s, 1000)
	p := s.Projection
	if p == nil || p.Engines != 12 || p.ScalingEfficiency != 0.9 {
		t.Fatalf("projection %+v", p)
	}
	if !strings.Contains(strings.Join(p.Assumptions, "; "), "measured efficiency (1: 1.00, 2: 0.90") || !strings.Contains(p.Line, "at the measured scaling efficiency 0.90") {
		t.Errorf("assumptions %q line %q", p.Assumptions, p.Line)
	}
	// Without the counts the same capacity assumes even scaling: 10.
	one := &summary.Summary{Thresholds: s.Thresholds, Capacity: capa}
	summary.BuildSummary(one, scaledRuns(func(int) int { return 0 }), true)
	Project(one, 1000)
	if one.Projection == nil || one.Projection.Engines != 10 || one.Projection.ScalingEfficiency != 0 {
		t.Errorf("even scaling: %+v", one.Projection)
	}
}

// TestReplays: a campaign over engine counts replays one search per count
// over that count's runs; a campaign without counts one over all.
func TestReplays(t *testing.T) {
	spec := Spec{Policy: curve.Policy{Start: 50, Factor: 2, Resolution: 0.05, Rounds: 2, MaxProbes: 4, Max: 100},
		Objective: curve.Objective{P95Ms: 500, SuccessRatio: 0.99}, Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}}
	one, by := Replays(spec, scaledRuns(func(n int) int { return n }))
	if one != nil || len(by) != 2 || by[1] == nil || by[2] == nil || by[1].Capacity != by[2].Capacity {
		t.Fatalf("per count: %+v %+v", one, by)
	}
	one, by = Replays(spec, scaledRuns(func(int) int { return 0 }))
	if one == nil || by != nil {
		t.Fatalf("without counts: %+v %+v", one, by)
	}
}
