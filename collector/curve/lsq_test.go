package curve

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTQuantileMatchesTheTables(t *testing.T) {
	t.Parallel()
	for dof := 1; dof <= 30; dof++ {
		if got, want := tQuantile(0.05, dof), tQuantile975(dof); math.Abs(got-want) > 0.0015 {
			t.Errorf("t 97.5 %% at %d dof: %.4f, the table's %.3f", dof, got, want)
		}
		if dof <= 20 {
			if got, want := tQuantile(0.01, dof), tQuantile995(dof); math.Abs(got-want) > 0.0015 {
				t.Errorf("t 99.5 %% at %d dof: %.4f, the table's %.3f", dof, got, want)
			}
		}
		if p := tTwoSided(tQuantile975(dof), dof); math.Abs(p-0.05) > 0.0005 {
			t.Errorf("P(|T| ≥ %.3f) at %d dof: %.5f, want 0.05", tQuantile975(dof), dof, p)
		}
	}
	if tQuantile(0.05, 0) != math.Inf(1) || tTwoSided(3, 0) != 1 || tTwoSided(math.Inf(1), 4) != 0 {
		t.Error("no degrees of freedom, or an infinite t")
	}
}

// TestLsqIsOrdinaryLeastSquares: a straight line through lsq has the
// slope, intercept and standard error of FitCost's closed form; a column
// that repeats another is refused.
func TestLsqIsOrdinaryLeastSquares(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	pts := linear([]float64{100, 250, 500}, 0.02, 2.5, 0.02, 9)
	x := make([][]float64, len(pts))
	y := make([]float64, len(pts))
	for i, p := range pts {
		x[i], y[i] = []float64{1, p.Rate}, p.Cores
	}
	f, ok := lsq(x, y)
	line := FitCost(pts, 3)
	if !ok || math.Abs(f.beta[1]*1000-line.MarginalCPUMs) > 1e-9 || math.Abs(f.beta[0]-line.FixedCores) > 1e-12 {
		t.Fatalf("lsq %+v, the line %s", f, line.Line())
	}
	if se := math.Sqrt(f.sse/float64(f.dof)*f.inv[1][1]) * 1000; math.Abs(se-line.SlopeSE) > 1e-9 {
		t.Errorf("slope SE %.6f, the line's %.6f", se, line.SlopeSE)
	}
	for i := range x {
		x[i] = []float64{1, x[i][1], 2 * x[i][1]}
		y[i] += rng.NormFloat64()
	}
	if _, ok := lsq(x, y); ok {
		t.Error("a repeated column was fitted")
	}
	if _, ok := lsq(x[:2], y[:2]); ok {
		t.Error("more columns than rows were fitted")
	}
}

// TestMeanCI: the interval of three replicates is the textbook one
// (t₀.₉₇₅,₂ = 4.303), one replicate has none.
func TestMeanCI(t *testing.T) {
	iv := MeanCI([]float64{1.6, 1.9, 2.2})
	half := 4.303 * 0.3 / math.Sqrt(3)
	if math.Abs(iv.Mean-1.9) > 1e-12 || math.Abs(iv.CI[0]-(1.9-half)) > 1e-3 || math.Abs(iv.CI[1]-(1.9+half)) > 1e-3 || !iv.Shown() {
		t.Errorf("%+v, want 1.9 ± %.4f", iv, half)
	}
	if one := MeanCI([]float64{3}); one.Shown() || one.Mean != 3 || one.CI != [2]float64{} {
		t.Errorf("one replicate: %+v", one)
	}
	if TQuantile(0.05, 0) != math.Inf(1) {
		t.Error("no degrees of freedom has a finite quantile")
	}
}
