package curve

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// CurveDefinition states how the cost curve is fitted (summary.json).
const CurveDefinition = "engine cores against the served rate, one point per run; the runs of a target rate are one measured rate, " +
	"at their median served rate. A continuous piecewise-linear curve whose breaks are measured rates chosen by the data: from " +
	"the straight line, the measured rate whose break most lowers the residual sum of squares becomes a break while its change " +
	"of slope is significant at 99 % (Student's t, Bonferroni over the candidate rates; the straight line's curvature test " +
	"counts for the first break) and larger than 10 %, then breaks that no longer pass are removed. Between two breaks a " +
	"straight line holds: a segment's marginal CPU-ms per exchange is the slope × 1000 of a straight line fitted to the runs " +
	"at its measured rates. A band's, between two neighbouring measured rates, is the slope of the curve with a break at " +
	"every measured rate (model-free). 95 % intervals are analytic: Student's t with n − p degrees of freedom from each " +
	"fit's residuals (the rounds are the replicates). The cores at a rate come from the curve through every measured rate " +
	"within the measured rates, from the end segment's straight line beyond them, and say so."

// Curve selection constants (see CurveDefinition).
const (
	breakAlpha   = 0.01 // family-wise, over the candidate rates
	breakChange  = 0.10 // the least change of slope a break must make
	levelMerge   = 0.01 // measured rates closer than this share of the range are one
	minBreakDoF  = 2    // residual degrees of freedom a curve with breaks keeps
	curveCIAlpha = 0.05
)

// Estimate is a marginal cost in CPU-ms per exchange with its 95 % interval.
type Estimate struct {
	CPUMs float64    `json:"cpu_ms"`
	CI    [2]float64 `json:"ci95"`
}

// Shown reports an estimate whose interval excludes 0: the cores grow
// with the rate there.
func (e Estimate) Shown() bool { return e.CI[0] > 0 }

func (e Estimate) String() string {
	return fmt.Sprintf("%.3f (95%% CI %.3f–%.3f)", e.CPUMs, e.CI[0], e.CI[1])
}

// Cores is engine cores with a 95 % interval.
type Cores struct {
	Cores float64    `json:"cores"`
	CI    [2]float64 `json:"ci95"`
}

// Segment is a range of served rates over which a straight line holds:
// its marginal cost is the slope of a straight line fitted to the runs at
// the measured rates in it (nil without the degrees of freedom).
type Segment struct {
	From     float64   `json:"from_rate"`
	To       float64   `json:"to_rate"`
	Rates    int       `json:"rates"` // measured rates in [From, To]
	Runs     int       `json:"runs"`
	Marginal *Estimate `json:"marginal,omitempty"`
	// Intercept is the line's cores at rate 0 (an extrapolation unless
	// From is 0): cores = Intercept + Marginal × rate over [From, To].
	Intercept float64 `json:"intercept_cores"`
	line      *pwl
}

// Cores is the segment's straight line at rate.
func (s Segment) Cores(rate float64) float64 {
	if s.Marginal == nil {
		return math.NaN()
	}
	return s.Intercept + s.Marginal.CPUMs*rate/1000
}

// Band is the stretch between two neighbouring measured rates.
type Band struct {
	From    float64 `json:"from_rate"`
	To      float64 `json:"to_rate"`
	Segment int     `json:"segment"` // index into Segments
	// Marginal is the slope between these two rates, from the curve with a
	// break at every measured rate: model-free, so honest whatever the
	// shape between them; nil without repeated rounds (no degrees of
	// freedom left).
	Marginal *Estimate `json:"marginal,omitempty"`
}

// Curve is the cost curve of CurveDefinition.
type Curve struct {
	Points   int       `json:"points"`
	Rates    int       `json:"rates"` // distinct measured rates
	MinRate  float64   `json:"min_rate"`
	MaxRate  float64   `json:"max_rate"`
	Breaks   []float64 `json:"breaks"`
	Segments []Segment `json:"segments"`
	Bands    []Band    `json:"bands"`
	// every is the curve through every measured rate (nil without the
	// degrees of freedom); not in summary.json: projections are.
	every *pwl
}

// Bent reports a curve on which no single straight line holds.
func (c *Curve) Bent() bool { return c != nil && len(c.Segments) > 1 }

// At is the curve at rate: the engine cores and the marginal cost, each
// with its 95 % interval, and how rate lies beyond the measured rates
// ("" within them). Within the measured rates both come from the curve
// through every measured rate; beyond them, from the straight line of the
// end segment. ok is false without the degrees of freedom for an interval.
func (c *Curve) At(rate float64) (cores Cores, marginal Estimate, extrapolated string, ok bool) {
	m := c.every
	if extrapolated = c.Extrapolation(rate); extrapolated != "" {
		s := c.Segments[len(c.Segments)-1]
		if rate < c.MinRate {
			s = c.Segments[0]
		}
		m = s.line
	} else if rate >= c.MaxRate && len(c.Bands) > 0 {
		rate = c.MaxRate // the last band's slope, not the one beyond it
	}
	if m == nil {
		return Cores{}, Estimate{}, extrapolated, false
	}
	return m.cores(rate), m.marginal(rate), extrapolated, true
}

// bandAt is the index of the band rate lies in (the upper one at a
// measured rate, the last at the highest).
func (c *Curve) bandAt(rate float64) int {
	for i, b := range c.Bands {
		if rate < b.To {
			return i
		}
	}
	return max(len(c.Bands)-1, 0)
}

// SegmentAt is the index of the segment rate lies in (the first or last
// beyond the measured rates).
func (c *Curve) SegmentAt(rate float64) int {
	for i, s := range c.Segments {
		if rate < s.To || i == len(c.Segments)-1 {
			return i
		}
	}
	return 0
}

// Extrapolation says how rate lies beyond the measured rates, or "".
func (c *Curve) Extrapolation(rate float64) string {
	const tol = 1e-9
	if len(c.Segments) == 0 {
		return ""
	}
	var s Segment
	var where string
	switch {
	case rate > c.MaxRate*(1+tol):
		s, where = c.Segments[len(c.Segments)-1], "beyond the measured %s along the straight line of the curve's last segment (%s%s)"
	case rate < c.MinRate*(1-tol):
		s, where = c.Segments[0], "below the measured %s along the straight line of the curve's first segment (%s%s)"
	default:
		return ""
	}
	slope := ""
	if s.Marginal != nil {
		slope = fmt.Sprintf(", %.3f CPU-ms per exchange", s.Marginal.CPUMs)
	}
	return "extrapolated " + fmt.Sprintf(where, RangeLabel(c.MinRate, c.MaxRate), RangeLabel(s.From, s.To), slope)
}

// VariesDetail is the marginal_cost_varies warning's detail: the
// marginal cost of each segment and where it holds.
func (c *Curve) VariesDetail() string {
	var parts []string
	for _, s := range c.Segments {
		if s.Marginal != nil {
			parts = append(parts, fmt.Sprintf("%.3f over %s", s.Marginal.CPUMs, RangeLabel(s.From, s.To)))
		}
	}
	return "the marginal cost " + c.Direction() + " with the rate (CPU-ms per exchange " + strings.Join(parts, ", ") +
		"): no single figure describes this server; see marginal_cost.curve"
}

// Direction is how the marginal cost moves across the segments: "falls",
// "rises" or "changes".
func (c *Curve) Direction() string {
	up, down := false, false
	for i := 1; i < len(c.Segments); i++ {
		a, b := c.Segments[i-1].Marginal, c.Segments[i].Marginal
		if a == nil || b == nil {
			return "changes"
		}
		up, down = up || b.CPUMs > a.CPUMs, down || b.CPUMs < a.CPUMs
	}
	switch {
	case down && !up:
		return "falls"
	case up && !down:
		return "rises"
	}
	return "changes"
}

// Line is the curve in words: where each straight line holds and its
// marginal cost.
func (c *Curve) Line() string {
	if len(c.Segments) == 0 {
		return "marginal cost: no cost curve"
	}
	parts := make([]string, len(c.Segments))
	for i, s := range c.Segments {
		unit := ""
		if i == 0 {
			unit = " CPU-ms per exchange"
		}
		switch e := s.Marginal; {
		case e == nil:
			parts[i] = fmt.Sprintf("over %s without an interval (one run per rate)", RangeLabel(s.From, s.To))
		case !e.Shown():
			parts[i] = fmt.Sprintf("over %s at %.3f%s (95%% CI %.3f–%.3f: not shown to grow)", RangeLabel(s.From, s.To), e.CPUMs, unit, e.CI[0], e.CI[1])
		default:
			parts[i] = fmt.Sprintf("over %s at %.3f%s (95%% CI %.3f–%.3f)", RangeLabel(s.From, s.To), e.CPUMs, unit, e.CI[0], e.CI[1])
		}
	}
	breaks := make([]string, len(c.Breaks))
	for i, b := range c.Breaks {
		breaks[i] = rateLabel3(b)
	}
	list := parts[len(parts)-1]
	if len(parts) > 1 {
		list = strings.Join(parts[:len(parts)-1], ", ") + " and " + list
	}
	return fmt.Sprintf("marginal cost %s with the rate: no single straight line holds over %s; one does %s (%d runs at %d rates, %s at %s chosen by the data)",
		c.Direction(), RangeLabel(c.MinRate, c.MaxRate), list, c.Points, c.Rates,
		plural(len(c.Breaks), "break"), strings.Join(breaks, " and "))
}

// BandLine is the marginal cost of every band between measured rates.
func (c *Curve) BandLine() string {
	parts := make([]string, len(c.Bands))
	for i, b := range c.Bands {
		if b.Marginal == nil {
			parts[i] = RangeLabel(b.From, b.To) + " no interval"
			continue
		}
		parts[i] = fmt.Sprintf("%s %.3f (%.3f–%.3f)", RangeLabel(b.From, b.To), b.Marginal.CPUMs, b.Marginal.CI[0], b.Marginal.CI[1])
	}
	s := "marginal cost between neighbouring measured rates, from those two rates alone, CPU-ms per exchange (95% CI): " + strings.Join(parts, ", ")
	if c.every == nil && len(c.Bands) > 0 && c.Bands[0].Marginal == nil {
		s += " (one run per rate: no spread to judge them by)"
	}
	return s
}

// rateLabel3 is a served rate with three significant digits ("612/s").
func rateLabel3(v float64) string {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return RateLabel(f)
}

// RangeLabel is a range of served rates, three significant digits each
// ("5–40/s").
func RangeLabel(a, b float64) string {
	return strings.TrimSuffix(rateLabel3(a), "/s") + "–" + rateLabel3(b)
}

// pwl is a fitted continuous piecewise-linear curve in rate units:
// cores = coef[0] + coef[1]·rate + Σ coef[2+j]·max(0, rate − knots[j]),
// cov the coefficients' covariance (cores²), dof the residual degrees of
// freedom.
type pwl struct {
	knots []float64
	coef  []float64
	cov   [][]float64
	dof   int
}

func (m *pwl) basis(rate float64) []float64 {
	g := []float64{1, rate}
	for _, k := range m.knots {
		g = append(g, math.Max(0, rate-k))
	}
	return g
}

// slopeBasis is the derivative's basis: the slope of the piece at or
// above rate.
func (m *pwl) slopeBasis(rate float64) []float64 {
	g := []float64{0, 1}
	for _, k := range m.knots {
		if rate >= k {
			g = append(g, 1)
		} else {
			g = append(g, 0)
		}
	}
	return g
}

// estimate is gᵀ·coef with its 95 % interval.
func (m *pwl) estimate(g []float64) (float64, [2]float64) {
	v := dot(m.coef, g)
	h := tQuantile(curveCIAlpha, m.dof) * math.Sqrt(math.Max(0, quad(m.cov, g)))
	return v, [2]float64{v - h, v + h}
}

// cores is the mean engine cores at rate.
func (m *pwl) cores(rate float64) Cores {
	v, ci := m.estimate(m.basis(rate))
	return Cores{Cores: v, CI: ci}
}

// marginal is the slope at rate in CPU-ms per exchange.
func (m *pwl) marginal(rate float64) Estimate {
	v, ci := m.estimate(m.slopeBasis(rate))
	return Estimate{CPUMs: v * 1000, CI: [2]float64{ci[0] * 1000, ci[1] * 1000}}
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range min(len(a), len(b)) {
		s += a[i] * b[i]
	}
	return s
}

// level is one measured rate: the runs of a target rate (or of target
// rates whose served rates all but coincide), at their median served rate,
// so that a round the host starved (served far below its target) does not
// move it to where no run was.
type level struct {
	rate  float64
	rates []float64
}

// levels groups the points by target rate (by served rate for points
// without one), orders the groups by median served rate and merges groups
// closer than levelMerge of the range; at is each point's level.
func levels(pts []Point) (ls []level, at []int) {
	key := func(p Point) float64 {
		if p.Target != 0 {
			return p.Target
		}
		return p.Rate
	}
	idx := map[float64]int{}
	var gs []level
	var keys [][]float64
	for _, p := range pts {
		i, ok := idx[key(p)]
		if !ok {
			i = len(gs)
			idx[key(p)] = i
			gs = append(gs, level{})
			keys = append(keys, []float64{key(p)})
		}
		gs[i].rates = append(gs[i].rates, p.Rate)
	}
	order := make([]int, len(gs))
	for i := range gs {
		gs[i].rate = median(gs[i].rates)
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return gs[order[a]].rate < gs[order[b]].rate })
	if len(gs) == 0 {
		return nil, nil
	}
	span := gs[order[len(order)-1]].rate - gs[order[0]].rate
	ofKey := map[float64]int{}
	for n, i := range order {
		g := gs[i]
		if n > 0 && g.rate-ls[len(ls)-1].rate <= levelMerge*span {
			last := &ls[len(ls)-1]
			last.rates = append(last.rates, g.rates...)
			last.rate = median(last.rates)
		} else {
			ls = append(ls, level{rate: g.rate, rates: append([]float64(nil), g.rates...)})
		}
		for _, k := range keys[i] {
			ofKey[k] = len(ls) - 1
		}
	}
	at = make([]int, len(pts))
	for i, p := range pts {
		at[i] = ofKey[key(p)]
	}
	return ls, at
}

// segFit is a least-squares curve with breaks at knots (served rates),
// fitted on x scaled to [−1, 1].
type segFit struct {
	knots     []float64
	mid, half float64
	lsqFit
}

func fitKnots(pts []Point, knots []float64, mid, half float64) (segFit, bool) {
	x := make([][]float64, len(pts))
	y := make([]float64, len(pts))
	for i, p := range pts {
		u := (p.Rate - mid) / half
		row := []float64{1, u}
		for _, k := range knots {
			row = append(row, math.Max(0, u-(k-mid)/half))
		}
		x[i], y[i] = row, p.Cores
	}
	f, ok := lsq(x, y)
	return segFit{knots: knots, mid: mid, half: half, lsqFit: f}, ok
}

// kink is the break at knots[j]: its t statistic and the change of slope
// it makes, relative to the larger of the slopes either side.
func (f segFit) kink(j int) (t, change float64) {
	if f.dof < 1 {
		return 0, 0
	}
	s2 := f.sse / float64(f.dof)
	d := f.beta[2+j]
	se := math.Sqrt(s2 * f.inv[2+j][2+j])
	if se > 0 {
		t = d / se
	} else if d != 0 {
		t = math.Inf(1)
	}
	// The slope just below knot j: the base slope plus the kinks below it.
	// Knots are kept sorted.
	below := f.beta[1]
	for i := range j {
		below += f.beta[2+i]
	}
	above := below + d
	if m := math.Max(math.Abs(below), math.Abs(above)); m > 0 {
		change = math.Abs(d) / m
	}
	return t, change
}

// FitCurve fits the cost curve (CurveDefinition) to the runs; line is the
// straight-line fit of the same points (its curvature test counts for the
// first break). nil with fewer than two measured rates or three runs.
func FitCurve(pts []Point, line *Fit) *Curve {
	for _, p := range pts {
		if !finite(p.Rate) || !finite(p.Cores) || !finite(p.Target) {
			return nil // hostile or broken figures: no curve, not NaN in summary.json
		}
	}
	lv, at := levels(pts)
	if len(pts) < 3 || len(lv) < 2 {
		return nil
	}
	lo, hi := lv[0].rate, lv[len(lv)-1].rate
	mid, half := (lo+hi)/2, (hi-lo)/2
	if half <= 0 {
		return nil
	}
	var cands []float64
	for _, l := range lv[1 : len(lv)-1] {
		cands = append(cands, l.rate)
	}
	curved := line != nil && line.DoF > 0 && curvature(pts, line) != ""
	sel, ok := selectKnots(pts, cands, mid, half, curved)
	if !ok {
		return nil
	}
	c := &Curve{Points: len(pts), Rates: len(lv), MinRate: lo, MaxRate: hi, Breaks: append([]float64{}, sel.knots...)}
	if f, ok := fitKnots(pts, cands, mid, half); ok && f.dof >= 1 {
		c.every = f.pwl()
	}
	c.segments(lv, at, pts)
	c.bands(lv)
	return c
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// selectKnots is the forward-then-backward choice of breaks.
func selectKnots(pts []Point, cands []float64, mid, half float64, curved bool) (segFit, bool) {
	cur, ok := fitKnots(pts, nil, mid, half)
	if !ok {
		return cur, false
	}
	alpha := breakAlpha / float64(max(len(cands), 1))
	passes := func(f segFit, j int) bool {
		t, change := f.kink(j)
		sig := tTwoSided(t, f.dof) < alpha || (curved && len(f.knots) == 1)
		return sig && change > breakChange
	}
	for {
		next, found := bestKnot(pts, cands, cur, mid, half)
		if !found || !passes(next, newKnot(next.knots, cur.knots)) {
			break
		}
		cur = next
	}
	for len(cur.knots) > 0 {
		weakest, wt := -1, math.Inf(1)
		for j := range cur.knots {
			if passes(cur, j) {
				continue
			}
			if t, _ := cur.kink(j); math.Abs(t) < wt {
				weakest, wt = j, math.Abs(t)
			}
		}
		if weakest < 0 {
			break
		}
		knots := append(append([]float64(nil), cur.knots[:weakest]...), cur.knots[weakest+1:]...)
		f, ok := fitKnots(pts, knots, mid, half)
		if !ok {
			break
		}
		cur = f
	}
	return cur, true
}

// bestKnot is cur with the candidate break that lowers the residual sum
// of squares most (found false: none fits with minBreakDoF left).
func bestKnot(pts []Point, cands []float64, cur segFit, mid, half float64) (next segFit, found bool) {
	for _, k := range cands {
		if slices.Contains(cur.knots, k) {
			continue
		}
		knots := append(append([]float64(nil), cur.knots...), k)
		sort.Float64s(knots)
		f, ok := fitKnots(pts, knots, mid, half)
		if !ok || f.dof < minBreakDoF {
			continue
		}
		if !found || f.sse < next.sse {
			next, found = f, true
		}
	}
	return next, found
}

// newKnot is the index in knots of the one knot not in old.
func newKnot(knots, old []float64) int {
	for i, k := range knots {
		if !slices.Contains(old, k) {
			return i
		}
	}
	return 0
}

// pwl is the fit in rate units: θ = T·β (the intercept at rate 0, slopes
// per exchange/s), Cov = s²·T·(XᵀX)⁻¹·Tᵀ.
func (f segFit) pwl() *pwl {
	p := len(f.beta)
	tm := make([][]float64, p)
	for i := range tm {
		tm[i] = make([]float64, p)
		if i > 0 {
			tm[i][i] = 1 / f.half
		}
	}
	tm[0][0], tm[0][1] = 1, -f.mid/f.half
	s2 := 0.0
	if f.dof > 0 {
		s2 = f.sse / float64(f.dof)
	}
	m := &pwl{knots: append([]float64{}, f.knots...), coef: make([]float64, p), cov: make([][]float64, p), dof: f.dof}
	for i := range p {
		m.coef[i] = dot(tm[i], f.beta)
		m.cov[i] = make([]float64, p)
		for j := range p {
			var s float64
			for a := range p {
				for b := range p {
					s += tm[i][a] * f.inv[a][b] * tm[j][b]
				}
			}
			m.cov[i][j] = s * s2
		}
	}
	return m
}

// segments fills the ranges between breaks, each with the straight line
// fitted to the runs at its measured rates (the runs at a break belong to
// both segments it joins).
func (c *Curve) segments(lv []level, at []int, pts []Point) {
	edges := append(append([]float64{c.MinRate}, c.Breaks...), c.MaxRate)
	for i := 0; i+1 < len(edges); i++ {
		s := Segment{From: edges[i], To: edges[i+1]}
		var in []Point
		for j, p := range pts {
			if r := lv[at[j]].rate; r >= s.From && r <= s.To {
				in = append(in, p)
			}
		}
		for _, l := range lv {
			if l.rate >= s.From && l.rate <= s.To {
				s.Rates++
			}
		}
		s.Runs = len(in)
		mid, half := (s.From+s.To)/2, (s.To-s.From)/2
		if f, ok := fitKnots(in, nil, mid, half); ok && f.dof >= 1 && half > 0 {
			s.line = f.pwl()
			e := s.line.marginal(mid)
			s.Marginal, s.Intercept = &e, s.line.coef[0]
		}
		c.Segments = append(c.Segments, s)
	}
}

// bands fills the stretches between neighbouring measured rates.
func (c *Curve) bands(lv []level) {
	for i := 0; i+1 < len(lv); i++ {
		m := (lv[i].rate + lv[i+1].rate) / 2
		b := Band{From: lv[i].rate, To: lv[i+1].rate, Segment: c.SegmentAt(m)}
		if c.every != nil {
			e := c.every.marginal(m)
			b.Marginal = &e
		}
		c.Bands = append(c.Bands, b)
	}
}

// ProjectCurve is Project along a bent cost curve: one engine's cores at
// the rate it would serve, from the curve through every measured rate
// within them and along an end segment's straight line beyond them (said
// so), with the marginal cost there. nil without the degrees of freedom
// for an interval.
func ProjectCurve(c *Curve, rate, capacity float64, objective string, out ...ScaleOut) *Projection {
	if !c.Bent() || rate <= 0 {
		return nil
	}
	alone, _, aloneExt, ok := c.At(rate)
	if !ok {
		return nil
	}
	p := &Projection{Rate: rate, Cores: alone.Cores, CoresCI: alone.CI, EngineRate: rate}
	p.Assumptions = []string{"the same engine, hardware and request mix as measured"}
	p.Line = fmt.Sprintf("to serve %s you need about %.2f engine cores of CPU (95%% CI %.2f–%.2f)", RateLabel(rate), p.Cores, p.CoresCI[0], p.CoresCI[1])
	ext := aloneExt
	how := ""
	if capacity > 0 {
		p.Engines, p.ScalingEfficiency, how = scaleOut(out).engines(rate, capacity, objective)
		p.EngineRate = rate / float64(p.Engines)
		one, _, oneExt, ok := c.At(p.EngineRate)
		if !ok {
			return nil
		}
		p.EngineCores = float64(p.Engines) * one.Cores
		ext = oneExt
		p.Line = fmt.Sprintf("to serve %s with %s you need about %d engine(s) of the measured size%s at %s each, burning %.2f cores together (95%% CI %.2f–%.2f; CPU alone, one engine at %s: %.2f cores, 95%% CI %.2f–%.2f)",
			RateLabel(rate), objective, p.Engines, p.efficiencyNote(), rateLabel3(p.EngineRate), p.EngineCores, float64(p.Engines)*one.CI[0], float64(p.Engines)*one.CI[1],
			RateLabel(rate), p.Cores, p.CoresCI[0], p.CoresCI[1])
	}
	_, m, _, _ := c.At(p.EngineRate)
	p.Marginal, p.Extrapolated = &m, ext
	p.Line += fmt.Sprintf("; one more exchange at %s costs %.3f CPU-ms (95%% CI %.3f–%.3f", rateLabel3(p.EngineRate), m.CPUMs, m.CI[0], m.CI[1])
	if seg := c.Segments[c.SegmentAt(p.EngineRate)]; ext == "" && seg.Marginal != nil {
		i := c.bandAt(p.EngineRate)
		p.SegmentMarginal = seg.Marginal
		p.Line += fmt.Sprintf(", between the measured %s alone; on the straight line over %s: %.3f, 95%% CI %.3f–%.3f",
			RangeLabel(c.Bands[i].From, c.Bands[i].To), RangeLabel(seg.From, seg.To), seg.Marginal.CPUMs, seg.Marginal.CI[0], seg.Marginal.CI[1])
	}
	p.Line += ")"
	if ext != "" {
		p.Assumptions = append(p.Assumptions, "the cost curve "+ext)
	} else {
		p.Assumptions = append(p.Assumptions, "the cost follows the curve through every measured rate, within the measured "+RangeLabel(c.MinRate, c.MaxRate))
	}
	if aloneExt != "" && aloneExt != ext {
		p.Assumptions = append(p.Assumptions, "the CPU alone, one engine, "+aloneExt)
	}
	if capacity > 0 {
		p.Assumptions = append(p.Assumptions, how)
	} else {
		p.Assumptions = append(p.Assumptions, "the latency objective is not checked: no capacity was searched (tokex capacity)")
	}
	return p
}
