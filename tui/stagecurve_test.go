package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// costed is a summary of two rounds at each rate of an engine using
// cores(rate), measured 10 s a run.
func costed(cores func(float64) float64, rates ...float64) *summary.Summary {
	var runs []*stats.Run
	for round := 1; round <= 2; round++ {
		for i, r := range rates {
			c := cores(r) * (1 + 0.002*float64(round*2-3)*float64(i%2*2-1))
			n := int64(r * 10)
			runs = append(runs, &stats.Run{ID: fmt.Sprintf("r%d-%g", round, r), Round: round, TargetRPS: r, Status: stats.StatusDone,
				Requests: n, OK: n, SuccessRatio: 1, MeasuredSeconds: 10, LatencyMs: stats.Latency{P50: 1, P95: 2, P99: 3}, ThresholdsPassed: true,
				EngineCPU: &stats.CPU{AvgCores: c, CPUMsPerExchange: c * 1000 / r, Exchanges: n}})
		}
	}
	s := &summary.Summary{Status: summary.CampaignDone}
	summary.BuildSummary(s, runs, true)
	return s
}

// TestStageCurveShowsTheMarginalCost: below the stages, when a row is free,
// the stage curve gives the straight line's marginal cost, or the cost
// curve's segments when the cost falls with the rate (issue 23).
func TestStageCurveShowsTheMarginalCost(t *testing.T) {
	falling := func(r float64) float64 {
		if r <= 10 {
			return 0.024 * r
		}
		return 0.24 + 0.008*(r-10)
	}
	for _, tc := range []struct {
		name string
		s    *summary.Summary
		want string
	}{
		{"straight", costed(func(r float64) float64 { return 0.01 + 0.0025*r }, 100, 250, 500), "marginal 2.500 CPU-ms/ex (95% CI 2.4"},
		{"falling", costed(falling, 5, 10, 20, 40), "marginal CPU-ms/ex falls: 24 over 5–10/s · 8 over 10–40/s"},
	} {
		c := newStageCurve(&common{camp: &campaign{summary: tc.s}, styles: DefaultStyles()})
		c.SetSize(100, 12)
		out := ansi.Strip(c.View())
		if !strings.Contains(out, tc.want) {
			t.Errorf("%s: the stage curve lacks %q:\n%s", tc.name, tc.want, out)
		}
		c.SetSize(100, len(tc.s.Stages)+1)
		if tight := ansi.Strip(c.View()); strings.Contains(tight, "marginal") {
			t.Errorf("%s: no free row, yet:\n%s", tc.name, tight)
		}
	}
}

// Per stage the rounds' p95 spread with the reported run's ● on a scale
// shared by every stage, and the CPU-ms per exchange; stages that do not
// fit are counted; a capacity search draws its probes instead.
func TestStageCurveRows(t *testing.T) {
	c := newStageCurve(&common{camp: &campaign{summary: costed(func(r float64) float64 { return 0.0025 * r }, 100, 200, 400, 800)}, styles: DefaultStyles()})
	lines := sized(t, c, 80, 8)
	if !strings.HasPrefix(lines[0], "p95 ms per stage") || !strings.HasPrefix(lines[1], "100/s") || !strings.HasPrefix(lines[4], "800/s") {
		t.Fatalf("stages:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines[1:5] {
		if strings.Count(l, "●") != 1 || !strings.Contains(l, "2.50") {
			t.Errorf("row %q", l)
		}
	}
	c.focused = true
	if lines = sized(t, c, 80, 3); !strings.HasPrefix(lines[0], "▸ p95") || lines[2] != fit("… 3 more stages in the table below", 80, 1) {
		t.Errorf("short:\n%s", strings.Join(lines, "\n"))
	}
	if lines = sized(t, newStageCurve(fed(searchAfter(searchScript(), 4))), 60, 10); !strings.HasPrefix(lines[0], "capacity ≥ 200/s, < 400/s") ||
		row(lines, "#4    400/s ✗ broken") == "" {
		t.Errorf("search:\n%s", strings.Join(lines, "\n"))
	}
	if got := rangeBar(2, 6, 4, 8, 9); got != "  ├─●─┤  " {
		t.Errorf("rangeBar %q", got)
	}
}
