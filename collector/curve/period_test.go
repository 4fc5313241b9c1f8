package curve

import (
	"math"
	"math/rand/v2"
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
