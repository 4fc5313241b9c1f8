package curve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// queue is a simulated target: an M/M/1 server of capacity mu exchanges/s,
// whose p95 sojourn time is ln(20)/(mu − rate), with multiplicative noise
// per round; beyond capacity it drops arrivals and latency explodes.
type queue struct {
	mu       float64
	noise    float64 // relative standard deviation of p95 per round
	rng      *rand.Rand
	dieAt    float64 // hard failure at or above this rate (0: never)
	starveAt float64 // the generator starves at or above this rate (0: never)
	runs     int
}

func (q *queue) round(rate float64) Round {
	q.runs++
	r := Round{RunID: RateLabel(rate), SuccessRatio: 1, Requests: int64(rate * 10), AchievedRPS: rate}
	switch {
	case q.dieAt > 0 && rate >= q.dieAt:
		r.Hard, r.SuccessRatio, r.AchievedRPS = "target stopped answering", 0, 0
		return r
	case q.starveAt > 0 && rate >= q.starveAt:
		r.Invalid = "generator_starved: the generator used 98% of its cores"
	}
	if rate >= q.mu {
		r.P95Ms, r.P99Ms, r.Dropped, r.AchievedRPS = 5000, 9000, int64(rate-q.mu)*10+1, q.mu
		return r
	}
	f := 1.0
	if q.noise > 0 {
		f = math.Exp(q.rng.NormFloat64() * q.noise)
	}
	r.P95Ms = 1000 * math.Log(20) / (q.mu - rate) * f
	r.P99Ms = 1000 * math.Log(100) / (q.mu - rate) * f
	r.P50Ms = 1000 * math.Log(2) / (q.mu - rate) * f
	return r
}

// truth is the highest rate whose noiseless p95 is below limitMs.
func (q *queue) truth(limitMs float64) float64 { return q.mu - 1000*math.Log(20)/limitMs }

// drive runs a search against q to its end (bounded), returning the steps.
func drive(t *testing.T, s *Search, q *queue) []Step {
	t.Helper()
	var steps []Step
	for range 200 {
		st := s.Next()
		if st.Done {
			return steps
		}
		steps = append(steps, st)
		s.Observe(q.round(st.Rate))
	}
	t.Fatal("search did not end in 200 steps")
	return nil
}

var obj = Objective{P95Ms: 20, SuccessRatio: 0.99}

func TestSearchFindsCapacityToResolution(t *testing.T) {
	t.Parallel()
	q := &queue{mu: 700}
	s := NewSearch(Policy{Start: 50, Rounds: 2}, obj)
	steps := drive(t, s, q)
	r := s.Result()
	truth := q.truth(obj.P95Ms)
	t.Logf("truth %.1f/s, %s, %d probes", truth, r.Line(), len(r.Probes))
	if r.Status != StatusFound {
		t.Fatalf("status %s: %s", r.Status, r.Reason)
	}
	if r.Capacity > truth || r.Upper <= truth {
		t.Errorf("bracket %s does not hold the truth %.1f", r.Bracket(), truth)
	}
	if r.Upper-r.Capacity > 0.05*r.Capacity {
		t.Errorf("bracket %s wider than 5 %%", r.Bracket())
	}
	// Exponential steps first: 50, 100, 200, 400, 800 (broken), then bisection.
	want := []float64{50, 100, 200, 400, 800, 600}
	var rates []float64
	for _, st := range steps {
		if st.Round == 1 {
			rates = append(rates, st.Rate)
		}
	}
	for i, w := range want {
		if i >= len(rates) || rates[i] != w {
			t.Fatalf("probe rates %v, want them to begin %v", rates, want)
		}
	}
	if !strings.HasPrefix(r.BrokeFirst[0], "p95") {
		t.Errorf("broke first %v, want p95", r.BrokeFirst)
	}
	if !strings.Contains(r.Bracket(), "≥ ") || !strings.Contains(r.Bracket(), ", < ") {
		t.Errorf("bracket %q", r.Bracket())
	}
}

// A broken probe is followed by a cool-down and a lower rate; a passed one
// by neither.
func TestSearchBacksOffAndCoolsDown(t *testing.T) {
	t.Parallel()
	q := &queue{mu: 700}
	s := NewSearch(Policy{Start: 400, Rounds: 1, CoolDown: 15 * time.Second}, obj)
	var prev *Probe
	for range 50 {
		st := s.Next()
		if st.Done {
			break
		}
		if prev != nil && st.Round == 1 {
			switch prev.Verdict {
			case Broken:
				if st.CoolDown != 15*time.Second || st.Rate >= prev.Rate {
					t.Errorf("after broken %s: next %s with cool-down %v, want lower and 15s", RateLabel(prev.Rate), RateLabel(st.Rate), st.CoolDown)
				}
			case Pass:
				if st.CoolDown != 0 || st.Rate <= prev.Rate {
					t.Errorf("after passed %s: next %s with cool-down %v, want higher and none", RateLabel(prev.Rate), RateLabel(st.Rate), st.CoolDown)
				}
			}
		}
		s.Observe(q.round(st.Rate))
		res := s.Result()
		prev = &res.Probes[len(res.Probes)-1]
		if prev.Verdict == "" {
			prev = nil
		}
	}
	if r := s.Result(); r.Status != StatusFound {
		t.Fatalf("status %s", r.Status)
	}
}

// With noise, the search still brackets the truth within 10 % (the goal's
// tolerance), and a verdict within the rounds' spread of the limit takes an
// extra round.
func TestSearchUnderNoise(t *testing.T) {
	t.Parallel()
	extra := 0
	for seed := range uint64(20) {
		q := &queue{mu: 700, noise: 0.08, rng: rand.New(rand.NewPCG(seed, 7))}
		s := NewSearch(Policy{Start: 100, Rounds: 2, MaxRounds: 3}, obj)
		drive(t, s, q)
		r := s.Result()
		truth := q.truth(obj.P95Ms)
		if r.Status != StatusFound || math.Abs(r.Capacity/truth-1) > 0.10 {
			t.Errorf("seed %d: %s (%s), truth %.1f", seed, r.Line(), r.Status, truth)
		}
		for _, p := range r.Probes {
			if len(p.Rounds) > 2 {
				extra++
			}
		}
	}
	if extra == 0 {
		t.Error("no probe took an extra round: the noise rule never applied")
	}
}

func TestSearchNoiseRule(t *testing.T) {
	t.Parallel()
	s := NewSearch(Policy{Start: 100, Rounds: 2, MaxRounds: 3}, obj)
	// p95 19 and 22 around a 20 ms limit: the median (the worse middle, 22)
	// breaks it, but only by 2 ms, within the 3 ms spread: another round.
	s.Observe(Round{P95Ms: 19, SuccessRatio: 1})
	s.Observe(Round{P95Ms: 22, SuccessRatio: 1})
	if st := s.Next(); st.Rate != 100 || st.Round != 3 {
		t.Fatalf("next %+v, want a third round at 100/s", st)
	}
	s.Observe(Round{P95Ms: 19.5, SuccessRatio: 1})
	p := s.Result().Probes[0]
	if p.Verdict != Pass || p.P95Ms != 19.5 || !strings.Contains(p.Noise, "within noise") {
		t.Fatalf("probe %+v: want passed by the median of three, within noise", p)
	}
	s = NewSearch(Policy{Start: 100, Rounds: 2, MaxRounds: 3}, obj)
	for _, v := range []float64{19, 22, 21} {
		s.Observe(Round{P95Ms: v, SuccessRatio: 1})
	}
	if p := s.Result().Probes[0]; p.Verdict != Broken || len(p.Broken) != 1 || !strings.HasPrefix(p.Broken[0], "p95 21 ms vs 20 ms") {
		t.Fatalf("probe %+v: want broken by the median of three", p)
	}
	// Clearly met: 10 and 12 ms, 8 ms from the limit, spread 2.
	s = NewSearch(Policy{Start: 100, Rounds: 2}, obj)
	s.Observe(Round{P95Ms: 10, SuccessRatio: 1})
	s.Observe(Round{P95Ms: 12, SuccessRatio: 1})
	if p := s.Result().Probes[0]; p.Verdict != Pass || p.P95Ms != 12 {
		t.Fatalf("probe %+v: want pass with the worse round's p95", p)
	}
	// One round: noise unknown, said so.
	s = NewSearch(Policy{Start: 100, Rounds: 1}, obj)
	s.Observe(Round{P95Ms: 10, SuccessRatio: 1})
	if p := s.Result().Probes[0]; p.Verdict != Pass || !strings.Contains(p.Noise, "unknown") {
		t.Fatalf("probe %+v", p)
	}
}

func TestSearchStopsOnHardFailure(t *testing.T) {
	t.Parallel()
	q := &queue{mu: 700, dieAt: 400}
	s := NewSearch(Policy{Start: 100, Rounds: 2}, obj)
	steps := drive(t, s, q)
	r := s.Result()
	if r.Status != StatusHard || r.Capacity != 200 || !strings.Contains(r.Reason, "target stopped answering") {
		t.Fatalf("%s: %s", r.Status, r.Line())
	}
	if last := steps[len(steps)-1]; last.Rate != 400 || last.Round != 1 {
		t.Errorf("last step %+v: the search went on after the hard failure", last)
	}
	if !s.Next().Done {
		t.Error("not done")
	}
}

// A starved generator invalidates a round: it is run again once, and a
// probe that stays invalid ends the search with the bound unknown, never
// read as the server breaking.
func TestSearchInvalidProbe(t *testing.T) {
	t.Parallel()
	q := &queue{mu: 700, starveAt: 400}
	s := NewSearch(Policy{Start: 100, Rounds: 2, Retries: 1}, obj)
	drive(t, s, q)
	r := s.Result()
	if r.Status != StatusInvalid || r.Capacity != 200 || r.Upper != 0 {
		t.Fatalf("%s: %s", r.Status, r.Line())
	}
	last := r.Probes[len(r.Probes)-1]
	if last.Verdict != Invalid || len(last.Rounds) != 2 || !strings.Contains(r.Reason, "generator_starved") {
		t.Fatalf("last probe %+v", last)
	}
	if r.Bracket() != "≥ 200/s" {
		t.Errorf("bracket %q", r.Bracket())
	}
}

func TestSearchEdges(t *testing.T) {
	t.Parallel()
	// Broken at the start: steps down, then bisects.
	q := &queue{mu: 300}
	s := NewSearch(Policy{Start: 1000, Rounds: 1}, obj)
	drive(t, s, q)
	r := s.Result()
	if truth := q.truth(obj.P95Ms); r.Status != StatusFound || r.Capacity > truth || r.Upper <= truth {
		t.Fatalf("from above: %s, truth %.1f", r.Line(), truth)
	}
	if r.Probes[1].Rate != 500 {
		t.Errorf("second probe %v, want 500 (one step down)", r.Probes[1].Rate)
	}
	// Never breaks below the maximum.
	s = NewSearch(Policy{Start: 100, Max: 500, Rounds: 1}, obj)
	drive(t, s, &queue{mu: 100000})
	if r := s.Result(); r.Status != StatusAboveMax || r.Capacity != 500 {
		t.Fatalf("above max: %s %s", r.Status, r.Line())
	}
	// Broken down to the minimum.
	s = NewSearch(Policy{Start: 100, Min: 20, Rounds: 1}, obj)
	drive(t, s, &queue{mu: 10})
	if r := s.Result(); r.Status != StatusBelowMin || r.Capacity != 0 || r.Bracket() != "< 25/s" && r.Bracket() != "< 20/s" {
		t.Fatalf("below min: %s %s", r.Status, r.Line())
	}
	// Bounded.
	s = NewSearch(Policy{Start: 1, Rounds: 1, MaxProbes: 3}, obj)
	drive(t, s, &queue{mu: 100000})
	if r := s.Result(); r.Status != StatusLimit || len(r.Probes) != 3 {
		t.Fatalf("limit: %s %d", r.Status, len(r.Probes))
	}
}

// The same rounds lead to the same steps: a resumed search replays the
// finished runs and continues where it stopped.
func TestSearchReplays(t *testing.T) {
	t.Parallel()
	q := &queue{mu: 700, noise: 0.05, rng: rand.New(rand.NewPCG(1, 2))}
	a := NewSearch(Policy{Start: 100}, obj)
	var rounds []Round
	for range 200 {
		st := a.Next()
		if st.Done {
			break
		}
		r := q.round(st.Rate)
		rounds = append(rounds, r)
		a.Observe(r)
	}
	b := NewSearch(Policy{Start: 100}, obj)
	for i, r := range rounds {
		if i == len(rounds)/2 {
			// A resume here asks for exactly the next round.
			if st := b.Next(); st.Rate != rateOf(rounds[i]) {
				t.Fatalf("resumed step %+v, want %s", st, rounds[i].RunID)
			}
		}
		b.Observe(r)
	}
	if a.Result().Line() != b.Result().Line() || !b.Next().Done {
		t.Fatalf("replay differs: %s vs %s", a.Result().Line(), b.Result().Line())
	}
}

func rateOf(r Round) float64 {
	var v float64
	_, _ = fmt.Sscanf(r.RunID, "%g/s", &v)
	return v
}

func TestNiceRate(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]float64{612.345: 612, 1234.5: 1230, 0.0012: 0.01, 87.654: 87.7, 100: 100} {
		if got := niceRate(in); got != want {
			t.Errorf("niceRate(%v) = %v, want %v", in, got, want)
		}
	}
}

// TestRateLabel (issue 23): a measured rate printed as "387.733/s"; rates
// read with the precision a rate has, and every rate a search probes (three
// significant digits) reads as it is.
func TestRateLabel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    float64
		want string
	}{{387.733, "388/s"}, {610, "610/s"}, {1234.5, "1235/s"}, {62.5, "62.5/s"}, {12.345, "12.3/s"}, {7.777, "7.78/s"}, {0.01, "0.01/s"}, {0, "0/s"}} {
		if got := RateLabel(c.v); got != c.want {
			t.Errorf("RateLabel(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	for v := 0.01; v < 100000; v *= 1.07 {
		n := niceRate(v)
		if got, want := RateLabel(n), strconv.FormatFloat(n, 'f', -1, 64)+"/s"; got != want {
			t.Errorf("probe rate %v reads %q, want %q", n, got, want)
		}
	}
}
