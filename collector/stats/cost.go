package stats

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/table"
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
func IdleCores(samples []ResourceSample, from, to time.Time) (Idle, bool) {
	idle := Idle{Start: from, End: to, Method: "cumulative"}
	byName := map[string][]ResourceSample{}
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
	idle.Cores = round4(idle.Cores)
	return idle, found
}

// CostPoint is a run on the cost curve: the rate it served (responses
// completed in its measured window ÷ the window) and the engine cores over
// the same window (from the CPU per exchange, so the same interval and the
// same counter). ok is false for a run without engine CPU or responses.
func CostPoint(r *Run) (curve.Point, bool) {
	if r == nil || r.Sanity || r.Status != StatusDone || r.EngineCPU == nil || r.MeasuredSeconds <= 0 {
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
func CostCurve(runs []*Run) (*curve.Fit, *curve.Curve) {
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
}

// ObservedCost is one stage's observed CPU per exchange.
type ObservedCost struct {
	TargetRPS float64 `json:"target_rps"`
	CPUMs     float64 `json:"cpu_ms_per_exchange"`
}

// buildCost fills the summary's marginal cost from its runs.
func (s *Summary) buildCost(runs []*Run) {
	fit, cc := CostCurve(runs)
	if fit == nil && s.Idle == nil {
		s.Cost = nil
		return
	}
	c := &Cost{Definition: curve.FitDefinition, Fit: fit, Idle: s.Idle}
	if cc != nil {
		c.CurveDefinition, c.Curve = curve.CurveDefinition, cc
	}
	if cc.Bent() {
		s.Warnings = append(s.Warnings, Warn(WarnMarginalCostVaries, "", costVaries(cc)))
	}
	for _, st := range s.Stages {
		if r := st.Reported(); r != nil && r.EngineCPU != nil && r.EngineCPU.CPUMsPerExchange > 0 {
			c.Observed = append(c.Observed, ObservedCost{TargetRPS: st.TargetRPS, CPUMs: r.EngineCPU.CPUMsPerExchange})
		}
	}
	s.Cost = c
}

// Lines are the marginal cost in words: the fit, the idle engine beside
// its intercept, and the observed figure beside the slope.
func (c *Cost) Lines() []string {
	if c == nil {
		return nil
	}
	out := []string{c.Fit.Line()}
	bent := c.Curve.Bent()
	if bent {
		out = []string{c.Curve.Line(), c.Curve.BandLine()}
	}
	if c.Idle != nil {
		l := fmt.Sprintf("engine at rest: %.3f cores over %s (%s)", c.Idle.Cores, c.Idle.End.Sub(c.Idle.Start).Round(time.Second), c.Idle.Method)
		switch first := firstSegment(c.Curve); {
		case bent && first != nil && first.Marginal != nil:
			l += fmt.Sprintf("; the curve's first straight line (%s) extrapolated to rate 0 gives %.3f cores, %+.3f",
				curve.RangeLabel(first.From, first.To), first.Intercept, first.Intercept-c.Idle.Cores)
		case !bent && c.Fit.OK():
			l += fmt.Sprintf("; the fit's fixed cost %.3f cores differs by %+.3f", c.Fit.FixedCores, c.Fit.FixedCores-c.Idle.Cores)
		}
		out = append(out, l)
	}
	if len(c.Observed) > 0 {
		var parts []string
		for _, o := range c.Observed {
			parts = append(parts, fmt.Sprintf("%s %.3f", StageLabel(o.TargetRPS), o.CPUMs))
		}
		out = append(out, "observed CPU-ms per exchange, fixed cost included (the article's figure): "+strings.Join(parts, ", "))
	}
	return out
}

// Short is the marginal cost in one line for a dashboard panel: the
// straight line's slope, or the curve's segments when no single line
// holds ("" when neither can be given).
func (c *Cost) Short() string {
	switch {
	case c == nil:
		return ""
	case c.Curve.Bent():
		var parts []string
		for _, s := range c.Curve.Segments {
			if s.Marginal != nil {
				parts = append(parts, fmt.Sprintf("%.3g over %s", s.Marginal.CPUMs, curve.RangeLabel(s.From, s.To)))
			}
		}
		return "marginal CPU-ms/ex " + c.Curve.Direction() + ": " + strings.Join(parts, " · ")
	case c.Fit.OK():
		return fmt.Sprintf("marginal %.3f CPU-ms/ex (95%% CI %.3f–%.3f) · fixed %.3f cores", c.Fit.MarginalCPUMs,
			c.Fit.MarginalCPUMsCI[0], c.Fit.MarginalCPUMsCI[1], c.Fit.FixedCores)
	}
	return ""
}

// Project sets the projection for rate (0: none) from the fit and, when
// a capacity was searched, the engine's capacity under its objective.
func (s *Summary) Project(rate float64) {
	s.Projection = nil
	if rate <= 0 || s.Cost == nil {
		return
	}
	capacity, objective := 0.0, ""
	if s.Capacity != nil && s.Capacity.Capacity > 0 {
		capacity, objective = s.Capacity.Capacity, s.Capacity.Objective.String()
	}
	if s.Cost.Curve.Bent() {
		s.Projection = curve.ProjectCurve(s.Cost.Curve, rate, capacity, objective)
		return
	}
	s.Projection = curve.Project(s.Cost.Fit, rate, capacity, objective)
}

func firstSegment(c *curve.Curve) *curve.Segment {
	if c == nil || len(c.Segments) == 0 {
		return nil
	}
	return &c.Segments[0]
}

// costVaries is the marginal_cost_varies warning's detail.
func costVaries(c *curve.Curve) string {
	var parts []string
	for _, s := range c.Segments {
		if s.Marginal != nil {
			parts = append(parts, fmt.Sprintf("%.3f over %s", s.Marginal.CPUMs, curve.RangeLabel(s.From, s.To)))
		}
	}
	return "the marginal cost " + c.Direction() + " with the rate (CPU-ms per exchange " + strings.Join(parts, ", ") +
		"): no single figure describes this server; see marginal_cost.curve"
}

// CostLines are the capacity, the marginal cost and the projection in
// words, for terminals and summary.md.
func (s *Summary) CostLines() []string {
	var out []string
	if s.Capacity != nil {
		out = append(out, s.Capacity.Line())
	}
	out = append(out, s.Cost.Lines()...)
	if s.Projection != nil {
		out = append(out, s.Projection.Line+" — assuming "+strings.Join(s.Projection.Assumptions, "; "))
	}
	return out
}

func (s *Summary) costMarkdown(b *strings.Builder) {
	lines := s.CostLines()
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n## Capacity and marginal cost\n\n")
	for _, l := range lines {
		b.WriteString("- " + l + "\n")
	}
	if s.Capacity != nil && len(s.Capacity.Probes) > 0 {
		b.WriteString("\n" + ProbeTable(s.Capacity).Markdown())
	}
}

// ProbeTable is the capacity search's probes in the order they ran.
func ProbeTable(r *curve.Result) table.Table {
	t := table.New("#", "Rate", "Rounds", "p50", "p95", "p99", "Success", "Achieved", "Engine cores", "Verdict")
	t.ID = "probes"
	t.Columns[len(t.Columns)-1].Align = table.Left
	for i, p := range r.Probes {
		verdict := string(p.Verdict)
		switch {
		case len(p.Broken) > 0:
			verdict += ": " + strings.Join(p.Broken, "; ")
		case p.Reason != "":
			verdict += ": " + p.Reason
		}
		if p.Noise != "" {
			verdict += " (" + p.Noise + ")"
		}
		cores := "n/a"
		if p.EngineCores > 0 {
			cores = fmt.Sprintf("%.3f", p.EngineCores)
		}
		valid := len(p.Valid())
		rounds := fmt.Sprintf("%d", len(p.Rounds))
		if valid != len(p.Rounds) {
			rounds = fmt.Sprintf("%d (%d valid)", len(p.Rounds), valid)
		}
		row := []string{fmt.Sprint(i + 1), StageLabel(p.Rate), rounds, "", "", "", "", "", cores, verdict}
		if valid > 0 {
			row[3], row[4], row[5] = ms(p.P50Ms), ms(p.P95Ms), ms(p.P99Ms)
			row[6], row[7] = fmt.Sprintf("%.2f%%", p.SuccessRatio*100), fmt.Sprintf("%.1f/s", p.AchievedRPS)
		}
		tone := table.Plain
		switch p.Verdict {
		case curve.Pass:
			tone = table.Good
		case curve.Broken, curve.Hard:
			tone = table.Bad
		case curve.Invalid:
			tone = table.Warn
		}
		t.AddTone(tone, row...)
	}
	return t
}

// SearchRound is a finished run as the capacity search judges it: a run
// that could not finish is a hard failure, and a run whose figures are the
// generator's or the host's (an invalidating warning the thresholds do not
// allow; the engine CPU's own warning aside, latency does not depend on
// it) is invalid rather than broken.
func SearchRound(r *Run, th Thresholds) curve.Round {
	rd := curve.Round{RunID: r.ID, P50Ms: r.LatencyMs.P50, P95Ms: r.LatencyMs.P95, P99Ms: r.LatencyMs.P99,
		SuccessRatio: r.SuccessRatio, Dropped: r.Dropped, Requests: r.Requests, AchievedRPS: r.AchievedRPS}
	if p, ok := CostPoint(r); ok {
		rd.EngineCores = round4(p.Cores)
	}
	if r.Status != StatusDone {
		rd.Hard = string(r.Status)
		if r.Reason != "" {
			rd.Hard += ": " + r.Reason
		}
		return rd
	}
	for _, w := range r.Warnings {
		if w.Code.Invalidating() && w.Code != WarnEngineCPUImplausible && !th.Allows(w.Code) {
			rd.Invalid = string(w.Code) + ": " + w.Detail
			break
		}
	}
	return rd
}

// SearchSpec is how a capacity campaign searches, recorded in its manifest
// when it starts: a resume continues the search, and a summary recomputed
// from the evidence replays it over the runs.
type SearchSpec struct {
	Policy    curve.Policy    `json:"policy"`
	Objective curve.Objective `json:"objective"`
	// Thresholds say which warnings invalidate a round (SearchRound).
	Thresholds Thresholds `json:"thresholds"`
}

// ReplaySearch is spec's search over runs, the campaign's runs in the
// order they ran: the search is a function of its finished rounds, so the
// probes replay until a run the search did not ask for, an interrupted
// one, or one still under way. nil when spec cannot describe a search (a
// manifest may be hostile).
func ReplaySearch(spec SearchSpec, runs []*Run) *curve.Result {
	if !spec.Policy.Finite() {
		return nil
	}
	s := curve.NewSearch(spec.Policy, spec.Objective)
	for _, r := range runs {
		if r == nil || r.Sanity {
			continue
		}
		step := s.Next()
		if step.Done || r.TargetRPS != step.Rate || (r.Status != StatusDone && r.Status != StatusFailed) {
			break
		}
		s.Observe(SearchRound(r, spec.Thresholds))
	}
	res := s.Result()
	return &res
}
