package curve

import (
	"math"
	"sync"
)

// tTwoSided is P(|T| ≥ t) for Student's t with dof degrees of freedom:
// the regularized incomplete beta I_{dof/(dof+t²)}(dof/2, 1/2).
func tTwoSided(t float64, dof int) float64 {
	if dof < 1 || math.IsNaN(t) {
		return 1
	}
	if math.IsInf(t, 0) {
		return 0
	}
	v := float64(dof)
	return incBeta(v/2, 0.5, v/(v+t*t))
}

// tQuantile is Student's t quantile: the t with P(|T| ≥ t) = alpha
// (alpha 0.05: the 97.5 % quantile of a 95 % interval), by bisection on
// tTwoSided, which falls with t; remembered, as a curve asks for the same
// few many times.
func tQuantile(alpha float64, dof int) float64 {
	if dof < 1 || alpha <= 0 {
		return math.Inf(1)
	}
	k := tKey{alpha, dof}
	if v, ok := tCache.Load(k); ok {
		return v.(float64)
	}
	v := tSolve(alpha, dof)
	tCache.Store(k, v)
	return v
}

type tKey struct {
	alpha float64
	dof   int
}

// tCache holds the quantiles asked for: a few levels (95 %, Bonferroni's)
// times the degrees of freedom of real campaigns (at most MaxRuns).
var tCache sync.Map

func tSolve(alpha float64, dof int) float64 {
	lo, hi := 0.0, 1.0
	for tTwoSided(hi, dof) > alpha {
		lo, hi = hi, hi*2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if tTwoSided(mid, dof) > alpha {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// incBeta is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (Lentz's method), on the side where it converges.
func incBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		for _, num := range [2]float64{
			fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)),
			-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)),
		} {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			h *= d * c
		}
		if math.Abs(d*c-1) < 1e-15 {
			break
		}
	}
	return h
}
