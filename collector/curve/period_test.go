package curve

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// stalls is per-second p95 of a server that stalls for stallMs every
// period seconds, with noise around base.
func stalls(n int, period, stallMs, base, noise float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 9))
	s := make([]float64, n)
	for i := range s {
		s[i] = base * math.Exp(noise*rng.NormFloat64())
	}
	for at := 3.3; at < float64(n); at += period {
		s[int(at)] += stallMs
	}
	return s
}

func TestFindPeriod(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n      int
		period float64
	}{{60, 5}, {90, 7}, {120, 6.5}, {180, 30}, {300, 30}, {120, 10}} {
		for seed := range uint64(10) {
			p := FindPeriod(stalls(tc.n, tc.period, 40, 5, 0.2, seed), "p95")
			if p == nil {
				t.Errorf("%ds, period %v, seed %d: none found", tc.n, tc.period, seed)
				continue
			}
			if math.Abs(p.Seconds/tc.period-1) > 0.1 {
				t.Errorf("%ds, period %v, seed %d: found %s", tc.n, tc.period, seed, p.Line())
			}
			if p.AmplitudeMs < 30 || p.AmplitudeMs > 50 {
				t.Errorf("%ds, period %v: amplitude %v, want about 40", tc.n, tc.period, p.AmplitudeMs)
			}
		}
	}
	// A smooth wave too.
	s := make([]float64, 120)
	for i := range s {
		s[i] = 10 + 3*math.Sin(2*math.Pi*float64(i)/12)
	}
	if p := FindPeriod(s, "p99"); p == nil || math.Abs(p.Seconds-12) > 1.2 || math.Abs(p.AmplitudeMs-3) > 0.5 {
		t.Errorf("sine: %+v", p)
	}
}

func TestFindPeriodNoneInNoise(t *testing.T) {
	t.Parallel()
	found := 0
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		s := make([]float64, 60+int(seed%5)*30)
		for i := range s {
			s[i] = 5 * math.Exp(0.3*rng.NormFloat64())
			if rng.Float64() < 0.05 { // random, not periodic, spikes
				s[i] += 40
			}
		}
		if p := FindPeriod(s, "p95"); p != nil {
			found++
			t.Logf("seed %d: %s", seed, p.Line())
		}
	}
	if found > 4 { // at most 2 % false positives
		t.Errorf("a period found in %d of 200 noise series", found)
	}
	// A backlog building up is a trend, not a wave.
	s := make([]float64, 90)
	for i := range s {
		s[i] = float64(i) * float64(i) / 10
	}
	if p := FindPeriod(s, "p95"); p != nil {
		t.Errorf("trend: %s", p.Line())
	}
	if FindPeriod(make([]float64, 60), "p95") != nil || FindPeriod([]float64{1, 2, 3}, "p95") != nil {
		t.Error("flat or short series: a period")
	}
	// Gaps are filled, not read as zero.
	g := stalls(90, 7, 40, 5, 0.2, 1)
	g[10], g[11] = math.NaN(), math.NaN()
	if p := FindPeriod(g, "p95"); p == nil || math.Abs(p.Seconds/7-1) > 0.1 {
		t.Errorf("gaps: %+v", p)
	}
}

// TestFindPeriodBoundedOnHostileSeries: a series of 20 million seconds
// (an evidence folder may say anything) costs one pass and memory of
// maxPeriodSeries points, not a copy of the series (160 MB before), and
// NaN and ±Inf figures give no wave and no hang.
func TestFindPeriodBoundedOnHostileSeries(t *testing.T) {
	// Not parallel: TotalAlloc counts every goroutine's allocations.
	s := make([]float64, 20_000_000)
	for i := range s {
		switch {
		case i%1_000_000 < 3:
			s[i] = math.NaN()
		case i%17 == 0:
			s[i] = 50
		default:
			s[i] = 5
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	FindPeriod(s, "p95")
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("FindPeriod of 20 million seconds allocated %d MB", got>>20)
	}
	// A constant series and a straight line: what detrend leaves is
	// rounding, whose autocorrelation is anything (a 0.5 s wave of 0 ms
	// was found in a constant one, and refine never ended on the 20
	// million seconds above, which bin to one).
	flat, line := make([]float64, 1200), make([]float64, 900)
	for i := range flat {
		flat[i] = 50
	}
	for i := range line {
		line[i] = 3 + 0.1*float64(i)
	}
	for _, s := range [][]float64{flat, flat[:600], line} {
		if p := FindPeriod(s, "p95"); p != nil {
			t.Errorf("a wave in a series of %d seconds without one: %+v", len(s), p)
		}
	}
	for _, v := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64} {
		h := stalls(600, 30, 40, 5, 0.2, 1)
		for i := 0; i < len(h); i += 7 {
			h[i] = v
		}
		if p := FindPeriod(h, "p95"); p != nil && (math.IsNaN(p.Seconds) || math.IsInf(p.AmplitudeMs, 0)) {
			t.Errorf("%v in the series: %+v", v, p)
		}
	}
}

// TestCoarsenFillsAsBefore: filling the gaps while binning gives the bins
// of filling the whole series first.
func TestCoarsenFillsAsBefore(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{0, 5, 1200, 1201, 2500, 7777} {
		s := make([]float64, n)
		for i := range s {
			s[i] = rng.Float64() * 100
			if rng.IntN(4) == 0 || i < 30 {
				s[i] = math.NaN()
			}
		}
		filled := fillGaps(s)
		var want []float64
		if len(filled) <= maxPeriodSeries {
			want = filled
		} else {
			bin := (len(filled) + maxPeriodSeries - 1) / maxPeriodSeries
			for i := 0; i < len(filled); i += bin {
				want = append(want, slices.Max(filled[i:min(i+bin, len(filled))]))
			}
		}
		if got := coarsen(s); !slices.Equal(got, want) {
			t.Errorf("n %d: %d bins, want %d", n, len(got), len(want))
		}
	}
}
