package curve

import "math"

// lsqFit is an ordinary least-squares fit: the coefficients, (XᵀX)⁻¹ (the
// coefficients' covariance over σ²), the residual sum of squares and the
// residual degrees of freedom.
type lsqFit struct {
	beta []float64
	inv  [][]float64
	sse  float64
	dof  int
}

// lsq fits y = X·β by Householder QR (no normal equations: hinge columns
// at nearby breaks are nearly collinear). ok is false when X has fewer rows
// than columns or is rank-deficient.
func lsq(x [][]float64, y []float64) (lsqFit, bool) {
	n := len(y)
	if n == 0 || len(x) != n || len(x[0]) == 0 || n < len(x[0]) {
		return lsqFit{}, false
	}
	a := make([][]float64, n)
	for i := range x {
		a[i] = append([]float64(nil), x[i]...)
	}
	b := append([]float64(nil), y...)
	if !householder(a, b) {
		return lsqFit{}, false
	}
	return solveR(a, b), true
}

// householder reduces a (n×p) to R in its top p rows and b to Qᵀb, in
// place; false when a column is (nearly) a combination of those before.
func householder(a [][]float64, b []float64) bool {
	n, p := len(a), len(a[0])
	var scale float64
	v := make([]float64, n)
	for j := range p {
		var norm float64
		for i := j; i < n; i++ {
			norm = math.Hypot(norm, a[i][j])
		}
		scale = math.Max(scale, norm)
		if norm == 0 || norm <= 1e-10*scale {
			return false
		}
		if a[j][j] > 0 {
			norm = -norm
		}
		var vv float64
		for i := j; i < n; i++ {
			v[i] = a[i][j]
			if i == j {
				v[i] -= norm
			}
			vv += v[i] * v[i]
		}
		reflect := func(col func(i int) *float64) {
			var s float64
			for i := j; i < n; i++ {
				s += v[i] * *col(i)
			}
			s = 2 * s / vv
			for i := j; i < n; i++ {
				*col(i) -= s * v[i]
			}
		}
		for k := j; k < p; k++ {
			reflect(func(i int) *float64 { return &a[i][k] })
		}
		reflect(func(i int) *float64 { return &b[i] })
	}
	return true
}

// solveR solves R·β = (Qᵀy)[:p] and forms (XᵀX)⁻¹ = R⁻¹·R⁻ᵀ; the residual
// sum of squares is what Qᵀy holds below row p.
func solveR(a [][]float64, b []float64) lsqFit {
	n, p := len(a), len(a[0])
	rinv := make([][]float64, p)
	for i := range rinv {
		rinv[i] = make([]float64, p)
	}
	for j := p - 1; j >= 0; j-- {
		rinv[j][j] = 1 / a[j][j]
		for i := j - 1; i >= 0; i-- {
			var s float64
			for k := i + 1; k <= j; k++ {
				s += a[i][k] * rinv[k][j]
			}
			rinv[i][j] = -s / a[i][i]
		}
	}
	f := lsqFit{beta: make([]float64, p), inv: make([][]float64, p), dof: n - p}
	for i := range p {
		for k := range p {
			f.beta[i] += rinv[i][k] * b[k]
		}
		f.inv[i] = make([]float64, p)
		for j := range p {
			for k := max(i, j); k < p; k++ {
				f.inv[i][j] += rinv[i][k] * rinv[j][k]
			}
		}
	}
	for i := p; i < n; i++ {
		f.sse += b[i] * b[i]
	}
	return f
}

// quad is cᵀ·M·c.
func quad(m [][]float64, c []float64) float64 {
	var s float64
	for i := range c {
		for j := range c {
			s += c[i] * m[i][j] * c[j]
		}
	}
	return s
}
