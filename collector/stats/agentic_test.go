package stats

import (
	"reflect"
	"testing"
	"time"

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
