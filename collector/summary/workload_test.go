package summary

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// synthRun is a finished run of a workload with an engine CPU figure.
func synthRun(id string, round int, rate float64, chain int, step bool, grant exchange.Grant, cpuMs, p95 float64) *stats.Run {
	r := &stats.Run{ID: id, Round: round, TargetRPS: rate, Status: stats.StatusDone, Chain: chain, Step: step, Grant: grant,
		Requests: 1000, OK: 1000, ThresholdsPassed: true, MeasuredSeconds: 10,
		LatencyMs: stats.Latency{Count: 1000, P95: p95}, EngineCPU: &stats.CPU{CPUMsPerExchange: cpuMs, Exchanges: int64(rate * 10 * float64(max(chain, 1)))}}
	if chain > 0 {
		r.Hops = []stats.HopStats{{Hop: 1, Requests: 100, OK: 100, LatencyMs: stats.Latency{P95: 2}, TokenBytes: stats.Sizes{Avg: 900, Max: 910}}}
		for k := 2; k <= chain; k++ {
			r.Hops = append(r.Hops, stats.HopStats{Hop: k, Requests: 100, OK: 100, LatencyMs: stats.Latency{P95: float64(k) + 1},
				TokenBytes: stats.Sizes{Avg: 900 + 200*float64(k-1), Max: 910 + 200*int64(k-1)}})
		}
		r.Chains = &stats.ChainStats{Length: chain, Started: 100, Completed: 100}
	}
	return r
}

// TestPremiumAndHopCPUFromRounds: a campaign of chains of 2 with their
// length-1 steps and a client-credentials baseline, 3 rounds at one
// stage: hop 1's CPU is the single exchange's, hop 2's the difference of
// the lengths round by round, the chain's that of the chains of 2, and
// the premium the exchange's CPU and p95 minus the baseline's, each with
// Student's t interval over the rounds.
func TestPremiumAndHopCPUFromRounds(t *testing.T) {
	cc := exchange.GrantClientCredentials
	var runs []*stats.Run
	single := []float64{2.0, 2.2, 2.1}
	pair := []float64{1.8, 2.0, 1.9} // per exchange of a chain of 2: 3.6, 4.0, 3.8 per chain
	base := []float64{0.1, 0.4, 0.1}
	for i := range 3 {
		rd := i + 1
		runs = append(runs,
			synthRun("main", rd, 100, 2, false, "", pair[i], 9),
			synthRun("step", rd, 100, 1, true, "", single[i], 5+float64(i)),
			synthRun("base", rd, 100, 0, false, cc, base[i], 2))
	}
	s := &Summary{Thresholds: stats.Thresholds{P95Ms: 100, SuccessRatio: 0.5}}
	BuildSummary(s, runs, true)
	if len(s.Stages) != 1 || len(s.Stages[0].Runs) != 3 || len(s.Variants) != 2 || s.Variants[0].Workload != "chain 1" || s.Variants[1].Workload != "client_credentials" {
		t.Fatalf("stages %+v variants %+v", s.Stages, s.Variants)
	}
	a := s.Agentic
	if a == nil || a.Chain != 2 || a.Baseline != cc || len(a.Stages) != 1 {
		t.Fatalf("agentic %+v", a)
	}
	st := a.Stages[0]
	close := func(iv *curve.Interval, want []float64) bool {
		w := curve.MeanCI(want)
		return iv != nil && math.Abs(iv.Mean-w.Mean) < 1e-4 && math.Abs(iv.CI[0]-w.CI[0]) < 1e-4 && iv.N == 3
	}
	if len(st.Hops) != 2 || !close(st.Hops[0].CPUMs, single) || st.Hops[0].CPUNote != "fixed cost included" ||
		!close(st.Hops[1].CPUMs, []float64{3.6 - 2.0, 4.0 - 2.2, 3.8 - 2.1}) || st.Hops[1].TokenBytes != 1100 {
		t.Errorf("hops %+v %+v", st.Hops[0].CPUMs, st.Hops[1].CPUMs)
	}
	if st.Chain == nil || !close(st.Chain.CPUMs, []float64{3.6, 4.0, 3.8}) {
		t.Errorf("chain %+v", st.Chain)
	}
	p := a.Premium
	wantCPU := curve.MeanCI([]float64{1.9, 1.8, 2.0})
	if p == nil || p.ExchangeWorkload != "chain 1" || len(p.Stages) != 1 || p.Overall.CPUMs.N != 3 ||
		math.Abs(p.Overall.CPUMs.Mean-1.9) > 1e-9 || math.Abs(p.Overall.CPUMs.CI[1]-stats.Round4(wantCPU.CI[1])) > 1e-9 ||
		p.Overall.P95Ms.Mean != 4 || p.Overall.ExchangeCPUMs != 2.1 || p.Overall.BaselineCPUMs != 0.2 {
		t.Errorf("premium %+v", p)
	}
	// The cost fit of the campaign's own workload is its chains' alone.
	if s.Totals.Runs != 9 {
		t.Errorf("%d runs counted", s.Totals.Runs)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Agentic, s.Agentic) {
		t.Errorf("summary.json round trip: %v", err)
	}
}

// TestSingleExchangeCampaignHasNoAgenticSection: the article's campaign
// writes the summary it wrote before.
func TestSingleExchangeCampaignHasNoAgenticSection(t *testing.T) {
	s := &Summary{}
	BuildSummary(s, []*stats.Run{synthRun("a", 1, 100, 0, false, "", 2, 5)}, true)
	b, _ := json.Marshal(s)
	if s.Agentic != nil || s.Variants != nil || containsAny(string(b), `"agentic"`, `"variants"`, `"workload"`, `"hops"`, `"grant"`) {
		t.Errorf("single exchanges: %s", b)
	}
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
