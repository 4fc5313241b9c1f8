package doc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// scaledSummary is a campaign over engine counts 1 and 2 at 50 and 100/s,
// two rounds each, with both counts' capacities searched.
func scaledSummary() *summary.Summary {
	var runs []*stats.Run
	for round := 1; round <= 2; round++ {
		for _, rate := range []float64{50, 100} {
			for n, cpuMs := range map[int]float64{1: 5, 2: 5.5} {
				cores := 0.1*float64(n) + cpuMs*rate/1000
				ex := int64(rate * 10)
				r := &stats.Run{ID: fmt.Sprintf("n%d-r%d-%g", n, round, rate), Replicas: n, TargetRPS: rate, Round: round, Status: stats.StatusDone,
					ThresholdsPassed: true, Requests: ex, OK: ex, Responses: ex, AchievedRPS: rate, MeasuredSeconds: 10, LatencyMs: stats.Latency{P95: 5},
					EngineCPU: &stats.CPU{AvgCores: cores, Exchanges: ex, CPUMsPerExchange: cores * 1000 / rate, Method: "cumulative"}}
				if n == 2 {
					r.EngineBalance = 1.2
				}
				runs = append(runs, r)
			}
		}
	}
	s := &summary.Summary{Thresholds: stats.Thresholds{P95Ms: 500}, Capacities: map[int]*curve.Result{
		1: {Capacity: 100, Upper: 110}, 2: {Capacity: 180, Upper: 200}}}
	summary.BuildSummary(s, runs, true)
	return s
}

// TestScalingWords (issue 28 item 2): each count's line, the cost lines
// naming the count they describe, and the dashboard's one line.
func TestScalingWords(t *testing.T) {
	s := scaledSummary()
	two := s.Scaling.Counts[1]
	if want := "2 engine(s): capacity ≥ 180/s, < 200/s; scaling efficiency 0.9 (0.818–1)"; !strings.HasPrefix(ScaleLine(two, 1), want) {
		t.Errorf("line %q", ScaleLine(two, 1))
	}
	if !strings.Contains(ScaleLine(two, 1), "engine CPU balance 1.20") {
		t.Errorf("no balance in %q", ScaleLine(two, 1))
	}
	if lines := strings.Join(CostLines(s), "\n"); !strings.Contains(lines, "1 engine(s), the smallest count measured: capacity") || !strings.Contains(lines, "2 engine(s): capacity") {
		t.Errorf("cost lines %q", lines)
	}
	if got := ScalingShort(s.Scaling); got != "scaling vs 1 engine(s): 2: 0.9 (0.818–1)" {
		t.Errorf("short %q", got)
	}
	if ScalingShort(nil) != "" || ScalingLines(nil) != nil {
		t.Error("words for a campaign of one size")
	}
	if got := SpreadLine(s); !strings.Contains(got, "50/s, 2 engines: ") {
		t.Errorf("spread line %q", got)
	}
}
