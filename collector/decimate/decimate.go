// Package decimate keeps a chart's series bounded whatever the evidence
// holds. A Series takes its points as they are read and keeps them exactly
// while they are few; past twice its number of buckets it folds them into
// a fixed grid of buckets over its X range, each bucket keeping its lowest
// and its highest point. One bucket per pixel column (Buckets covers the
// report's 830-pixel plot) keeps every spike a line drawn at that width
// would show, and memory and output stay at two points a bucket, however
// many samples a file holds.
//
// It belongs to the reading of the evidence, not to a renderer: the HTML
// report, a terminal chart and any later renderer draw the same points.
package decimate

import (
	"math"
	"slices"
)

const (
	// Buckets is a series' grid: at least one bucket per pixel column of
	// the widest chart (a power of two, so that halving keeps the grid).
	Buckets = 1024
	// MinBuckets is the coarsest grid a Set halves its series to.
	MinBuckets = 32
)

// Point is one (x, y) of a series.
type Point struct{ X, Y float64 }

type bucket struct {
	lo, hi Point
	used   bool
}

// Series is one line's points over [x0, x1].
type Series struct {
	x0, x1  float64
	n       int
	raw     []Point  // the points as added, while len(raw) <= 2n
	bk      []bucket // the grid, once raw overflowed (raw is nil then)
	kept    int
	dropped int
}

// New returns a series over [x0, x1] with a grid of buckets buckets
// (rounded up to a power of two; Buckets when not positive).
func New(x0, x1 float64, buckets int) *Series {
	n := 1
	if buckets <= 0 {
		buckets = Buckets
	}
	for n < buckets && n < 1<<30 {
		n *= 2
	}
	return &Series{x0: x0, x1: x1, n: n}
}

// Add files one point. A point outside [x0, x1] or not finite is dropped
// (and counted).
func (s *Series) Add(x, y float64) {
	if !(x >= s.x0 && x <= s.x1) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
		s.dropped++
		return
	}
	s.kept++
	p := Point{x, y}
	if s.bk == nil {
		s.raw = append(s.raw, p)
		if len(s.raw) > 2*s.n {
			s.fold()
		}
		return
	}
	s.put(p)
}

// fold moves the exact points into the grid.
func (s *Series) fold() {
	s.bk = make([]bucket, s.n)
	for _, p := range s.raw {
		s.put(p)
	}
	s.raw = nil
}

func (s *Series) index(x float64) int {
	w := s.x1 - s.x0
	if w <= 0 {
		return 0
	}
	i := int((x - s.x0) / w * float64(s.n))
	return min(max(i, 0), s.n-1)
}

func (s *Series) put(p Point) {
	b := &s.bk[s.index(p.X)]
	switch {
	case !b.used:
		b.lo, b.hi, b.used = p, p, true
	case p.Y < b.lo.Y:
		b.lo = p
	case p.Y > b.hi.Y:
		b.hi = p
	}
}

// Halve merges each pair of neighbouring buckets, down to one bucket: the
// merged bucket keeps the lower of the two lows and the higher of the two
// highs, exactly what it would have kept had the points come to it.
func (s *Series) Halve() {
	if s.n <= 1 {
		return
	}
	s.n /= 2
	if s.bk == nil {
		if len(s.raw) > 2*s.n {
			s.fold()
		}
		return
	}
	for i := range s.n {
		a, b := s.bk[2*i], s.bk[2*i+1]
		switch {
		case !a.used:
			a = b
		case b.used:
			if b.lo.Y < a.lo.Y {
				a.lo = b.lo
			}
			if b.hi.Y > a.hi.Y {
				a.hi = b.hi
			}
		}
		s.bk[i] = a
	}
	s.bk = slices.Clip(s.bk[:s.n])
}

// Len is the number of points Points returns.
func (s *Series) Len() int {
	if s.bk == nil {
		return len(s.raw)
	}
	n := 0
	for _, b := range s.bk {
		if b.used {
			n += 2
		}
	}
	return n
}

// Kept is the number of points added in range; Dropped the others.
func (s *Series) Kept() int    { return s.kept }
func (s *Series) Dropped() int { return s.dropped }

// Decimated reports whether the points were folded into the grid.
func (s *Series) Decimated() bool { return s.bk != nil }

// Points returns the series: the points as added when they were few,
// otherwise each bucket's low and high in X order, buckets in X order. A
// bucket always gives two points (its one point twice when low and high
// are one sample), so that series sampled together, decimated alike, keep
// their points index for index, as a stacked chart adds them.
func (s *Series) Points() (xs, ys []float64) {
	if s.bk == nil {
		xs, ys = make([]float64, len(s.raw)), make([]float64, len(s.raw))
		for i, p := range s.raw {
			xs[i], ys[i] = p.X, p.Y
		}
		return xs, ys
	}
	n := s.Len()
	xs, ys = make([]float64, 0, n), make([]float64, 0, n)
	for _, b := range s.bk {
		if !b.used {
			continue
		}
		first, second := b.lo, b.hi
		if second.X < first.X {
			first, second = second, first
		}
		xs, ys = append(xs, first.X, second.X), append(ys, first.Y, second.Y)
	}
	return xs, ys
}

// Set is series that share one budget of buckets, such as one run's
// resource lines: when a new series would take the set past its budget,
// every series' grid is halved (down to MinBuckets), so that a folder with
// many processes draws each coarser instead of drawing more.
type Set struct {
	x0, x1 float64
	budget int
	n      int
	all    []*Series
}

// NewSet returns a set over [x0, x1] whose series together keep at most
// budget buckets while each has more than MinBuckets.
func NewSet(x0, x1 float64, budget int) *Set {
	return &Set{x0: x0, x1: x1, budget: budget, n: Buckets}
}

// New adds a series to the set.
func (st *Set) New() *Series {
	for (len(st.all)+1)*st.n > st.budget && st.n > MinBuckets {
		st.n /= 2
		for _, s := range st.all {
			s.Halve()
		}
	}
	s := New(st.x0, st.x1, st.n)
	st.all = append(st.all, s)
	return s
}
