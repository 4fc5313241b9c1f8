package curve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// PeriodDefinition states how a latency wave is found (stats.json).
const PeriodDefinition = "autocorrelation of the measured phase's per-second p95 latency (from the scheduled time), " +
	"linear trend removed: the first autocorrelation peak at a lag of 2 s up to a third of the series above " +
	"max(0.3, 3/√n) is the period, refined over its multiples; the amplitude is the mean per-cycle peak above the " +
	"series' median. None when no such peak exists (noise, a trend)."

// Period is a regular latency wave within a run.
type Period struct {
	Series      string  `json:"series"` // which per-second figure: p95, p99
	Seconds     float64 `json:"period_s"`
	AmplitudeMs float64 `json:"amplitude_ms"`
	// Strength is the autocorrelation at the period (0–1).
	Strength float64 `json:"strength"`
	Cycles   int     `json:"cycles"`
}

// Line is "p95 wave every 30.0 s, +12.3 ms (autocorrelation 0.82 over 9 cycles)".
func (p *Period) Line() string {
	return fmt.Sprintf("%s wave every %.1f s, +%.3g ms above the median (autocorrelation %.2f over %d cycles)",
		p.Series, p.Seconds, p.AmplitudeMs, p.Strength, p.Cycles)
}

// minPeriodSeries is the fewest seconds in which a wave can be found: three
// cycles of the shortest period (2 s) at the least.
const minPeriodSeries = 12

// FindPeriod looks for a regular wave in a per-second series (NaN: a
// second without a figure, filled from its neighbours). nil: none.
//
// Its cost is bounded whatever the series holds: one pass over it (no
// copy), then at most maxPeriodSeries points, whose autocorrelation up to
// a third of them costs 1 + shuffles times maxPeriodSeries²/3 (48 million
// multiply-adds) in O(maxPeriodSeries) memory; NaN and ±Inf figures give
// no wave rather than a loop.
func FindPeriod(series []float64, name string) *Period {
	x := coarsen(series)
	n := len(x)
	if n < minPeriodSeries {
		return nil
	}
	d := detrend(x)
	if !varies(x, d) {
		return nil
	}
	acf := autocorr(d, n/3)
	if acf == nil {
		return nil
	}
	threshold := math.Max(0.3, noiseCeiling(d, n/3))
	best := 0.0
	for k := 2; k < len(acf); k++ {
		best = math.Max(best, acf[k])
	}
	if best < threshold {
		return nil
	}
	// The first local maximum that comes near the best peak is the
	// fundamental; later peaks are its multiples.
	lag := 0
	for k := 2; k < len(acf); k++ {
		if acf[k] >= threshold && acf[k] >= 0.8*best && acf[k] >= acf[k-1] && (k+1 >= len(acf) || acf[k] >= acf[k+1]) {
			lag = k
			break
		}
	}
	if lag == 0 {
		return nil
	}
	lag = fundamental(acf, lag)
	if !harmonic(acf, lag) {
		return nil
	}
	period := refine(acf, lag)
	p := &Period{Series: name, Seconds: math.Round(period*10) / 10, Strength: math.Round(acf[lag]*100) / 100}
	p.Cycles = int(float64(n) / period)
	p.AmplitudeMs = amplitude(x, period)
	return p
}

// shuffles is how many shuffled copies of a series set the noise ceiling.
const shuffles = 100

// noiseCeiling is the highest autocorrelation (lags 2..maxLag) that the
// same values reach in an order without any period: the largest of
// shuffled copies' (about the 99th percentile). Spiky series (a few random
// stalls) reach far higher than white noise's 2/√n. The shuffles are
// seeded by the series' length, so a figure is reproducible.
func noiseCeiling(d []float64, maxLag int) float64 {
	rng := rand.New(rand.NewPCG(uint64(len(d)), 0x70c3e))
	s := slices.Clone(d)
	ceiling := 0.0
	for range shuffles {
		rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
		a := autocorr(s, maxLag)
		for k := 2; k < len(a); k++ {
			ceiling = math.Max(ceiling, a[k])
		}
	}
	return ceiling
}

// harmonic reports that a wave at lag repeats: its second multiple, where
// the series holds one, peaks too (two coincident random spikes do not).
func harmonic(acf []float64, lag int) bool {
	c := 2 * lag
	if c+1 >= len(acf) {
		return true
	}
	return max(acf[c-1], acf[c], acf[c+1]) >= 0.5*acf[lag]
}

// fundamental moves a lag found at a multiple of the true period down to
// it: a 6.5 s wave on a 1 s grid peaks at 6 and 7 half as high as at 13.
func fundamental(acf []float64, lag int) int {
	for m := lag / 2; m >= 2; m-- {
		c := int(math.Round(float64(lag) / float64(m)))
		for _, k := range []int{c, c - 1, c + 1} {
			if k < 2 || k+1 >= len(acf) || acf[k] < acf[k-1] || acf[k] < acf[k+1] || acf[k] < 0.3 {
				continue // not a peak
			}
			// A period between two lags splits its peak over both.
			split := acf[k] + max(acf[k-1], acf[k+1], 0)
			if acf[k] >= 0.6*acf[lag] || split >= 0.8*acf[lag] {
				return k
			}
		}
	}
	return lag
}

// refine estimates the period from the highest multiple of the fundamental
// whose peak stands out, each peak located with a parabola through its
// neighbours.
func refine(acf []float64, lag int) float64 {
	est := float64(lag)
	// At most len(acf) multiples: a flat autocorrelation (a constant
	// series' rounding noise) could move each peak down a lag and the
	// estimate with it, and so never reach the end.
	for m := 1; m < len(acf); m++ {
		c := int(math.Round(float64(m) * est))
		if c+1 >= len(acf) {
			break
		}
		for _, k := range []int{c - 1, c + 1} {
			if k > 1 && k+1 < len(acf) && acf[k] > acf[c] {
				c = k
			}
		}
		if c < 1 || c+1 >= len(acf) || acf[c] < 0.5*acf[lag] {
			break
		}
		y0, y1, y2 := acf[c-1], acf[c], acf[c+1]
		off := 0.0
		if den := y0 - 2*y1 + y2; den < 0 {
			off = math.Max(-0.5, math.Min(0.5, 0.5*(y0-y2)/den))
		}
		est = (float64(c) + off) / float64(m)
	}
	return est
}

// amplitude is the mean of each cycle's peak above the series' median.
func amplitude(x []float64, period float64) float64 {
	med := median(x)
	var sum float64
	cycles := 0
	for start := 0.0; start+period <= float64(len(x))+1e-9; start += period {
		lo, hi := int(math.Round(start)), int(math.Round(start+period))
		hi = min(hi, len(x))
		if hi <= lo {
			break
		}
		sum += slices.Max(x[lo:hi]) - med
		cycles++
	}
	if cycles == 0 {
		return 0
	}
	return math.Round(sum/float64(cycles)*1000) / 1000
}

// maxPeriodSeries bounds the work: a longer series is taken in bins of
// whole seconds (each bin's highest figure, so a stall is not averaged away).
const maxPeriodSeries = 1200

// coarsen fills the series' gaps (fillGaps) and takes a long one in bins,
// in one pass that keeps only the bins.
func coarsen(x []float64) []float64 {
	if len(x) <= maxPeriodSeries {
		return fillGaps(x)
	}
	first := slices.IndexFunc(x, func(v float64) bool { return !math.IsNaN(v) })
	if first < 0 {
		return nil
	}
	bin := (len(x) + maxPeriodSeries - 1) / maxPeriodSeries
	out := make([]float64, 0, maxPeriodSeries)
	prev := x[first]
	for i := 0; i < len(x); i += bin {
		hi := math.Inf(-1)
		for _, v := range x[i:min(i+bin, len(x))] {
			if math.IsNaN(v) {
				v = prev
			}
			prev = v
			hi = max(hi, v)
		}
		out = append(out, hi)
	}
	return out
}

func autocorr(d []float64, maxLag int) []float64 {
	var c0 float64
	for _, v := range d {
		c0 += v * v
	}
	if c0 == 0 || maxLag < 3 {
		return nil
	}
	out := make([]float64, maxLag+1)
	for k := 0; k <= maxLag; k++ {
		var c float64
		for i := 0; i+k < len(d); i++ {
			c += d[i] * d[i+k]
		}
		// Normalised by the overlap, so that long lags are not damped.
		out[k] = c / c0 * float64(len(d)) / float64(len(d)-k)
	}
	return out
}

// varies reports that what detrend left of x is more than its rounding
// (a constant series or a straight line leaves only that, whose
// autocorrelation is anything) and is finite.
func varies(x, d []float64) bool {
	var scale, ss float64
	for i := range x {
		scale = max(scale, math.Abs(x[i]))
		ss += d[i] * d[i]
	}
	return math.Sqrt(ss/float64(len(d))) > 1e-9*scale && !math.IsInf(ss, 0)
}

// detrend removes the least-squares line (a backlog building up is a
// trend, not a wave).
func detrend(x []float64) []float64 {
	n := float64(len(x))
	var mt, my float64
	for i, v := range x {
		mt += float64(i) / n
		my += v / n
	}
	var stt, sty float64
	for i, v := range x {
		stt += (float64(i) - mt) * (float64(i) - mt)
		sty += (float64(i) - mt) * (v - my)
	}
	b := 0.0
	if stt > 0 {
		b = sty / stt
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v - my - b*(float64(i)-mt)
	}
	return out
}

// fillGaps replaces NaN with the previous figure (the next one at the
// start); a series with no figure at all is empty.
func fillGaps(s []float64) []float64 {
	out := slices.Clone(s)
	first := -1
	for i, v := range out {
		if !math.IsNaN(v) {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	for i := range first {
		out[i] = out[first]
	}
	for i := first + 1; i < len(out); i++ {
		if math.IsNaN(out[i]) {
			out[i] = out[i-1]
		}
	}
	return out
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
