package decimate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Few points are kept exactly, in the order they came.
func TestFewPointsAreKeptAsAdded(t *testing.T) {
	s := New(0, 10, 4) // exact up to 8 points
	in := []Point{{3, 1}, {1, 5}, {2, 2}, {9, 0}, {0, 7}, {10, 3}, {5, 5}, {4, 4}}
	for _, p := range in {
		s.Add(p.X, p.Y)
	}
	xs, ys := s.Points()
	if s.Decimated() || len(xs) != len(in) {
		t.Fatalf("decimated %v, %d points", s.Decimated(), len(xs))
	}
	for i, p := range in {
		if xs[i] != p.X || ys[i] != p.Y {
			t.Fatalf("point %d: (%v, %v), want %v", i, xs[i], ys[i], p)
		}
	}
}

// span is one bucket's lowest and highest Y.
type span struct {
	lo, hi float64
	n      int
}

func (s *span) add(y float64) {
	if s.n == 0 || y < s.lo {
		s.lo = y
	}
	if s.n == 0 || y > s.hi {
		s.hi = y
	}
	s.n++
}

// bucketOf files x as a grid of n buckets over [x0, x1] does.
func bucketOf(x, x0, x1 float64, n int) int {
	return min(max(int((x-x0)/(x1-x0)*float64(n)), 0), n-1)
}

// checkMinMax says whether the output keeps, for every bucket, its lowest
// and its highest point and nothing else, at most two points a bucket, in X
// order.
func checkMinMax(t *testing.T, name string, pts []Point, xs, ys []float64, x0, x1 float64, n int) {
	t.Helper()
	want, got := make([]span, n), make([]span, n)
	for _, p := range pts {
		want[bucketOf(p.X, x0, x1, n)].add(p.Y)
	}
	for j, x := range xs {
		got[bucketOf(x, x0, x1, n)].add(ys[j])
	}
	if !slices.IsSorted(xs) {
		t.Errorf("%s: points not in X order", name)
	}
	for i := range want {
		w, g := want[i], got[i]
		if (w.n == 0) != (g.n == 0) || w.lo != g.lo || w.hi != g.hi || g.n > 2 {
			t.Errorf("%s: bucket %d keeps %d points in [%v, %v], its %d points span [%v, %v]", name, i, g.n, g.lo, g.hi, w.n, w.lo, w.hi)
			return
		}
	}
}

// Many points become each bucket's minimum and maximum: a one-sample spike
// among 100,000 survives, whatever the order the samples come in.
func TestDecimationKeepsEachBucketsMinAndMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string]func(k int) Point{
		"sorted noise":   func(k int) Point { return Point{float64(k) / 1e3, rng.Float64()} },
		"shuffled":       func(k int) Point { return Point{rng.Float64() * 100, rng.NormFloat64()} },
		"spikes":         func(k int) Point { return Point{float64(k) / 1e3, float64(map[bool]int{true: 1000}[k%10_007 == 7])} },
		"constant":       func(k int) Point { return Point{float64(k%100) + 0.5, 3} },
		"one x":          func(k int) Point { return Point{50, float64(k % 17)} },
		"edges of range": func(k int) Point { return Point{float64(k%2) * 100, float64(k)} },
	}
	for name, gen := range cases {
		s := New(0, 100, Buckets)
		var pts []Point
		for k := range 100_000 {
			p := gen(k)
			pts = append(pts, p)
			s.Add(p.X, p.Y)
		}
		xs, ys := s.Points()
		if !s.Decimated() || s.Kept() != len(pts) || s.Len() != len(xs) {
			t.Errorf("%s: decimated %v, kept %d of %d, Len %d of %d", name, s.Decimated(), s.Kept(), len(pts), s.Len(), len(xs))
		}
		checkMinMax(t, name, pts, xs, ys, 0, 100, Buckets)
	}
}

// Halving a grid keeps what a grid of half the buckets would have kept.
func TestHalveIsTheCoarserGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1000, 5000, 100_000} {
		fine, coarse := New(-5, 5, 256), New(-5, 5, 64)
		var pts []Point
		for range n {
			p := Point{rng.Float64()*10 - 5, rng.ExpFloat64()}
			pts = append(pts, p)
			fine.Add(p.X, p.Y)
			coarse.Add(p.X, p.Y)
		}
		fine.Halve()
		fine.Halve()
		fx, fy := fine.Points()
		cx, cy := coarse.Points()
		checkMinMax(t, "halved", pts, fx, fy, -5, 5, 64)
		if coarse.Decimated() && (!slices.Equal(fx, cx) || !slices.Equal(fy, cy)) {
			t.Errorf("%d points: halved twice ≠ 64 buckets", n)
		}
	}
}

// Points outside the range or not finite are dropped and counted.
func TestDroppedPoints(t *testing.T) {
	s := New(0, 1, 8)
	for _, p := range []Point{{-0.1, 1}, {1.1, 1}, {math.NaN(), 1}, {0.5, math.NaN()}, {0.5, math.Inf(1)}, {math.Inf(1), 0}, {0, 1}, {1, 1}} {
		s.Add(p.X, p.Y)
	}
	if s.Kept() != 2 || s.Dropped() != 6 {
		t.Errorf("kept %d, dropped %d", s.Kept(), s.Dropped())
	}
}

// A set halves every series as it grows past its budget: 200 series of a
// million points each hold the budget's points, not 200 × 2 × Buckets.
func TestSetSharesItsBudget(t *testing.T) {
	st := NewSet(0, 10, 16*Buckets)
	var all []*Series
	for range 200 {
		all = append(all, st.New())
	}
	total := 0
	for i, s := range all {
		for k := range 5000 {
			s.Add(float64(k)/500, float64((k*7+i)%13))
		}
		total += s.Len()
	}
	if total > 2*16*Buckets {
		t.Errorf("%d points for a budget of %d buckets", total, 16*Buckets)
	}
	if all[0].n != all[199].n || all[0].n < MinBuckets {
		t.Errorf("grids of %d and %d buckets", all[0].n, all[199].n)
	}
	few := NewSet(0, 10, 16*Buckets)
	if s := few.New(); s.n != Buckets {
		t.Errorf("one series has %d buckets", s.n)
	}
}

// Series sampled at the same times keep their points index for index
// (two per bucket, a lone sample twice), as a stacked chart adds them.
func TestSeriesSampledTogetherStayAligned(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	st := NewSet(0, 100, 4*Buckets)
	a, b := st.New(), st.New()
	for k := range 50_000 {
		x := float64(k) / 500
		if k%97 == 0 {
			x = float64(k%2000) / 20 // now and then far back: order does not matter
		}
		a.Add(x, rng.Float64())
		b.Add(x, 7) // constant: its lows and highs are one sample
	}
	xa, _ := a.Points()
	xb, yb := b.Points()
	if len(xa) != len(xb) || len(xa) != 2*Buckets {
		t.Fatalf("%d and %d points", len(xa), len(xb))
	}
	for j := range xa {
		if bucketOf(xa[j], 0, 100, Buckets) != bucketOf(xb[j], 0, 100, Buckets) || yb[j] != 7 {
			t.Fatalf("point %d: x %v and %v", j, xa[j], xb[j])
		}
	}
}
