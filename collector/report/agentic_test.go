package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// chainsOf3 is the agentic figures of chains of 3 at two stages: hop 3's
// CPU interval dips below zero (a difference of two runs' CPU).
func chainsOf3() *summary.Summary {
	a := &summary.Agentic{Chain: 3, Baseline: "client_credentials"}
	for i, rate := range []float64{25, 50} {
		st := summary.AgenticStage{TargetRPS: rate}
		for k := 1; k <= 3; k++ {
			p95 := float64(2*k + i)
			iv := &curve.Interval{Mean: 0.3 * float64(k), CI: [2]float64{0.2 * float64(k), 0.4 * float64(k)}, N: 3}
			if k == 3 {
				iv.CI[0] = -0.258
			}
			st.Hops = append(st.Hops, summary.HopFigure{Hop: k, Requests: 100, SuccessRatio: 1, P50Ms: p95 / 2, P95Ms: p95, P99Ms: 2 * p95,
				TokenBytes: float64(500 + 50*k), CPUMs: iv})
		}
		a.Stages = append(a.Stages, st)
	}
	return &summary.Summary{CampaignID: "c", Agentic: a}
}

// TestAgenticCharts (issue 30 item 5, the dashboard's chart): chains give
// each hop's p95 (p50–p99 whiskers) and CPU-ms (its interval as the
// whisker, the part below zero not drawn but said) per stage; a mix each
// grant's p95 against the rate; single exchanges no chart at all.
func TestAgenticCharts(t *testing.T) {
	got := AgenticCharts(chainsOf3())
	if len(got) != 2 {
		t.Fatalf("%d charts for chains, want each hop's latency and CPU", len(got))
	}
	lat, cpu := string(got[0]), string(got[1])
	for _, want := range []string{"Each hop&#39;s latency", "25/s p95", "50/s p95", "p50 3 ms, p99 12 ms, 650 token bytes"} {
		if !strings.Contains(lat, want) {
			t.Errorf("the latency chart lacks %q", want)
		}
	}
	for _, want := range []string{"Each hop&#39;s engine CPU", "0.900 CPU-ms, 95 % CI -0.258–1.200 over 3 rounds", "0.300 CPU-ms, 95 % CI 0.200–0.400"} {
		if !strings.Contains(cpu, want) {
			t.Errorf("the CPU chart lacks %q", want)
		}
	}
	for name, svg := range map[string]string{"latency": lat, "cpu": cpu} {
		if n := strings.Count(svg, "<circle"); n != 6 {
			t.Errorf("%s chart: %d points, want 3 hops × 2 stages", name, n)
		}
		if n := strings.Count(svg, `class="line whisker`); n != 6 {
			t.Errorf("%s chart: %d whiskers, want 6", name, n)
		}
	}
	noCPU := chainsOf3()
	for i := range noCPU.Agentic.Stages {
		for k := range noCPU.Agentic.Stages[i].Hops {
			noCPU.Agentic.Stages[i].Hops[k].CPUMs = nil // steps: false
		}
	}
	if got := AgenticCharts(noCPU); len(got) != 1 {
		t.Errorf("%d charts without CPU per hop, want the latency chart alone", len(got))
	}

	mix := &summary.Summary{Agentic: &summary.Agentic{}}
	for _, rate := range []float64{25, 50} {
		mix.Agentic.Stages = append(mix.Agentic.Stages, summary.AgenticStage{TargetRPS: rate, Kinds: []stats.KindStats{
			{Kind: "exchange", Requests: 70, SuccessRatio: 1, LatencyMs: stats.Latency{P95: rate / 10}},
			{Kind: "client_credentials", Requests: 30, SuccessRatio: 1, LatencyMs: stats.Latency{P95: rate / 20}}}})
	}
	got = AgenticCharts(mix)
	if len(got) != 1 || strings.Count(string(got[0]), "<circle") != 4 || !strings.Contains(string(got[0]), "client_credentials: 2.5 at 50") {
		t.Errorf("mix charts: %d %s", len(got), fmt.Sprint(got))
	}
	if AgenticCharts(&summary.Summary{}) != nil {
		t.Error("single exchanges have a workload chart")
	}
}
