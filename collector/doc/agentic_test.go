package doc

import (
	"fmt"
	"html/template"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// agenticSummary is chains of 2 with their length-1 steps and a
// client_credentials baseline at one stage, 3 rounds; the baseline's p95
// is above the exchange's (a premium may be negative).
func agenticSummary() *summary.Summary {
	var runs []*stats.Run
	for rd := 1; rd <= 3; rd++ {
		for _, v := range []struct {
			chain       int
			step        bool
			grant       string
			cpu, p95    float64
			bytes1, by2 float64
		}{{2, false, "", 0.9, 4, 500, 548}, {1, true, "", 1.0 + 0.01*float64(rd), 3, 500, 0}, {0, false, "client_credentials", 0.7, 5, 0, 0}} {
			r := &stats.Run{ID: fmt.Sprintf("r%d-%d-%s", rd, v.chain, v.grant), Round: rd, TargetRPS: 25, Status: stats.StatusDone, Chain: v.chain,
				Step: v.step, Requests: 100, OK: 100, SuccessRatio: 1, ThresholdsPassed: true, MeasuredSeconds: 10,
				LatencyMs: stats.Latency{Count: 100, P95: v.p95 + 0.1*float64(rd)}, EngineCPU: &stats.CPU{CPUMsPerExchange: v.cpu, Exchanges: 100}}
			if v.grant != "" {
				r.Grant = "client_credentials"
			}
			for k, b := range []float64{v.bytes1, v.by2}[:v.chain] {
				r.Hops = append(r.Hops, stats.HopStats{Hop: k + 1, Requests: 50, OK: 50, SuccessRatio: 1, LatencyMs: stats.Latency{P95: 2},
					TokenBytes: stats.Sizes{Count: 50, Avg: b, Max: int64(b)}})
			}
			if v.chain > 0 {
				r.Chains = &stats.ChainStats{Length: v.chain, Started: 50, Completed: 49,
					Broken: []stats.ChainBreak{{Hop: 2, Error: "oauth_error:invalid_grant", Count: 1}}}
			}
			runs = append(runs, r)
		}
	}
	s := &summary.Summary{CampaignID: "c", Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.9}}
	summary.BuildSummary(s, runs, true)
	return s
}

// The workload's section says the premium in words, its direction and
// interval, each hop with its token growth and CPU, the chains and where
// they broke, in every medium.
func TestAgenticSection(t *testing.T) {
	d := Campaign(agenticSummary(), nil)
	var html strings.Builder
	if err := d.HTML(&html); err != nil {
		t.Fatal(err)
	}
	for medium, out := range map[string]string{"text": d.Text(), "markdown": d.Markdown(), "html": html.String()} {
		for _, want := range []string{
			"Chains, actor tokens and the exchange premium",
			"an exchange costs 0.32 CPU-ms more than a client_credentials grant (1.020 against 0.700), 95 % CI",
			"its p95 is 2 ms less (3.20 against 5.20 ms)",
			"3 pairs of interleaved runs",
			"chains of 2 − chains of 1",
			"+48",
			"broke at hop 2: oauth_error:invalid_grant",
		} {
			if medium == "html" {
				want = strings.ReplaceAll(want, "+", "&#43;")
			}
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q", medium, want)
			}
		}
	}
	if strings.Contains(Campaign(&summary.Summary{}, nil).Text(), "exchange premium") {
		t.Error("single exchanges have a workload section")
	}
}

// The report's charts of the workload (Page.Agentic) stand in its section
// of the HTML, and in no other medium.
func TestAgenticSectionHoldsTheReportsCharts(t *testing.T) {
	chart := template.HTML(`<svg class="hop-chart-under-test"></svg>`)
	d := Campaign(agenticSummary(), &Page{CampaignID: "c", Agentic: []template.HTML{chart}})
	var html strings.Builder
	if err := d.HTML(&html); err != nil {
		t.Fatal(err)
	}
	out := html.String()
	at, sec := strings.Index(out, string(chart)), strings.Index(out, "Chains, actor tokens and the exchange premium")
	if at < 0 || sec < 0 || at < sec {
		t.Fatalf("the chart is not in the workload's section (chart at %d, section at %d)", at, sec)
	}
	if strings.Contains(d.Text()+d.Markdown(), "hop-chart-under-test") {
		t.Error("a chart in the text or markdown")
	}
}

// A premium whose interval holds 0 says no difference is shown, in either
// direction; one that does not, says nothing more; one pair gives none.
func TestPremiumIntervalText(t *testing.T) {
	for _, tc := range []struct {
		iv   curve.Interval
		want string
	}{
		{curve.Interval{Mean: 7.18, CI: [2]float64{-0.74, 15.1}, N: 6}, ", 95 % CI -0.74–15.10 (it holds 0: no difference shown)"},
		{curve.Interval{Mean: -0.72, CI: [2]float64{-4.29, 2.85}, N: 6}, ", 95 % CI -4.29–2.85 (it holds 0: no difference shown)"},
		{curve.Interval{Mean: 0.27, CI: [2]float64{0.197, 0.342}, N: 6}, ", 95 % CI 0.20–0.34"},
		{curve.Interval{Mean: -2, CI: [2]float64{-2.5, -1.5}, N: 3}, ", 95 % CI -2.50–-1.50"},
		{curve.Interval{Mean: 1, N: 1}, ", no interval (one pair)"},
	} {
		if got := ciText(tc.iv, 2); got != tc.want {
			t.Errorf("ciText(%+v) = %q, want %q", tc.iv, got, tc.want)
		}
	}
}
