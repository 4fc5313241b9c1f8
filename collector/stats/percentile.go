package stats

import (
	"math"
	"slices"
)

// Percentile returns the q-quantile (0..1) of sorted values by linear
// interpolation between closest ranks (rank q·(n−1)), the definition k6 and
// numpy's default use. It is exact: no binning.
func Percentile[T int32 | int64](sorted []T, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if q <= 0 {
		return float64(sorted[0])
	}
	if q >= 1 {
		return float64(sorted[n-1])
	}
	rank := q * float64(n-1)
	lo := int(rank)
	frac := rank - float64(lo)
	if lo+1 >= n {
		return float64(sorted[n-1])
	}
	return float64(sorted[lo]) + frac*float64(sorted[lo+1]-sorted[lo])
}

// Latency is a latency summary in milliseconds.
type Latency struct {
	Count int64   `json:"count"`
	Avg   float64 `json:"avg"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Summarize sorts us (microseconds) in place and summarizes it in ms.
func Summarize[T int32 | int64](us []T) Latency {
	if len(us) == 0 {
		return Latency{}
	}
	slices.Sort(us)
	var sum float64
	for _, v := range us {
		sum += float64(v)
	}
	const ms = 1000.0
	return Latency{
		Count: int64(len(us)),
		Avg:   Round3(sum / float64(len(us)) / ms),
		P50:   Round3(Percentile(us, 0.50) / ms),
		P90:   Round3(Percentile(us, 0.90) / ms),
		P95:   Round3(Percentile(us, 0.95) / ms),
		P99:   Round3(Percentile(us, 0.99) / ms),
		Max:   Round3(float64(us[len(us)-1]) / ms),
	}
}

// Round3 keeps three decimals (µs resolution in ms), so that summary.json
// carries no false precision and recomputation is byte-stable.
func Round3(v float64) float64 {
	if v < 0 {
		return -Round3(-v)
	}
	return math.Floor(v*1000+0.5) / 1000 // never through an int64: a hostile figure would overflow it
}
