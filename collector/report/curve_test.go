package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/compare"
	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/search"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// searched is a capacity search's summary: probes at 100, 200, 400 (broken)
// and 300/s, two rounds each, 2 CPU-ms per exchange on 0.1 fixed cores.
func searched(costMs float64) *summary.Summary {
	s := &summary.Summary{CampaignID: "c", Thresholds: stats.Thresholds{P95Ms: 10, SuccessRatio: 0.99}, Status: "done",
		Idle: &summary.Idle{Cores: 0.1, Method: "cumulative"}}
	var runs []*stats.Run
	for i, rate := range []float64{100, 200, 400, 300} {
		for round := 1; round <= 2; round++ {
			p95 := 2 + rate/100 + float64(round)/2
			if rate == 400 {
				p95 = 2000
			}
			cores := 0.1 + costMs*rate/1000
			runs = append(runs, &stats.Run{ID: fmt.Sprintf("%02d-p%d-r%d", 2*i+round-1, i+1, round), Index: 2*i + round - 1, Round: round,
				TargetRPS: rate, Status: stats.StatusDone, Requests: int64(rate * 10), OK: int64(rate * 10), SuccessRatio: 1,
				LatencyMs: stats.Latency{P50: p95 / 2, P95: p95, P99: p95 * 1.5}, MeasuredSeconds: 10, ThresholdsPassed: rate < 400,
				EngineCPU: &stats.CPU{AvgCores: cores, CPUMsPerExchange: cores * 1000 / rate, Exchanges: int64(rate * 10)}})
		}
	}
	summary.BuildSummary(s, runs, true)
	s.Capacity = &curve.Result{Status: curve.StatusFound, Capacity: 300, Upper: 400, Objective: curve.Objective{P95Ms: 10, P99Ms: 20, SuccessRatio: 0.99},
		Probes: []curve.Probe{{Rate: 100, Verdict: curve.Pass}, {Rate: 400, Verdict: curve.Broken, Broken: []string{"p95 2e+03 ms vs 10 ms"}}}}
	search.Project(s, 1000)
	return s
}

func TestCurveCharts(t *testing.T) {
	s := searched(2)
	if !s.Cost.Fit.OK() {
		t.Fatalf("fit: %s", s.Cost.Fit.Line())
	}
	ch := CurveCharts(Campaign{Name: "c", S: s, Classes: [4]string{"s5", "s1", "s3", "s2"}})
	if len(ch) != 2 {
		t.Fatalf("%d charts", len(ch))
	}
	lat, cores := string(ch[0]), string(ch[1])
	for _, want := range []string{"objective p95 &lt; 10 ms", "objective p99 &lt; 20 ms", "capacity ≥ 300/s, &lt; 400/s", "whisker", "line open"} {
		if !strings.Contains(lat, want) {
			t.Errorf("latency curve lacks %q", want)
		}
	}
	for _, want := range []string{"fit 2.000 CPU-ms/exchange", "at rest", "the engine at rest", "capacity ≥ 300/s"} {
		if !strings.Contains(cores, want) {
			t.Errorf("cores curve lacks %q", want)
		}
	}
	// One marker per run on the cores curve, plus the engine at rest.
	if n := strings.Count(cores, "<circle"); n != 8+1 {
		t.Errorf("%d markers on the cores curve, want 9", n)
	}
	// A poor fit draws no line.
	s.Cost.Fit.Poor = "non-linear"
	if c := string(CurveCharts(Campaign{Name: "c", S: s})[1]); strings.Contains(c, "fit ") {
		t.Error("a poor fit was drawn")
	}
	// Two campaigns overlay, each named in the legend.
	two := CurveCharts(Campaign{Name: "A", S: searched(2)}, Campaign{Name: "B", S: searched(3)})
	if !strings.Contains(string(two[1]), "A fit 2.000") || !strings.Contains(string(two[1]), "B fit 3.000") {
		t.Error("overlay lacks a campaign's fit")
	}
	// One stage, no search: no curve.
	one := &summary.Summary{Stages: s.Stages[:1]}
	if CurveCharts(Campaign{S: one}) != nil {
		t.Error("a curve of one stage")
	}
	if p := s.Projection; p == nil || p.Engines != 4 {
		t.Errorf("projection %+v, want 4 engines for 1000/s at 300/s each", p)
	}
}

func TestCompareOverlay(t *testing.T) {
	a, b := searched(2), searched(3)
	page, err := Compare(a, b, compare.Compare(a, b))
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	for _, want := range []string{"A fit 2.000", "B fit 3.000", "B − A &#43;1.000", "B costs more", `id="compare"`, "<style>"} {
		if !strings.Contains(s, want) {
			t.Errorf("comparison page lacks %q", want)
		}
	}
}

// TestCoresCurveDrawsABentCurve: when no single straight line holds, the
// cores chart draws each segment's line, named by its marginal cost, and
// no straight fit (issue 23).
func TestCoresCurveDrawsABentCurve(t *testing.T) {
	var runs []*stats.Run
	for round := 1; round <= 2; round++ {
		for i, rate := range []float64{5, 10, 20, 40} {
			cores := 0.024 * rate
			if rate > 10 {
				cores = 0.24 + 0.008*(rate-10)
			}
			cores *= 1 + 0.002*float64(round*2-3)*float64(i%2*2-1)
			runs = append(runs, &stats.Run{ID: fmt.Sprintf("%02d-r%d", 4*round+i, round), Index: 4*round + i, Round: round, TargetRPS: rate,
				Status: stats.StatusDone, Requests: int64(rate * 10), OK: int64(rate * 10), SuccessRatio: 1, MeasuredSeconds: 10, ThresholdsPassed: true,
				LatencyMs: stats.Latency{P50: 1, P95: 2, P99: 3}, EngineCPU: &stats.CPU{AvgCores: cores, CPUMsPerExchange: cores * 1000 / rate, Exchanges: int64(rate * 10)}})
		}
	}
	s := &summary.Summary{CampaignID: "c", Status: "done"}
	summary.BuildSummary(s, runs, true)
	if !s.Cost.Curve.Bent() {
		t.Fatalf("not bent: %+v", s.Cost.Curve)
	}
	cores := string(CurveCharts(Campaign{Name: "c", S: s, Classes: [4]string{"s5", "s1", "s3", "s2"}})[1])
	for _, want := range []string{"5–10/s: 24.0", "10–40/s: 8.0"} {
		if !strings.Contains(cores, want) {
			t.Errorf("the cores curve lacks %q", want)
		}
	}
	if strings.Contains(cores, "fit ") {
		t.Error("a bent curve drawn as one straight fit")
	}
}

// The cores chart draws the runs a capacity search left out of the fit
// apart, named, and the fit's line only over the runs it holds.
func TestCoresCurveDrawsTheCeilingApart(t *testing.T) {
	res := &curve.Result{Status: curve.StatusFound, Capacity: 40, Upper: 80}
	var runs []*stats.Run
	for i, rate := range []float64{20, 40, 80} {
		p := curve.Probe{Rate: rate, Verdict: curve.Pass}
		for round := 1; round <= 2; round++ {
			served, cores := rate, 0.02+0.02*rate*(1+0.001*float64(round))
			if rate == 80 {
				p.Verdict, served, cores = curve.Broken, 40, 1
			}
			id := fmt.Sprintf("%02d-r%d", 2*i+round, round)
			p.Rounds = append(p.Rounds, curve.Round{RunID: id})
			runs = append(runs, &stats.Run{ID: id, Index: 2*i + round, Round: round, TargetRPS: rate, Status: stats.StatusDone,
				Requests: int64(served * 10), OK: int64(served * 10), SuccessRatio: 1, MeasuredSeconds: 10, ThresholdsPassed: rate < 80,
				LatencyMs: stats.Latency{P50: 1, P95: 2, P99: 3}, EngineCPU: &stats.CPU{AvgCores: cores, CPUMsPerExchange: cores * 1000 / served, Exchanges: int64(served * 10)}})
		}
		res.Probes = append(res.Probes, p)
	}
	s := &summary.Summary{CampaignID: "c", Status: "done", Capacity: res}
	summary.BuildSummary(s, runs, true)
	ch := coresCurve([]Campaign{{Name: "c", S: s, Classes: [4]string{"s5", "s1", "s3", "s2"}}})
	var names []string
	for _, se := range ch.Series {
		names = append(names, fmt.Sprintf("%s (%d)", se.Name, len(se.Points)))
	}
	got := strings.Join(names, "; ")
	if !strings.Contains(got, "runs (4)") || !strings.Contains(got, "runs at the ceiling, left out of the fit (2)") || !strings.Contains(got, "fit 20.0") {
		t.Errorf("series: %s", got)
	}
}
