package compare

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
)

// campaign builds a campaign; a negative p95 is a run that failed (0 % success).
func campaign(id string, stages map[float64][]float64, cpu float64) *summary.Summary {
	var runs []*stats.Run
	for rate, p95s := range stages {
		for i, p := range p95s {
			r := &stats.Run{ID: id + "-" + units.StageLabel(rate) + string(rune('a'+i)), Round: i + 1, TargetRPS: rate,
				Status: stats.StatusDone, Requests: 100, SuccessRatio: 1, ThresholdsPassed: true, LatencyMs: stats.Latency{P50: p / 2, P95: p, P99: p * 2},
				EngineCPU: &stats.CPU{CPUMsPerExchange: cpu + float64(i)*0.1}}
			if p < 0 {
				r.LatencyMs, r.SuccessRatio, r.ThresholdsPassed = stats.Latency{P50: 1, P95: -p, P99: -p}, 0, false
			}
			runs = append(runs, r)
		}
	}
	s := &summary.Summary{CampaignID: id, Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}}
	summary.BuildSummary(s, runs, true)
	return s
}

func TestCompareVerdicts(t *testing.T) {
	t.Parallel()
	a := campaign("A", map[float64][]float64{100: {7.23, 7.54, 7.72}, 500: {9.03, 9.51, 10.01}, 250: {7}}, 5.2)
	b := campaign("B", map[float64][]float64{100: {7.3, 7.6, 7.7}, 500: {14, -4.9, 16}, 1000: {20}}, 1.4)
	r := Compare(a, b)
	get := func(rate float64, name string) Metric {
		for _, st := range r.Stages {
			if st.TargetRPS == rate {
				for _, m := range st.Metrics {
					if m.Name == name {
						return m
					}
				}
			}
		}
		t.Fatalf("no %v %s", rate, name)
		return Metric{}
	}
	cases := []struct {
		rate    float64
		metric  string
		verdict string
	}{
		{100, "p95", "within noise"},
		{500, "p95", "B higher"},
		{500, "cpu_ms_per_exchange", "B lower"},
	}
	for _, c := range cases {
		if m := get(c.rate, c.metric); m.Verdict != c.verdict {
			t.Errorf("%v %s: %+v", c.rate, c.metric, m)
		}
	}
	m := get(500, "p95")
	if m.A != 9.51 || m.B != 16 || m.Diff != 6.49 || m.Noise != 2 || m.Rounds != [2]int{3, 2} {
		t.Errorf("500 p95 %+v", m)
	}
	var only []string
	for _, st := range r.Stages {
		if st.Only != "" {
			only = append(only, units.StageLabel(st.TargetRPS)+":"+st.Only)
		}
	}
	if strings.Join(only, ",") != "250/s:A,1000/s:B" {
		t.Errorf("one-sided stages %v", only)
	}
	// B's 500/s stage had a run that failed fast: it says so, with success
	// next to latency, and the reported run is not the failed one.
	if m := get(500, "success"); m.A != 100 || m.B != 100 {
		t.Errorf("500 success %+v", m)
	}
	if !strings.Contains(r.Markdown(), "| 500/s | runs | ✓ 3/3 passed | ✗ 1/3 failed |") {
		t.Errorf("markdown:\n%s", r.Markdown())
	}
	for _, out := range []string{r.Text(), r.Markdown()} {
		if !strings.Contains(out, "within noise") || !strings.Contains(out, "only in B") {
			t.Errorf("render:\n%s", out)
		}
	}
	if j, err := r.JSON(); err != nil || !strings.Contains(string(j), `"verdict": "B higher"`) {
		t.Errorf("json %s %v", j, err)
	}
}

// costed is a campaign of three stages × three rounds on a server of
// costMs per exchange and 0.1 fixed cores, with a little noise.
func costed(id string, costMs float64) *summary.Summary {
	var runs []*stats.Run
	for i, rate := range []float64{100, 250, 500} {
		for round := 1; round <= 3; round++ {
			cores := 0.1 + costMs*rate/1000 + 0.004*float64((i+round)%3-1)
			runs = append(runs, &stats.Run{ID: fmt.Sprintf("%s-%d-%d", id, i, round), Round: round, TargetRPS: rate, Status: stats.StatusDone,
				Requests: 100, SuccessRatio: 1, ThresholdsPassed: true, MeasuredSeconds: 10, LatencyMs: stats.Latency{P95: 5},
				EngineCPU: &stats.CPU{CPUMsPerExchange: cores * 1000 / rate, Exchanges: int64(rate * 10)}})
		}
	}
	s := &summary.Summary{CampaignID: id, Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}}
	summary.BuildSummary(s, runs, true)
	return s
}

func TestCompareMarginalCost(t *testing.T) {
	t.Parallel()
	r := Compare(costed("A", 2), costed("B", 2.5))
	if r.Cost == nil || r.Cost.Difference.Verdict != "B costs more" {
		t.Fatalf("cost %+v", r.Cost)
	}
	d := r.Cost.Difference
	if d.CI[0] > 0.5 || d.CI[1] < 0.5 || d.CI[0] <= 0 {
		t.Errorf("difference %+v, want an interval around +0.5 above 0", d)
	}
	for _, out := range []string{r.Text(), r.Markdown()} {
		if !strings.Contains(out, "marginal cost: A 2.000, B 2.500 CPU-ms per exchange; B − A +0.500") {
			t.Errorf("output lacks the difference:\n%s", out)
		}
	}
	if r := Compare(costed("A", 2), costed("B", 2)); r.Cost.Difference.Verdict != "no difference shown (the interval contains 0)" {
		t.Errorf("same cost: %+v", r.Cost.Difference)
	}
	if r := Compare(campaign("A", map[float64][]float64{100: {7}}, 1), campaign("B", map[float64][]float64{100: {7}}, 1)); r.Cost != nil {
		t.Errorf("no engine CPU windows, a cost: %+v", r.Cost)
	}
}

// TestCompareRefusesABentCost: when a campaign's cost falls with the rate,
// its straight line's slope is no marginal cost to compare (issue 23).
func TestCompareRefusesABentCost(t *testing.T) {
	t.Parallel()
	bent := costed("B", 2)
	var runs []*stats.Run
	for _, st := range bent.Stages {
		for _, r := range st.Runs {
			x := *r
			cores := 0.1 + 4*x.TargetRPS/1000
			if x.TargetRPS > 250 {
				cores = 1.1 + 1*(x.TargetRPS-250)/1000
			}
			cpu := *x.EngineCPU
			cpu.CPUMsPerExchange = cores * 1000 / x.TargetRPS * (1 + 0.001*float64(x.Round-2))
			x.EngineCPU = &cpu
			runs = append(runs, &x)
		}
	}
	summary.BuildSummary(bent, runs, true)
	if !bent.Cost.Curve.Bent() {
		t.Fatalf("not bent: %+v", bent.Cost.Curve)
	}
	r := Compare(costed("A", 2), bent)
	if v := r.Cost.Difference.Verdict; !strings.HasPrefix(v, "not comparable: B's marginal cost changes with the rate") {
		t.Errorf("verdict %q", v)
	}
	if !strings.Contains(r.Text(), "marginal cost B − A: not comparable: B's") {
		t.Errorf("text:\n%s", r.Text())
	}
}

// TestCompareSaysAnOldFitDiffers: a capacity campaign whose summary.json
// (written before broken probes were left out of the fit) fitted them is
// not compared with one that left them out; two alike are.
func TestCompareSaysAnOldFitDiffers(t *testing.T) {
	t.Parallel()
	searched := func(id string, leftOut bool) *summary.Summary {
		s := costed(id, 2)
		s.Capacity = &curve.Result{Status: curve.StatusFound, Capacity: 500, Upper: 600,
			Probes: []curve.Probe{{Rate: 600, Verdict: curve.Broken, Rounds: []curve.Round{{RunID: id + "-600"}}}}}
		if leftOut {
			s.Cost.LeftOut = []summary.LeftOut{{Run: id + "-600", TargetRPS: 600}}
		}
		return s
	}
	if v := Compare(searched("A", false), searched("B", true)).Cost.Difference.Verdict; !strings.HasPrefix(v, "not comparable: A's summary.json was written by a tokex that fitted") {
		t.Errorf("verdict %q", v)
	}
	if v := Compare(searched("A", true), searched("B", false)).Cost.Difference.Verdict; !strings.HasPrefix(v, "not comparable: B's") {
		t.Errorf("verdict %q", v)
	}
	for _, both := range []bool{true, false} {
		if v := Compare(searched("A", both), searched("B", both)).Cost.Difference.Verdict; strings.HasPrefix(v, "not comparable") {
			t.Errorf("alike (%v): %q", both, v)
		}
	}
}

// chainSummary is a campaign of chains of n at 100/s, 2 rounds, whose hop
// k's p95 is p95s[k-1] and token grows 100 bytes a hop.
func chainSummary(id string, n int, p95s []float64) *summary.Summary {
	var runs []*stats.Run
	for rd := 1; rd <= 2; rd++ {
		r := &stats.Run{ID: fmt.Sprintf("%s-%d", id, rd), Round: rd, TargetRPS: 100, Status: stats.StatusDone, Chain: n, Requests: 100,
			SuccessRatio: 1, ThresholdsPassed: true, LatencyMs: stats.Latency{P95: 5}}
		for k := 1; k <= n; k++ {
			r.Hops = append(r.Hops, stats.HopStats{Hop: k, Requests: 50, LatencyMs: stats.Latency{P95: p95s[k-1] + float64(rd)/10},
				TokenBytes: stats.Sizes{Count: 50, Avg: float64(700 + 100*k)}})
		}
		runs = append(runs, r)
	}
	s := &summary.Summary{CampaignID: id, Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}}
	summary.BuildSummary(s, runs, true)
	return s
}

// Campaigns of chains compare hop by hop, and campaigns of different
// workloads are said to be so.
func TestCompareChains(t *testing.T) {
	r := Compare(chainSummary("A", 3, []float64{4, 5, 6}), chainSummary("B", 2, []float64{4, 9}))
	names := map[string]Metric{}
	for _, m := range r.Stages[0].Metrics {
		names[m.Name] = m
	}
	if m := names["p95 hop 2"]; m.A != 5.2 || m.B != 9.2 || m.Verdict != "B higher" {
		t.Errorf("p95 hop 2: %+v", m)
	}
	if _, ok := names["p95 hop 3"]; ok || names["token bytes hop 1"].Diff != 0 {
		t.Errorf("hops compared: %v", names)
	}
	text := r.Text()
	for _, want := range []string{"workload A: chains of 3", "workload B: chains of 2", "different workloads"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	if same := Compare(chainSummary("A", 2, []float64{4, 5}), chainSummary("B", 2, []float64{4, 5})).Text(); strings.Contains(same, "different workloads") {
		t.Errorf("same workloads said to differ:\n%s", same)
	}
	if plain := Compare(campaign("A", map[float64][]float64{100: {7}}, 1), campaign("B", map[float64][]float64{100: {7}}, 1)).Text(); strings.Contains(plain, "workload") {
		t.Errorf("single exchanges: %s", plain)
	}
}
