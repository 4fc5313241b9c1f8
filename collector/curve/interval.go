package curve

import "math"

// TQuantile is Student's t quantile with P(|T| ≥ t) = alpha and dof
// degrees of freedom (alpha 0.05: the 97.5 % quantile of a 95 %
// interval); +Inf for dof < 1.
func TQuantile(alpha float64, dof int) float64 { return tQuantile(alpha, dof) }

// Interval is the mean of replicates with its 95 % interval from
// Student's t with n − 1 degrees of freedom; with fewer than two
// replicates there is no interval (CI zero, Shown false).
type Interval struct {
	Mean float64    `json:"mean"`
	CI   [2]float64 `json:"ci95"`
	N    int        `json:"n"`
}

// Shown reports an interval that may be printed: two replicates at least.
func (i Interval) Shown() bool { return i.N >= 2 }

// MeanCI is the mean of xs with its 95 % interval: the rounds of a
// campaign are the replicates, each an independent measurement.
func MeanCI(xs []float64) Interval {
	n := len(xs)
	if n == 0 {
		return Interval{}
	}
	var mean float64
	for _, x := range xs {
		mean += x / float64(n)
	}
	iv := Interval{Mean: mean, N: n}
	if n < 2 {
		return iv
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	half := tQuantile(0.05, n-1) * math.Sqrt(ss/float64(n-1)/float64(n))
	iv.CI = [2]float64{mean - half, mean + half}
	return iv
}
