package summary

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/usage"
)

// scaledRun is a finished run of n engines at rate whose engines burn
// fixed + cpuMs × rate cores, the pods split as given.
func scaledRun(n int, rate float64, round int, fixed, cpuMs float64, pods ...float64) *stats.Run {
	cores := fixed + cpuMs*rate/1000
	ex := int64(rate * 10)
	r := &stats.Run{ID: fmt.Sprintf("n%d-r%d-%g", n, round, rate), Replicas: n, TargetRPS: rate, Round: round, Status: stats.StatusDone,
		ThresholdsPassed: true, Requests: ex, OK: ex, Responses: ex, AchievedRPS: rate, MeasuredSeconds: 10,
		LatencyMs: stats.Latency{P95: 5 + rate/100},
		EngineCPU: &stats.CPU{AvgCores: cores, Exchanges: ex, CPUMsPerExchange: cores * 1000 / rate, Method: "cumulative"}}
	var sum, top float64
	for i, p := range pods {
		r.EnginePods = append(r.EnginePods, usage.PodCPU{Name: fmt.Sprintf("engine-%d", i), Cores: p})
		sum, top = sum+p, max(top, p)
	}
	if len(pods) > 1 {
		r.EngineBalance = stats.Round3(top / (sum / float64(len(pods)))) // as stats computes it
	}
	return r
}

func scaledCampaign() []*stats.Run {
	var runs []*stats.Run
	for round := 1; round <= 2; round++ {
		for _, rate := range []float64{50, 100} {
			runs = append(runs, scaledRun(1, rate, round, 0.1, 5),
				scaledRun(2, rate, round, 0.2, 5.5, 0.3, 0.45))
		}
	}
	return runs
}

// TestScalingEfficiency (issue 28 item 2): each count's capacity, the
// efficiency against the smallest count with the interval the two
// brackets allow, per-core throughput and balance, the marginal cost.
func TestScalingEfficiency(t *testing.T) {
	s := &Summary{Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}, Capacities: map[int]*curve.Result{
		1: {Capacity: 100, Upper: 110}, 2: {Capacity: 180, Upper: 200}}}
	BuildSummary(s, scaledCampaign(), true)
	if len(s.Stages) != 4 || s.Stages[2].Label() != "50/s, 2 engines" {
		t.Fatalf("stages %d: %q", len(s.Stages), s.Stages[2].Label())
	}
	if s.Capacity == nil || s.Capacity.Capacity != 100 {
		t.Errorf("the summary's capacity is not the base count's: %+v", s.Capacity)
	}
	if s.Cost == nil || !s.Cost.Fit.OK() || math.Abs(s.Cost.Fit.MarginalCPUMs-5) > 1e-6 {
		t.Errorf("the summary's cost is not the base count's 5 stats.CPU-ms: %+v", s.Cost)
	}
	sc := s.Scaling
	if sc == nil || sc.Base != 1 || len(sc.Counts) != 2 {
		t.Fatalf("scaling %+v", sc)
	}
	two := sc.Counts[1]
	if e := two.Efficiency; e == nil || e.Value != 0.9 || e.Range != [2]float64{0.818, 1} {
		t.Errorf("efficiency %+v, want 0.9 (0.818–1)", e)
	}
	if sc.Counts[0].Efficiency == nil || sc.Counts[0].Efficiency.Value != 1 {
		t.Errorf("the base count's efficiency %+v", sc.Counts[0].Efficiency)
	}
	if two.Marginal == nil || math.Abs(two.Marginal.Value-5.5) > 1e-6 {
		t.Errorf("marginal %+v", two.Marginal)
	}
	// Per core at the top: the capacity probe's runs if any, else the
	// highest stage (here 100/s): 100 ÷ (0.2 + 0.55) cores.
	if two.At != 100 || two.PerCore == nil || math.Abs(two.PerCore.Value-133.333) > 0.01 {
		t.Errorf("per core %+v at %v", two.PerCore, two.At)
	}
	if two.Balance != 1.2 || len(two.Pods) != 2 {
		t.Errorf("balance %v pods %+v", two.Balance, two.Pods)
	}
}

// TestScalingEfficiencyUnknown: without a search no efficiency is made up;
// an open bracket leaves its side of the interval unknown.
func TestScalingEfficiencyUnknown(t *testing.T) {
	s := &Summary{Thresholds: stats.Thresholds{P95Ms: 500}}
	BuildSummary(s, scaledCampaign(), true)
	if e := s.Scaling.Counts[1].Efficiency; e != nil {
		t.Errorf("efficiency without a search: %+v", e)
	}
	if r := s.Scaling.Counts[1].PerCoreRatio; r <= 0 || r >= 1 {
		t.Errorf("per-core ratio %v (the two engines burn more per exchange)", r)
	}
	e := efficiency(&curve.Result{Capacity: 190}, &curve.Result{Capacity: 100, Upper: 120}, 2, 1)
	if e.Value != 0.95 || e.Range[1] != 0 || e.Range[0] == 0 || !strings.Contains(e.String(), "–?)") {
		t.Errorf("open bracket: %+v %s", e, e)
	}
	if efficiency(&curve.Result{Capacity: 0, Upper: 50}, &curve.Result{Capacity: 100}, 2, 1) != nil {
		t.Error("an efficiency from a count whose capacity is unknown")
	}
}

// TestScalingHostBound (issue 28, honest numbers): an efficiency from
// capacities whose bracketing probes the machine set (a host_saturated the
// thresholds allowed) carries scaling_host_bound naming the count and the
// codes; the same campaign on a quiet host, or a warning on a rate that
// brackets no capacity, carries none.
func TestScalingHostBound(t *testing.T) {
	build := func(warnAt float64) *Summary {
		runs := scaledCampaign()
		for _, r := range runs {
			if r.Replicas == 2 && r.TargetRPS == warnAt {
				r.Warnings = append(r.Warnings, stats.Warn(stats.WarnHostSaturated, r.ID, "host saturated"), stats.Warn(stats.WarnGeneratorLate, r.ID, "late"))
			}
		}
		s := &Summary{Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99, AllowWarnings: stats.InvalidatingCodes}, Capacities: map[int]*curve.Result{
			1: {Capacity: 100, Upper: 110}, 2: {Capacity: 50, Upper: 100}}}
		BuildSummary(s, runs, true)
		return s
	}
	has := func(s *Summary) string {
		for _, w := range s.Warnings {
			if w.Code == stats.WarnScalingHostBound {
				return w.Detail
			}
		}
		return ""
	}
	if d := has(build(100)); !strings.Contains(d, "2 engine(s), probes at 50/s and 100/s: generator_late, host_saturated") || strings.Contains(d, "1 engine(s)") {
		t.Errorf("the broken probe at 100/s was the machine's: %q", d)
	}
	if d := has(build(0)); d != "" {
		t.Errorf("a quiet host: %q", d)
	}
	runs := scaledCampaign()
	for _, r := range runs {
		r.Warnings = []stats.Warning{stats.Warn(stats.WarnHostSaturated, r.ID, "host saturated")}
	}
	s := &Summary{Thresholds: stats.Thresholds{P95Ms: 500, AllowWarnings: stats.InvalidatingCodes}, Capacities: map[int]*curve.Result{1: {Capacity: 100}}}
	BuildSummary(s, runs, true)
	if d := has(s); d != "" {
		t.Errorf("no efficiency, no warning: %q", d)
	}
}

// TestOfReplicas: one count of a campaign, alone, for compare.
func TestOfReplicas(t *testing.T) {
	s := &Summary{CampaignID: "c", Thresholds: stats.Thresholds{P95Ms: 500}, Status: CampaignDone,
		Capacities: map[int]*curve.Result{2: {Capacity: 180}}}
	BuildSummary(s, scaledCampaign(), true)
	two, ok := s.OfReplicas(2)
	if !ok || two.CampaignID != "c@2" || len(two.Stages) != 2 || two.Stages[0].Replicas != 0 || two.Capacity == nil || two.Capacity.Capacity != 180 {
		t.Fatalf("%+v %v", two, ok)
	}
	if two.Scaling != nil || s.Stages[2].Runs[0].Replicas != 2 {
		t.Error("OfReplicas changed the campaign or kept its scaling")
	}
	if _, ok := s.OfReplicas(3); ok {
		t.Error("a count the campaign did not measure")
	}
}
