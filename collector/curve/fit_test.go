package curve

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// linear makes three rounds at each rate of a server costing costMs per
// exchange with fixed cores, plus noise on the cores.
func linear(rates []float64, fixed, costMs, noise float64, seed uint64) []Point {
	rng := rand.New(rand.NewPCG(seed, 3))
	var pts []Point
	for _, r := range rates {
		for range 3 {
			pts = append(pts, Point{Rate: r, Cores: fixed + costMs*r/1000 + noise*rng.NormFloat64()})
		}
	}
	return pts
}

func TestFitRecoversKnownCost(t *testing.T) {
	t.Parallel()
	covered, poor := 0, 0
	const trials = 200
	for seed := range uint64(trials) {
		f := FitCost(linear([]float64{100, 250, 500}, 0.02, 2.5, 0.02, seed), 3)
		if !f.OK() {
			poor++ // the curvature test is at 99 %: about 1 in 100 linear data sets
			t.Logf("seed %d: %s", seed, f.Poor)
		}
		if f.MarginalCPUMsCI[0] <= 2.5 && 2.5 <= f.MarginalCPUMsCI[1] {
			covered++
		}
		if math.Abs(f.MarginalCPUMs/2.5-1) > 0.1 || math.Abs(f.FixedCores-0.02) > 0.05 {
			t.Errorf("seed %d: %s", seed, f.Line())
		}
	}
	if poor > trials*3/100 {
		t.Errorf("%d of %d linear data sets called a poor fit", poor, trials)
	}
	// A 95 % interval covers the truth about 95 % of the time.
	if covered < trials*90/100 || covered == trials {
		t.Errorf("the 95%% interval covered the true slope in %d of %d fits", covered, trials)
	}
	f := FitCost(linear([]float64{100, 250, 500}, 0.02, 2.5, 0, 1), 3)
	if math.Abs(f.MarginalCPUMs-2.5) > 1e-9 || math.Abs(f.FixedCores-0.02) > 1e-9 || f.R2 < 0.999999 {
		t.Fatalf("exact: %s", f.Line())
	}
	if !strings.Contains(f.Line(), "marginal cost 2.500 CPU-ms per exchange") {
		t.Errorf("line %q", f.Line())
	}
}

func TestFitPoor(t *testing.T) {
	t.Parallel()
	// Cost per exchange doubling across the range (GC pressure).
	var curved []Point
	for _, r := range []float64{100, 200, 300, 400, 500} {
		for range 3 {
			curved = append(curved, Point{Rate: r, Cores: 0.02 + 1e-3*r + 4e-6*r*r})
		}
	}
	for name, tc := range map[string]struct {
		pts    []Point
		groups int
		want   string
	}{
		"curved":    {curved, 5, "non-linear"},
		"one rate":  {linear([]float64{100}, 0.1, 2, 0.01, 1), 1, "fewer than two rates"},
		"two runs":  {[]Point{{Rate: 100, Cores: 0.3}, {Rate: 200, Cores: 0.5}}, 2, "fewer than two rates or three runs"},
		"flat":      {linear([]float64{100, 200, 300}, 1, 0, 0, 2), 3, "do not grow"},
		"scattered": {linear([]float64{100, 200, 300}, 1, 1, 0.3, 2), 3, ""}, // R² or a slope not shown to be positive
	} {
		f := FitCost(tc.pts, tc.groups)
		if f.OK() || !strings.Contains(f.Poor, tc.want) {
			t.Errorf("%s: %q, want poor with %q", name, f.Poor, tc.want)
		}
		if !strings.Contains(f.Line(), "not given") {
			t.Errorf("%s: a poor fit printed a slope: %s", name, f.Line())
		}
	}
	// Mild noise around a line is not curvature.
	poor := 0
	for seed := range uint64(100) {
		if f := FitCost(linear([]float64{100, 200, 300, 400, 500}, 0.05, 2, 0.01, seed), 5); !f.OK() {
			poor++
			t.Logf("seed %d: linear data called poor: %s", seed, f.Poor)
		}
	}
	if poor > 3 {
		t.Errorf("%d of 100 linear data sets called poor", poor)
	}
	if FitCost(nil, 0) != nil {
		t.Error("no points, a fit")
	}
}

func TestDiffAndProjection(t *testing.T) {
	t.Parallel()
	a := FitCost(linear([]float64{100, 250, 500}, 0.02, 2.5, 0.01, 1), 3)
	b := FitCost(linear([]float64{100, 250, 500}, 0.02, 3.5, 0.01, 2), 3)
	d := Diff(a, b)
	if d.Verdict != "B costs more" || d.CI[0] > 1 || d.CI[1] < 1 {
		t.Errorf("diff %+v, want about +1 ms, B costs more", d)
	}
	if d := Diff(a, FitCost(linear([]float64{100, 250, 500}, 0.02, 2.5, 0.01, 3), 3)); !strings.HasPrefix(d.Verdict, "no difference") {
		t.Errorf("same cost: %+v", d)
	}
	if d := Diff(a, &Fit{Poor: "x"}); !strings.HasPrefix(d.Verdict, "not comparable") {
		t.Errorf("poor: %+v", d)
	}
	p := Project(a, 1000, 0, "")
	if math.Abs(p.Cores-(a.FixedCores+a.MarginalCPUMs)) > 1e-9 || p.Engines != 0 || len(p.Assumptions) != 3 {
		t.Errorf("projection %+v", p)
	}
	p = Project(a, 1000, 400, "p95 < 10 ms")
	if p.Engines != 3 || math.Abs(p.EngineCores-(3*a.FixedCores+a.MarginalCPUMs)) > 1e-9 || !strings.Contains(p.Line, "3 engine(s)") {
		t.Errorf("projection with capacity %+v", p)
	}
	if Project(&Fit{Poor: "x"}, 10, 0, "") != nil {
		t.Error("projection from a poor fit")
	}
}
