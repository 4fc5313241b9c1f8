// Package curve is the arithmetic of the cost curve: the capacity search
// policy (exponential steps, then bisection), the linear fit of engine
// cores against rate (fixed and marginal cost), and latency periodicity.
// It is pure: numbers in, numbers out, no clock, no I/O, so that a search
// can be replayed from evidence and tested against a simulated target.
package curve

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Objective is what the service must meet at a rate to count as serving it.
type Objective struct {
	P95Ms        float64 `json:"p95_ms"`
	P99Ms        float64 `json:"p99_ms,omitempty"` // 0: not checked
	SuccessRatio float64 `json:"success_ratio"`
	MaxDropped   int64   `json:"max_dropped"`
}

// String renders "p95 < 10 ms, p99 < 50 ms, success ≥ 99%, dropped ≤ 0".
func (o Objective) String() string {
	s := fmt.Sprintf("p95 < %g ms", o.P95Ms)
	if o.P99Ms > 0 {
		s += fmt.Sprintf(", p99 < %g ms", o.P99Ms)
	}
	return s + fmt.Sprintf(", success ≥ %g%%, dropped ≤ %d", o.SuccessRatio*100, o.MaxDropped)
}

// Round is one run of a probe, as the search judges it.
type Round struct {
	RunID        string  `json:"run"`
	P50Ms        float64 `json:"p50_ms"`
	P95Ms        float64 `json:"p95_ms"`
	P99Ms        float64 `json:"p99_ms"`
	SuccessRatio float64 `json:"success_ratio"`
	Dropped      int64   `json:"dropped"`
	Requests     int64   `json:"requests"`
	AchievedRPS  float64 `json:"achieved_rps"`
	EngineCores  float64 `json:"engine_cores,omitempty"` // 0: unknown
	// Invalid says why the round measured the load generator or the host,
	// not the server (a coded warning: generator_starved, host_saturated…):
	// it neither passes nor breaks the objective.
	Invalid string `json:"invalid,omitempty"`
	// Hard is a failure that ends the search: the target stopped
	// answering, the evidence cannot be written, nothing succeeded.
	Hard string `json:"hard,omitempty"`
}

// Verdict of a probe.
type Verdict string

const (
	Pass    Verdict = "pass"    // the objective holds at the rate
	Broken  Verdict = "broken"  // it does not
	Invalid Verdict = "invalid" // the measurement is the generator's or the host's
	Hard    Verdict = "hard"    // the target failed outright
)

// Probe is one rate the search tried: its rounds and what they showed.
type Probe struct {
	Rate    float64 `json:"rate"`
	Rounds  []Round `json:"rounds"`
	Verdict Verdict `json:"verdict"`
	// Broken lists the objectives the probe broke, the furthest beyond its
	// limit first ("p95 14.2 ms ≥ 10 ms").
	Broken []string `json:"broken,omitempty"`
	// Noise says how round-to-round noise entered the verdict.
	Noise  string `json:"noise,omitempty"`
	Reason string `json:"reason,omitempty"` // invalid or hard: why
	// Figures of the median round (the worse middle of an even count).
	P50Ms, P95Ms, P99Ms float64
	SuccessRatio        float64
	AchievedRPS         float64
	EngineCores         float64
}

// Valid returns the rounds that measured the server.
func (p *Probe) Valid() []Round {
	var out []Round
	for _, r := range p.Rounds {
		if r.Invalid == "" && r.Hard == "" {
			out = append(out, r)
		}
	}
	return out
}

// Policy is how the search moves.
type Policy struct {
	Start      float64       `json:"start"`      // first probe, exchanges/s
	Min        float64       `json:"min"`        // the lowest rate the search may probe
	Max        float64       `json:"max"`        // the highest
	Factor     float64       `json:"factor"`     // exponential step; default 2
	Resolution float64       `json:"resolution"` // stop when (upper − lower) ≤ Resolution × lower; default 0.05
	Rounds     int           `json:"rounds"`     // rounds per probe; default 2 (noise needs two)
	MaxRounds  int           `json:"max_rounds"` // rounds when the verdict is within noise; default Rounds + 1
	Retries    int           `json:"retries"`    // invalid rounds re-run per probe before it is invalid; default 1
	MaxProbes  int           `json:"max_probes"` // default 30
	CoolDown   time.Duration `json:"cool_down"`  // idle time after a broken or invalid probe
}

// Finite reports a policy whose rates are all finite numbers (one read
// from a file may not be).
func (p Policy) Finite() bool {
	for _, v := range []float64{p.Start, p.Min, p.Max, p.Factor, p.Resolution} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// WithDefaults fills unset fields.
func (p Policy) WithDefaults() Policy {
	if p.Factor <= 1 {
		p.Factor = 2
	}
	if p.Resolution <= 0 {
		p.Resolution = 0.05
	}
	if p.Rounds < 1 {
		p.Rounds = 2
	}
	if p.MaxRounds < p.Rounds {
		p.MaxRounds = p.Rounds + 1
	}
	if p.Retries < 0 {
		p.Retries = 0
	}
	if p.MaxProbes < 1 {
		p.MaxProbes = 30
	}
	if p.Min <= 0 {
		p.Min = 0.01
	}
	if p.Max <= 0 {
		p.Max = 100000
	}
	if p.Start <= 0 {
		p.Start = 100
	}
	p.Start = math.Min(math.Max(p.Start, p.Min), p.Max)
	return p
}

// MaxSteps bounds the rounds a search under p can ask for.
func MaxSteps(p Policy) int {
	p = p.WithDefaults()
	return p.MaxProbes * (p.MaxRounds + p.Retries)
}

// Step is what to run next.
type Step struct {
	Rate     float64
	Round    int           // 1-based, within the probe
	CoolDown time.Duration // wait this long first (after a broken or invalid probe)
	Done     bool
}

// Status of a search.
const (
	StatusRunning  = "running"
	StatusFound    = "found"     // a bracket to the resolution
	StatusAboveMax = "above_max" // the objective held up to the search's maximum
	StatusBelowMin = "below_min" // the objective broke down to the minimum
	StatusHard     = "hard_failure"
	StatusInvalid  = "invalid"     // the generator or host limited the measurement
	StatusLimit    = "probe_limit" // MaxProbes reached
)

// Search is the state of a capacity search. Feed it the rounds Next asks
// for, in order: the same rounds always lead to the same steps, which is
// what makes a search resumable and replayable from its evidence.
type Search struct {
	Policy    Policy
	Objective Objective
	probes    []*Probe
	lower     float64 // highest rate that passed
	upper     float64 // lowest rate that broke (0: none yet)
	next      float64 // rate of the probe under way
	cool      time.Duration
	status    string
	reason    string
}

// NewSearch starts a search.
func NewSearch(p Policy, o Objective) *Search {
	p = p.WithDefaults()
	return &Search{Policy: p, Objective: o, next: niceRate(p.Start), status: StatusRunning}
}

// Next is the step to run now.
func (s *Search) Next() Step {
	if s.status != StatusRunning {
		return Step{Done: true}
	}
	cur := s.current()
	if cur == nil {
		return Step{Rate: s.next, Round: 1, CoolDown: s.cool}
	}
	return Step{Rate: cur.Rate, Round: len(cur.Rounds) + 1}
}

func (s *Search) current() *Probe {
	if n := len(s.probes); n > 0 && s.probes[n-1].Verdict == "" {
		return s.probes[n-1]
	}
	return nil
}

// Observe files the round Next asked for and moves the search on once the
// probe is judged.
func (s *Search) Observe(r Round) {
	if s.status != StatusRunning {
		return
	}
	cur := s.current()
	if cur == nil {
		cur = &Probe{Rate: s.next}
		s.probes = append(s.probes, cur)
		s.cool = 0
	}
	cur.Rounds = append(cur.Rounds, r)
	if !s.judge(cur) {
		return
	}
	s.move(cur)
}

// judge decides the probe once it has enough rounds; false: run another.
func (s *Search) judge(p *Probe) bool {
	last := p.Rounds[len(p.Rounds)-1]
	if last.Hard != "" {
		p.Verdict, p.Reason = Hard, last.Hard
		return true
	}
	valid := p.Valid()
	invalid := len(p.Rounds) - len(valid)
	if last.Invalid != "" && invalid > s.Policy.Retries {
		p.Verdict, p.Reason = Invalid, last.Invalid
		return true
	}
	if len(valid) < s.Policy.Rounds {
		return false
	}
	p.fill(valid)
	var clear, noisy, missed []string
	for _, f := range s.Objective.check(valid) {
		switch {
		case !f.met && !f.noisy:
			clear = append(clear, f.text)
		case f.noisy:
			noisy = append(noisy, f.text)
		}
		if !f.met {
			missed = append(missed, f.text)
		}
	}
	switch {
	case len(clear) > 0:
		p.Verdict, p.Broken = Broken, missed
	case len(noisy) > 0 && len(valid) < s.Policy.MaxRounds:
		return false // within noise of a limit: one more round decides
	case len(missed) > 0:
		p.Verdict, p.Broken = Broken, missed
	default:
		p.Verdict = Pass
	}
	if len(noisy) > 0 {
		p.Noise = "within noise of a limit after " + plural(len(valid), "round") + ": decided by the median round"
	}
	if len(valid) == 1 && p.Noise == "" {
		p.Noise = "noise unknown (one round)"
	}
	return true
}

// fill sets the probe's figures from its median round by p95.
func (p *Probe) fill(valid []Round) {
	m := medianRound(valid, func(r Round) float64 { return r.P95Ms })
	p.P50Ms, p.P95Ms, p.P99Ms = m.P50Ms, m.P95Ms, m.P99Ms
	p.SuccessRatio, p.AchievedRPS, p.EngineCores = m.SuccessRatio, m.AchievedRPS, m.EngineCores
}

// move updates the bracket and picks the next rate.
func (s *Search) move(p *Probe) {
	switch p.Verdict {
	case Hard:
		s.stop(StatusHard, fmt.Sprintf("hard failure at %s: %s", RateLabel(p.Rate), p.Reason))
		return
	case Invalid:
		s.stop(StatusInvalid, fmt.Sprintf("the measurement at %s is not the server's: %s", RateLabel(p.Rate), p.Reason))
		return
	case Pass:
		s.lower = math.Max(s.lower, p.Rate)
	case Broken:
		if s.upper == 0 || p.Rate < s.upper {
			s.upper = p.Rate
		}
		s.cool = s.Policy.CoolDown
	}
	if len(s.probes) >= s.Policy.MaxProbes {
		s.stop(StatusLimit, fmt.Sprintf("stopped after %d probes", len(s.probes)))
		return
	}
	pol := s.Policy
	switch {
	case s.upper == 0: // still climbing
		if p.Rate >= pol.Max {
			s.stop(StatusAboveMax, fmt.Sprintf("the objective held up to the search's maximum, %s", RateLabel(pol.Max)))
			return
		}
		s.next = niceRate(math.Min(p.Rate*pol.Factor, pol.Max))
	case s.lower == 0: // broke at the start: step down
		if p.Rate <= pol.Min {
			s.stop(StatusBelowMin, fmt.Sprintf("the objective broke down to the search's minimum, %s", RateLabel(pol.Min)))
			return
		}
		s.next = niceRate(math.Max(p.Rate/pol.Factor, pol.Min))
	default: // bisection
		if s.upper-s.lower <= pol.Resolution*s.lower {
			s.stop(StatusFound, "")
			return
		}
		mid := niceRate((s.lower + s.upper) / 2)
		if mid <= s.lower || mid >= s.upper {
			s.stop(StatusFound, "")
			return
		}
		s.next = mid
	}
	if s.next == p.Rate && p.Verdict != Pass {
		s.stop(StatusBelowMin, fmt.Sprintf("the objective broke at the search's minimum, %s", RateLabel(pol.Min)))
	}
}

func (s *Search) stop(status, reason string) { s.status, s.reason = status, reason }

// Result is the search so far (or its end).
type Result struct {
	Status    string    `json:"status"`
	Reason    string    `json:"reason,omitempty"`
	Objective Objective `json:"objective"`
	// Capacity is the highest rate that met the objective (0: none did);
	// Upper the lowest that broke it (0: none did).
	Capacity   float64 `json:"capacity_rps"`
	Upper      float64 `json:"upper_rps,omitempty"`
	Resolution float64 `json:"resolution"`
	// BrokeFirst are the objectives broken at the lowest rate that broke,
	// the furthest beyond its limit first.
	BrokeFirst []string `json:"broke_first,omitempty"`
	Probes     []Probe  `json:"probes"`
}

// Result reports the search.
func (s *Search) Result() Result {
	r := Result{Status: s.status, Reason: s.reason, Objective: s.Objective, Capacity: s.lower, Upper: s.upper,
		Resolution: s.Policy.Resolution}
	for _, p := range s.probes {
		r.Probes = append(r.Probes, *p)
		if p.Verdict == Broken && p.Rate == s.upper {
			r.BrokeFirst = p.Broken
		}
	}
	return r
}

// Bracket is "≥ 610/s, < 640/s" (or one side when the other is unknown).
func (r Result) Bracket() string {
	switch {
	case r.Capacity > 0 && r.Upper > 0:
		return "≥ " + RateLabel(r.Capacity) + ", < " + RateLabel(r.Upper)
	case r.Capacity > 0:
		return "≥ " + RateLabel(r.Capacity)
	case r.Upper > 0:
		return "< " + RateLabel(r.Upper)
	}
	return "unknown"
}

// Line is one sentence: the capacity, its bracket and what broke first.
func (r Result) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "capacity %s (%s)", r.Bracket(), r.Objective)
	if len(r.BrokeFirst) > 0 {
		b.WriteString("; broke first: " + r.BrokeFirst[0])
	}
	if r.Reason != "" {
		b.WriteString("; " + r.Reason)
	}
	return b.String()
}

// finding is one objective's verdict over a probe's valid rounds.
type finding struct {
	text   string
	excess float64 // how far beyond the limit, relative to it
	met    bool
	noisy  bool // the margin to the limit is within the spread between rounds
}

// check judges valid rounds against the objective with compare's noise
// rule: the median round's figure (the worse middle of an even count)
// against the limit, and a margin no larger than the spread between the
// rounds is within noise.
func (o Objective) check(rounds []Round) []finding {
	var out []finding
	judge := func(get func(Round) float64, limit float64, lowerIsBetter, inclusive bool, format string) {
		vals := make([]float64, len(rounds))
		for i, r := range rounds {
			vals[i] = get(r)
		}
		v := worseMedian(vals, lowerIsBetter)
		spread := 0.0
		if len(vals) > 1 {
			spread = slices.Max(vals) - slices.Min(vals)
		}
		margin := limit - v // > 0: met
		if !lowerIsBetter {
			margin = v - limit
		}
		f := finding{met: margin > 0 || (inclusive && margin == 0)}
		f.noisy = spread > 0 && math.Abs(margin) <= spread
		f.text = fmt.Sprintf(format, v, limit)
		if f.noisy {
			f.text += fmt.Sprintf(" (within the rounds' spread %.3g)", spread)
		}
		f.excess = -margin / math.Max(math.Abs(limit), 1)
		out = append(out, f)
	}
	judge(func(r Round) float64 { return r.P95Ms }, o.P95Ms, true, false, "p95 %.3g ms vs %g ms")
	if o.P99Ms > 0 {
		judge(func(r Round) float64 { return r.P99Ms }, o.P99Ms, true, false, "p99 %.3g ms vs %g ms")
	}
	judge(func(r Round) float64 { return r.SuccessRatio }, o.SuccessRatio, false, true, "success %.4g vs %g")
	judge(func(r Round) float64 { return float64(r.Dropped) }, float64(o.MaxDropped), true, true, "dropped %.0f vs %.0f")
	sort.SliceStable(out, func(i, j int) bool { return out[i].excess > out[j].excess })
	return out
}

// worseMedian is the median, the worse middle of an even count (higher
// when lower is better).
func worseMedian(v []float64, lowerIsBetter bool) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	if lowerIsBetter {
		return s[n/2]
	}
	return s[n/2-1]
}

func medianRound(rs []Round, key func(Round) float64) Round {
	s := slices.Clone(rs)
	sort.SliceStable(s, func(i, j int) bool { return key(s[i]) < key(s[j]) })
	return s[len(s)/2]
}

// niceRate rounds a rate to three significant digits (at least 0.01/s), so
// that probe rates read well and name runs cleanly.
func niceRate(v float64) float64 {
	if v <= 0.01 {
		return 0.01
	}
	p := math.Pow(10, 3-math.Ceil(math.Log10(v)))
	r := math.Round(v*p) / p
	return math.Max(math.Round(r*100)/100, 0.01)
}

// RateLabel is "610/s": whole above 100/s, one decimal above 10/s, two
// below, trailing zeros cut. A measured rate read "387.733/s"; every rate
// a search probes (three significant digits) reads as it is.
func RateLabel(v float64) string {
	decimals := 2
	switch a := math.Abs(v); {
	case a >= 100:
		decimals = 0
	case a >= 10:
		decimals = 1
	}
	return strconv.FormatFloat(roundTo(v, decimals), 'f', -1, 64) + "/s"
}

func roundTo(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
