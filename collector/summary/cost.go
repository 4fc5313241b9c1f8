package summary

import (
	"sort"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// Idle is the engine measured at rest, before the campaign's first run.
type Idle struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Cores   float64   `json:"cores"`
	Method  string    `json:"method"` // cumulative or rate, as engine_cpu
	Samples int       `json:"samples"`
	Source  string    `json:"source,omitempty"`
}

// IdleCores measures the engines over [from, to] from their samples: per
// engine the cumulative counter's increase over the time between its first
// and last sample in the window (method cumulative), else the average of
// the sampled rates; the engines summed. ok is false without two samples
// of any engine.
func IdleCores(samples []sample.Resource, from, to time.Time) (Idle, bool) {
	idle := Idle{Start: from, End: to, Method: "cumulative"}
	byName := map[string][]sample.Resource{}
	var names []string
	for _, s := range samples {
		if s.Kind != "engine" || s.AtUS < from.UnixMicro() || s.AtUS > to.UnixMicro() {
			continue
		}
		if byName[s.Name] == nil {
			names = append(names, s.Name)
		}
		byName[s.Name] = append(byName[s.Name], s)
		idle.Samples++
		idle.Source = s.Source
	}
	sort.Strings(names)
	found := false
	for _, n := range names {
		ss := byName[n]
		if len(ss) < 2 {
			continue
		}
		first, last := ss[0], ss[len(ss)-1]
		secs := float64(last.AtUS-first.AtUS) / 1e6
		if first.CPUSecondsTotal > 0 && last.CPUSecondsTotal >= first.CPUSecondsTotal && secs > 0 {
			idle.Cores += (last.CPUSecondsTotal - first.CPUSecondsTotal) / secs
		} else {
			var sum float64
			for _, s := range ss[1:] { // the first rate covers time before the window
				sum += s.CPUMillicores
			}
			idle.Cores += sum / float64(len(ss)-1) / 1000
			idle.Method = "rate"
		}
		found = true
	}
	idle.Cores = stats.Round4(idle.Cores)
	return idle, found
}

// CostPoint is a run on the cost curve: the rate it served (responses
// completed in its measured window ÷ the window) and the engine cores over
// the same window (from the CPU per exchange, so the same interval and the
// same counter). ok is false for a run without engine CPU or responses.
func CostPoint(r *stats.Run) (curve.Point, bool) {
	if r == nil || r.Sanity || r.Status != stats.StatusDone || r.EngineCPU == nil || r.MeasuredSeconds <= 0 {
		return curve.Point{}, false
	}
	c := r.EngineCPU
	if c.Exchanges <= 0 || c.CPUMsPerExchange <= 0 {
		return curve.Point{}, false
	}
	rate := float64(c.Exchanges) / r.MeasuredSeconds
	cores := c.CPUMsPerExchange * float64(c.Exchanges) / 1000 / r.MeasuredSeconds
	return curve.Point{Run: r.ID, Rate: rate, Cores: cores, Target: r.TargetRPS}, true
}

// CostCurve is the straight-line fit and the cost curve over the finished
// runs (nil, nil: no run with engine CPU; a nil curve: fewer than two
// rates or three runs).
func CostCurve(runs []*stats.Run) (*curve.Fit, *curve.Curve) {
	var pts []curve.Point
	var targets []float64
	for _, r := range runs {
		if p, ok := CostPoint(r); ok {
			pts = append(pts, p)
			targets = append(targets, r.TargetRPS)
		}
	}
	f := curve.FitCost(pts, curve.Distinct(targets))
	return f, curve.FitCurve(pts, f)
}

// LeftOut is a run the cost fit leaves out, and why.
type LeftOut struct {
	Run       string  `json:"run"`
	TargetRPS float64 `json:"target_rps"`
	Reason    string  `json:"reason"`
}

// AtCeiling splits a capacity search's runs for the cost fit: the rounds
// of a probe that broke the objective are left out. The engine could not
// serve that rate within the objective, so its cores there are its
// ceiling (work queued, and abandoned by the client, included), not the
// cost of the exchanges it served: against a server of constant cost they
// bend the curve at the capacity. A nil search leaves every run in.
func AtCeiling(runs []*stats.Run, res *curve.Result) (kept []*stats.Run, out []LeftOut) {
	broken := map[string]LeftOut{}
	if res != nil {
		for _, p := range res.Probes {
			if p.Verdict != curve.Broken {
				continue
			}
			why := "broke the objective"
			if len(p.Broken) > 0 {
				why += " (" + p.Broken[0] + ")"
			}
			for _, r := range p.Rounds {
				broken[r.RunID] = LeftOut{Run: r.RunID, TargetRPS: p.Rate, Reason: why}
			}
		}
	}
	for _, r := range runs {
		if l, ok := broken[r.ID]; ok && r.ID != "" {
			if _, on := CostPoint(r); on {
				out = append(out, l)
			}
			continue
		}
		kept = append(kept, r)
	}
	return kept, out
}

// Cost is summary.json's marginal-cost section: the fit, the cost curve,
// the idle engine beside its intercept, and the observed CPU per exchange
// the article reports (fixed overhead included) for comparison. When the
// curve is bent (no single straight line holds) it is the answer, and the
// straight line's fit stays only for what compares with it.
type Cost struct {
	Definition string     `json:"definition"`
	Fit        *curve.Fit `json:"fit,omitempty"`
	// Curve is absent from evidence written before it: that evidence
	// reports its straight line as it did.
	CurveDefinition string       `json:"curve_definition,omitempty"`
	Curve           *curve.Curve `json:"curve,omitempty"`
	Idle            *Idle        `json:"idle,omitempty"`
	// Observed is the reported run's CPU-ms per exchange per stage.
	Observed []ObservedCost `json:"observed"`
	// LeftOut are the runs at the engine's ceiling that the fit and the
	// curve leave out (AtCeiling).
	LeftOut []LeftOut `json:"left_out,omitempty"`
}

// ObservedCost is one stage's observed CPU per exchange.
type ObservedCost struct {
	TargetRPS float64 `json:"target_rps"`
	CPUMs     float64 `json:"cpu_ms_per_exchange"`
}

// buildCost fills the summary's marginal cost from its runs.
func (s *Summary) buildCost(runs []*stats.Run) {
	kept, out := AtCeiling(runs, s.Capacity)
	fit, cc := CostCurve(kept)
	if fit == nil && s.Idle == nil {
		s.Cost = nil
		return
	}
	c := &Cost{Definition: curve.FitDefinition, Fit: fit, Idle: s.Idle, LeftOut: out}
	if cc != nil {
		c.CurveDefinition, c.Curve = curve.CurveDefinition, cc
	}
	if cc.Bent() {
		s.Warnings = append(s.Warnings, stats.Warn(stats.WarnMarginalCostVaries, "", cc.VariesDetail()))
	}
	for _, st := range s.Stages {
		if st.Replicas != baseReplicas(runs) {
			continue // a campaign over engine counts: the base count's, the others' are in Scaling
		}
		if r := st.Reported(); r != nil && r.EngineCPU != nil && r.EngineCPU.CPUMsPerExchange > 0 {
			c.Observed = append(c.Observed, ObservedCost{TargetRPS: st.TargetRPS, CPUMs: r.EngineCPU.CPUMsPerExchange})
		}
	}
	s.Cost = c
}
