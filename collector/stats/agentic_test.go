package stats

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/exchange"
)

// chainRows are one chain's rows as the local driver writes them: hop k
// due when hop k−1's response was read, its send lag tokex's own time.
func chainRows(agent int, seq, at int64, gaps, durs []int64, outcomes []exchange.Outcome, bytes []int) []Request {
	var out []Request
	due := at
	for i := range durs {
		q := Request{Agent: agent, Seq: seq, Phase: Measured, ScheduledUS: due, SendLagUS: gaps[i], DurationUS: durs[i],
			Status: 200, Outcome: outcomes[i], Hop: i + 1}
		if q.Outcome == exchange.OutcomeOK {
			q.TokenBytes = bytes[i]
		} else {
			q.Status, q.Detail = 400, "invalid_grant"
		}
		out = append(out, q)
		if !q.OK() {
			break
		}
		due += gaps[i] + durs[i]
	}
	return out
}

// TestChainsAreFollowedHopByHop: a run of chains of 3 gives each hop's
// figures, the chains' latency exactly as the hops' sum plus tokex's time
// between them, where a chain broke and why, one arrival per chain, and
// send lag from the first hops only.
func TestChainsAreFollowedHopByHop(t *testing.T) {
	ok3 := []exchange.Outcome{exchange.OutcomeOK, exchange.OutcomeOK, exchange.OutcomeOK}
	start := time.UnixMicro(1_000_000)
	meta := RunMeta{ID: "r", Status: StatusDone, Chain: 3, MeasuredStart: start, MeasuredEnd: start.Add(10 * time.Second)}
	var rows []Request
	rows = append(rows, chainRows(0, 1, 2_000_000, []int64{100, 30, 40}, []int64{5000, 6000, 7000}, ok3, []int{800, 1100, 1400})...)
	rows = append(rows, chainRows(1, 1, 2_000_100, []int64{200, 50, 60}, []int64{4000, 5000, 6000}, ok3, []int{810, 1110, 1410})...)
	rows = append(rows, chainRows(0, 2, 3_000_000, []int64{100, 30, 40}, []int64{5000, 6000, 7000},
		[]exchange.Outcome{exchange.OutcomeOK, exchange.OutcomeOAuthError}, []int{800})...)
	rows = append(rows, Request{Agent: 1, Seq: 2, Phase: Measured, ScheduledUS: 3_000_100, Outcome: exchange.OutcomeDropped, Hop: 1})
	// Rows of two chains interleave as their workers record them.
	rows[2], rows[3] = rows[3], rows[2]
	r := ComputeRun(meta, rows, nil, Thresholds{P95Ms: 100, SuccessRatio: 0.5})
	if r.Requests != 8 || r.OK != 7 || r.Dropped != 1 || r.AchievedRatio != 0.75 {
		t.Errorf("requests %d ok %d dropped %d achieved %.4f; want 8, 7, 1, 0.75", r.Requests, r.OK, r.Dropped, r.AchievedRatio)
	}
	if r.SendLagMs.Count != 3 || r.SendLagMs.Max != 0.2 {
		t.Errorf("send lag %+v: want the 3 first hops', at most 0.2 ms", r.SendLagMs)
	}
	if len(r.Hops) != 3 || r.Hops[0].Requests != 3 || r.Hops[1].Requests != 3 || r.Hops[2].Requests != 2 ||
		r.Hops[1].OK != 2 || r.Hops[2].TokenBytes.Avg != 1405 || r.Hops[0].TokenBytes.Max != 810 || r.Hops[1].GapMs.Max != 0.05 {
		t.Errorf("hops %+v", r.Hops)
	}
	c := r.Chains
	want := []ChainBreak{{Hop: 2, Error: "oauth_error:invalid_grant", Count: 1}}
	if c == nil || c.Length != 3 || c.Started != 3 || c.Completed != 2 || !reflect.DeepEqual(c.Broken, want) || c.Unlinked != 0 || c.Unfinished != 0 {
		t.Fatalf("chains %+v", c)
	}
	// 5000+30+6000+40+7000 and 4000+50+5000+60+6000: sums exact chain by chain.
	if c.LatencyMs.Max != 18.07 || c.LatencyMs.P50 != (18.07+15.11)/2 || c.HopsMs.Max != 18 || c.TokexMs.Max != 0.11 || c.TokexMs.Count != 2 {
		t.Errorf("chain latency %+v, hops %+v, tokex %+v", c.LatencyMs, c.HopsMs, c.TokexMs)
	}
	if r.Kinds != nil {
		t.Errorf("a run of one grant lists kinds: %+v", r.Kinds)
	}
}

// TestChainRowsOutOfOrderAreUnlinked: a hop whose predecessor never came
// (cut evidence, hostile rows) is counted, never taken for a chain.
func TestChainRowsOutOfOrderAreUnlinked(t *testing.T) {
	meta := RunMeta{ID: "r", Status: StatusDone, Chain: 2, MeasuredEnd: time.UnixMicro(10_000_000)}
	rows := []Request{
		{Agent: 0, Seq: 1, Phase: Measured, ScheduledUS: 5, DurationUS: 9, Status: 200, Outcome: exchange.OutcomeOK, Hop: 2},
		{Agent: 0, Seq: 2, Phase: Measured, ScheduledUS: 5, DurationUS: 9, Status: 200, Outcome: exchange.OutcomeOK, Hop: 1},
		{Agent: 0, Seq: 3, Phase: Measured, ScheduledUS: 5, DurationUS: 9, Status: 200, Outcome: exchange.OutcomeOK, Hop: 1},
		{Agent: 0, Seq: 3, Phase: Measured, ScheduledUS: 5, DurationUS: 9, Status: 200, Outcome: exchange.OutcomeOK, Hop: 1},
	}
	c := ComputeRun(meta, rows, nil, Thresholds{}).Chains
	if c.Unlinked != 2 || c.Started != 3 || c.Completed != 0 || c.Unfinished != 2 {
		t.Errorf("%+v: want 2 unlinked (a hop 2 alone, a chain opened twice), 3 started, 2 unfinished", c)
	}
}

// TestMixedRunGivesEachGrant: a mixed run's rows give each grant's
// latency, success and arrivals beside the run's own figures.
func TestMixedRunGivesEachGrant(t *testing.T) {
	mix := &exchange.Mix{Seed: 7, Weights: []exchange.Weight{{Grant: exchange.GrantExchange, Weight: 70}, {Grant: exchange.GrantClientCredentials, Weight: 30}}}
	meta := RunMeta{ID: "r", Status: StatusDone, Mix: mix, MeasuredEnd: time.UnixMicro(10_000_000)}
	rows := []Request{
		{Agent: 0, Seq: 1, Phase: Measured, ScheduledUS: 5, DurationUS: 9000, Status: 200, Outcome: exchange.OutcomeOK, TokenBytes: 900},
		{Agent: 0, Seq: 2, Phase: Measured, ScheduledUS: 5, DurationUS: 2000, Status: 200, Outcome: exchange.OutcomeOK, Kind: exchange.GrantClientCredentials, TokenBytes: 600},
		{Agent: 0, Seq: 3, Phase: Measured, ScheduledUS: 5, Outcome: exchange.OutcomeDropped, Kind: exchange.GrantClientCredentials},
		{Agent: 0, Seq: 4, Phase: Warmup, ScheduledUS: 5, DurationUS: 1, Status: 200, Outcome: exchange.OutcomeOK, Kind: exchange.GrantClientCredentials},
	}
	r := ComputeRun(meta, rows, nil, Thresholds{})
	if len(r.Kinds) != 2 || r.Kinds[0].Kind != exchange.GrantExchange || r.Kinds[1].Kind != exchange.GrantClientCredentials ||
		r.Kinds[0].LatencyMs.P95 != 9 || r.Kinds[1].LatencyMs.P95 != 2 || r.Kinds[1].Arrivals != 2 || r.Kinds[1].TokenBytes.Avg != 600 ||
		r.Mix != mix || r.Hops != nil || r.Chains != nil {
		t.Errorf("kinds %+v", r.Kinds)
	}
}

// synthRun is a finished run of a workload with an engine CPU figure.
func synthRun(id string, round int, rate float64, chain int, step bool, grant exchange.Grant, cpuMs, p95 float64) *Run {
	r := &Run{ID: id, Round: round, TargetRPS: rate, Status: StatusDone, Chain: chain, Step: step, Grant: grant,
		Requests: 1000, OK: 1000, ThresholdsPassed: true, MeasuredSeconds: 10,
		LatencyMs: Latency{Count: 1000, P95: p95}, EngineCPU: &CPU{CPUMsPerExchange: cpuMs, Exchanges: int64(rate * 10 * float64(max(chain, 1)))}}
	if chain > 0 {
		r.Hops = []HopStats{{Hop: 1, Requests: 100, OK: 100, LatencyMs: Latency{P95: 2}, TokenBytes: Sizes{Avg: 900, Max: 910}}}
		for k := 2; k <= chain; k++ {
			r.Hops = append(r.Hops, HopStats{Hop: k, Requests: 100, OK: 100, LatencyMs: Latency{P95: float64(k) + 1},
				TokenBytes: Sizes{Avg: 900 + 200*float64(k-1), Max: 910 + 200*int64(k-1)}})
		}
		r.Chains = &ChainStats{Length: chain, Started: 100, Completed: 100}
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
	var runs []*Run
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
	s := &Summary{Thresholds: Thresholds{P95Ms: 100, SuccessRatio: 0.5}}
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
		math.Abs(p.Overall.CPUMs.Mean-1.9) > 1e-9 || math.Abs(p.Overall.CPUMs.CI[1]-round4(wantCPU.CI[1])) > 1e-9 ||
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
	BuildSummary(s, []*Run{synthRun("a", 1, 100, 0, false, "", 2, 5)}, true)
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
