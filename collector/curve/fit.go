package curve

import (
	"fmt"
	"math"
	"sort"

	"github.com/tokex-dev/tokex/collector/units"
)

// FitDefinition states how the marginal cost is computed (summary.json).
const FitDefinition = "ordinary least squares of engine cores (CPU used in each finished run's measured window ÷ its length) " +
	"against the rate it served (responses completed in the window ÷ its length), one point per run: the intercept is " +
	"the fixed cost in cores, the slope × 1000 the marginal CPU-ms per exchange; 95 % intervals from Student's t with " +
	"n − 2 degrees of freedom over the runs (the rounds are the replicates). The fit is called poor, and no slope is " +
	"given, with fewer than two rates or three runs, R² below 0.9, a negative slope, or significant curvature " +
	"(a quadratic term, significant at 99 %, whose slope change across the measured range exceeds 25 %)."

// Point is one finished run on the cost curve.
type Point struct {
	Run   string  `json:"run"`
	Rate  float64 `json:"rate"`  // exchanges/s served
	Cores float64 `json:"cores"` // engine cores
	// Target is the rate the run was asked for: runs of one target are
	// one measured rate of the cost curve (0: group by Rate).
	Target float64 `json:"target_rps,omitempty"`
}

// Fit is the marginal-cost model of an engine: cores = fixed + marginal × rate.
type Fit struct {
	Points int `json:"points"`
	Rates  int `json:"rates"` // distinct target rates
	// FixedCores is the intercept: cores the engine burns doing nothing.
	FixedCores   float64    `json:"fixed_cores"`
	FixedCoresCI [2]float64 `json:"fixed_cores_ci95"`
	// MarginalCPUMs is the slope: CPU-ms one more exchange costs.
	MarginalCPUMs   float64    `json:"marginal_cpu_ms"`
	MarginalCPUMsCI [2]float64 `json:"marginal_cpu_ms_ci95"`
	R2              float64    `json:"r2"`
	// Poor says why the fit cannot be trusted; then no slope is printed.
	Poor string `json:"poor,omitempty"`
	// SlopeSE and DoF carry the slope's uncertainty for comparisons.
	SlopeSE float64 `json:"marginal_cpu_ms_se"`
	DoF     int     `json:"dof"`
	MinRate float64 `json:"min_rate"`
	MaxRate float64 `json:"max_rate"`
}

// OK reports a fit whose slope may be printed.
func (f *Fit) OK() bool { return f != nil && f.Poor == "" }

// Cores is the fitted engine cores at rate.
func (f *Fit) Cores(rate float64) float64 { return f.FixedCores + f.MarginalCPUMs*rate/1000 }

// Line is the fit in words.
func (f *Fit) Line() string {
	if f == nil {
		return "marginal cost: no finished run with engine CPU"
	}
	if f.Poor != "" {
		return fmt.Sprintf("marginal cost: not given, the fit is poor (%s; %s at %s, R² %.3f)", f.Poor, units.Count(f.Points, "run"), units.Count(f.Rates, "rate"), f.R2)
	}
	return fmt.Sprintf("marginal cost %.3f CPU-ms per exchange (95%% CI %.3f–%.3f), fixed %.3f cores (95%% CI %.3f–%.3f), R² %.4f over %s at %s",
		f.MarginalCPUMs, f.MarginalCPUMsCI[0], f.MarginalCPUMsCI[1], f.FixedCores, f.FixedCoresCI[0], f.FixedCoresCI[1], f.R2, units.Count(f.Points, "run"), units.Count(f.Rates, "rate"))
}

// FitCost fits engine cores against rate. groups is the number of distinct
// target rates the points came from (the stages or probes).
func FitCost(pts []Point, groups int) *Fit {
	if len(pts) == 0 {
		return nil
	}
	n := float64(len(pts))
	f := &Fit{Points: len(pts), Rates: groups, DoF: len(pts) - 2, MinRate: math.Inf(1), MaxRate: math.Inf(-1)}
	var mx, my float64
	for _, p := range pts {
		mx += p.Rate / n
		my += p.Cores / n
		f.MinRate, f.MaxRate = math.Min(f.MinRate, p.Rate), math.Max(f.MaxRate, p.Rate)
	}
	var sxx, sxy, syy float64
	for _, p := range pts {
		dx, dy := p.Rate-mx, p.Cores-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if groups < 2 || len(pts) < 3 || sxx == 0 {
		f.Poor = "fewer than two rates or three runs"
		if sxx == 0 {
			return f
		}
	}
	b := sxy / sxx
	a := my - b*mx
	var sse float64
	for _, p := range pts {
		r := p.Cores - (a + b*p.Rate)
		sse += r * r
	}
	f.R2 = 1
	if syy > 0 {
		f.R2 = 1 - sse/syy
	}
	f.FixedCores, f.MarginalCPUMs = a, b*1000
	if f.DoF > 0 {
		s2 := sse / float64(f.DoF)
		seB := math.Sqrt(s2 / sxx)
		seA := math.Sqrt(s2 * (1/n + mx*mx/sxx))
		t := tQuantile975(f.DoF)
		f.SlopeSE = seB * 1000
		f.MarginalCPUMsCI = [2]float64{(b - t*seB) * 1000, (b + t*seB) * 1000}
		f.FixedCoresCI = [2]float64{a - t*seA, a + t*seA}
	}
	if f.Poor == "" {
		f.Poor = poorFit(f, pts)
	}
	return f
}

// poorFit names what makes a fit untrustworthy, or "".
func poorFit(f *Fit, pts []Point) string {
	switch {
	case f.MarginalCPUMs <= 0 || f.MarginalCPUMsCI[0] <= 0 || (f.MaxRate-f.MinRate)*f.MarginalCPUMs/1000 < 1e-9:
		return "the cores do not grow with the rate (the slope's interval reaches 0)"
	case f.R2 < 0.9:
		return fmt.Sprintf("R² %.2f below 0.9: the cores do not follow the rate", f.R2)
	}
	if c := curvature(pts, f); c != "" {
		return c
	}
	return ""
}

// curvature fits cores = a + b·x + c·x² and reports a curvature
// significant at 99 % that changes the slope by more than 25 % across the range (a JIT
// warming up, GC pressure, contention): then no single slope describes it.
func curvature(pts []Point, f *Fit) string {
	distinct := map[float64]bool{}
	for _, p := range pts {
		distinct[p.Rate] = true
	}
	if len(pts) < 4 || len(distinct) < 3 {
		return ""
	}
	// Centre and scale x for a well-conditioned 3×3 system.
	mid, half := (f.MaxRate+f.MinRate)/2, (f.MaxRate-f.MinRate)/2
	if half <= 0 {
		return ""
	}
	var m [3][4]float64
	for _, p := range pts {
		x := (p.Rate - mid) / half
		v := [3]float64{1, x, x * x}
		for i := range 3 {
			for j := range 3 {
				m[i][j] += v[i] * v[j]
			}
			m[i][3] += v[i] * p.Cores
		}
	}
	coef, inv, ok := solve3(m)
	if !ok {
		return ""
	}
	var sse float64
	for _, p := range pts {
		x := (p.Rate - mid) / half
		r := p.Cores - (coef[0] + coef[1]*x + coef[2]*x*x)
		sse += r * r
	}
	dof := len(pts) - 3
	if dof < 1 {
		return ""
	}
	se := math.Sqrt(sse / float64(dof) * inv[2][2])
	c := coef[2]
	// The slope (in scaled units) is b + 2cx over x ∈ [−1, 1]: it changes
	// by 4c across the range, against a mean slope of b.
	change := math.Abs(4*c) / math.Max(math.Abs(coef[1]), 1e-12)
	if math.Abs(c) > tQuantile995(dof)*se && change > 0.25 {
		dir := "rises"
		if c < 0 {
			dir = "falls"
		}
		return fmt.Sprintf("non-linear: the cost per exchange %s with the rate (slope changes %.0f %% across %s–%s)",
			dir, change*100, RateLabel(round3(f.MinRate)), RateLabel(round3(f.MaxRate)))
	}
	return ""
}

// solve3 solves the normal equations by Gauss–Jordan and returns the
// inverse of the matrix too (for the coefficients' variances).
func solve3(m [3][4]float64) ([3]float64, [3][3]float64, bool) {
	var a [3][7]float64
	for i := range 3 {
		for j := range 4 {
			if j < 3 {
				a[i][j] = m[i][j]
			} else {
				a[i][6] = m[i][3]
			}
		}
		a[i][3+i] = 1
	}
	for col := range 3 {
		piv := col
		for r := col + 1; r < 3; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if math.Abs(a[piv][col]) < 1e-12 {
			return [3]float64{}, [3][3]float64{}, false
		}
		a[col], a[piv] = a[piv], a[col]
		d := a[col][col]
		for j := range 7 {
			a[col][j] /= d
		}
		for r := range 3 {
			if r != col {
				k := a[r][col]
				for j := range 7 {
					a[r][j] -= k * a[col][j]
				}
			}
		}
	}
	var x [3]float64
	var inv [3][3]float64
	for i := range 3 {
		x[i] = a[i][6]
		for j := range 3 {
			inv[i][j] = a[i][3+j]
		}
	}
	return x, inv, true
}

// tQuantile975 is Student's t 97.5 % quantile (two-sided 95 %).
func tQuantile975(dof int) float64 {
	table := []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	switch {
	case dof < 1:
		return math.Inf(1)
	case dof < len(table):
		return table[dof]
	case dof < 60:
		return 2.021
	case dof < 120:
		return 2.000
	}
	return 1.960
}

// tQuantile995 is Student's t 99.5 % quantile (two-sided 99 %).
func tQuantile995(dof int) float64 {
	table := []float64{0, 63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
		3.106, 3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845}
	switch {
	case dof < 1:
		return math.Inf(1)
	case dof < len(table):
		return table[dof]
	case dof < 30:
		return 2.787
	case dof < 60:
		return 2.750
	case dof < 120:
		return 2.660
	}
	return 2.576
}

// Difference is B's marginal cost minus A's with its 95 % interval
// (Welch–Satterthwaite degrees of freedom).
type Difference struct {
	CPUMs float64    `json:"cpu_ms"`
	CI    [2]float64 `json:"ci95"`
	// Verdict: "B costs more", "B costs less", "no difference shown"
	// (the interval contains 0), or why it cannot be said.
	Verdict string `json:"verdict"`
}

// Diff compares two fits' marginal costs.
func Diff(a, b *Fit) Difference {
	if !a.OK() || !b.OK() {
		return Difference{Verdict: "not comparable: a fit is missing or poor"}
	}
	d := Difference{CPUMs: b.MarginalCPUMs - a.MarginalCPUMs}
	va, vb := a.SlopeSE*a.SlopeSE, b.SlopeSE*b.SlopeSE
	se := math.Sqrt(va + vb)
	dof := 1
	if a.DoF > 0 && b.DoF > 0 && va+vb > 0 {
		dof = int((va + vb) * (va + vb) / (va*va/float64(a.DoF) + vb*vb/float64(b.DoF)))
	}
	t := tQuantile975(max(dof, 1))
	d.CI = [2]float64{d.CPUMs - t*se, d.CPUMs + t*se}
	switch {
	case d.CI[0] > 0:
		d.Verdict = "B costs more"
	case d.CI[1] < 0:
		d.Verdict = "B costs less"
	default:
		d.Verdict = "no difference shown (the interval contains 0)"
	}
	return d
}

// Projection is what serving a rate would take, from a fit and (when
// known) the capacity of one engine of the measured size.
type Projection struct {
	Rate float64 `json:"rate"`
	// Cores is fixed + marginal × rate: the CPU alone, one engine.
	Cores   float64    `json:"cores"`
	CoresCI [2]float64 `json:"cores_ci95"`
	// Engines and EngineCores: with the capacity of one engine, how many
	// engines of the measured size keep the latency objective, and the
	// cores they burn together (each paying the fixed cost).
	Engines     int      `json:"engines,omitempty"`
	EngineCores float64  `json:"engine_cores,omitempty"`
	Assumptions []string `json:"assumptions"`
	Line        string   `json:"line"`
	// From a bent cost curve (CurveDefinition): the rate one engine serves
	// (rate ÷ engines, or rate without a capacity), one more exchange's
	// cost there, and how that rate lies beyond the measured rates ("":
	// within them, from the curve through every measured rate).
	EngineRate   float64   `json:"engine_rate,omitempty"`
	Marginal     *Estimate `json:"marginal,omitempty"`
	Extrapolated string    `json:"extrapolated,omitempty"`
	// ScalingEfficiency is the measured scaling efficiency at Engines
	// (capacity(N) ÷ N × capacity(1)) the projection used; 0: none was
	// measured, engines assumed to scale out evenly.
	ScalingEfficiency float64 `json:"scaling_efficiency,omitempty"`
	// SegmentMarginal is the marginal cost of the straight line the rate
	// lies on (within the measured rates): more precise than Marginal,
	// from its band alone, if that line holds there.
	SegmentMarginal *Estimate `json:"segment_marginal,omitempty"`
}

// ScaleOut is how engines add up, for a projection: how many serve a rate
// and the assumption that says why. The zero value is the even scale-out a
// projection assumes without a measurement (each engine at most its
// capacity); a campaign over engine counts gives the measured one.
type ScaleOut struct {
	Engines    func(rate float64) int
	Assumption string
	// Efficiency is the measured scaling efficiency at Engines(rate) (0:
	// assumed 1).
	Efficiency func(engines int) float64
}

// engines is how many engines of capacity serve rate, and why.
func (o ScaleOut) engines(rate, capacity float64, objective string) (int, float64, string) {
	if o.Engines != nil {
		n := o.Engines(rate)
		eff := 0.0
		if o.Efficiency != nil {
			eff = o.Efficiency(n)
		}
		return n, eff, o.Assumption
	}
	return int(math.Ceil(rate/capacity - 1e-9)), 0,
		fmt.Sprintf("engines of the measured size scale out evenly, each at most %s (its capacity at %s)", RateLabel(capacity), objective)
}

// Project answers "to serve rate exchanges/s you need about K engine cores".
// capacity is one engine's capacity under objective (0: unknown); out, when
// given, is the measured scale-out. A bent cost curve projects with
// ProjectCurve instead.
func Project(f *Fit, rate, capacity float64, objective string, out ...ScaleOut) *Projection {
	if !f.OK() || rate <= 0 {
		return nil
	}
	p := &Projection{Rate: rate, Cores: f.Cores(rate)}
	p.CoresCI = [2]float64{f.FixedCoresCI[0] + f.MarginalCPUMsCI[0]*rate/1000, f.FixedCoresCI[1] + f.MarginalCPUMsCI[1]*rate/1000}
	p.Assumptions = []string{
		"the same engine, hardware and request mix as measured",
		"the cost stays linear in the rate beyond the measured range " + RateLabel(round3(f.MinRate)) + "–" + RateLabel(round3(f.MaxRate)),
	}
	p.Line = fmt.Sprintf("to serve %s you need about %.2f engine cores of CPU (95%% CI %.2f–%.2f)", RateLabel(rate), p.Cores, p.CoresCI[0], p.CoresCI[1])
	if capacity > 0 {
		var how string
		p.Engines, p.ScalingEfficiency, how = scaleOut(out).engines(rate, capacity, objective)
		p.EngineCores = float64(p.Engines)*f.FixedCores + f.MarginalCPUMs*rate/1000
		p.Assumptions = append(p.Assumptions, how)
		p.Line = fmt.Sprintf("to serve %s with %s you need about %d engine(s) of the measured size%s burning %.2f cores together (CPU alone: %.2f cores, 95%% CI %.2f–%.2f)",
			RateLabel(rate), objective, p.Engines, p.efficiencyNote(), p.EngineCores, p.Cores, p.CoresCI[0], p.CoresCI[1])
	} else {
		p.Assumptions = append(p.Assumptions, "the latency objective is not checked: no capacity was searched (tokex capacity)")
	}
	return p
}

// Distinct counts the distinct values.
func Distinct(v []float64) int {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := 0
	for i := range s {
		if i == 0 || s[i] != s[i-1] {
			n++
		}
	}
	return n
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// scaleOut is the optional ScaleOut of a projection.
func scaleOut(out []ScaleOut) ScaleOut {
	if len(out) > 0 {
		return out[0]
	}
	return ScaleOut{}
}

// efficiencyNote says the measured scaling efficiency the engine count
// used, "" when it was assumed.
func (p *Projection) efficiencyNote() string {
	if p.ScalingEfficiency <= 0 {
		return ""
	}
	return fmt.Sprintf(" (at the measured scaling efficiency %.2f)", p.ScalingEfficiency)
}
