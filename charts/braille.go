package charts

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/linechart/timeserieslinechart"
	"github.com/charmbracelet/lipgloss"
)

// Point is one sample of a run's time series: T seconds from the run's
// start, value V.
type Point struct{ T, V float64 }

// TimeSeries is a bounded series of points in time order. When full, it
// merges neighbouring points (their mean) and from then on keeps one point
// per group of that many samples, so the whole run stays in view at a
// coarser step and memory stays bounded however long the run.
type TimeSeries struct {
	Cap  int // points kept; 0 means 240
	pts  []Point
	step int   // samples per kept point: 1, 2, 4…
	n    int   // samples in the newest kept point
	last Point // the newest sample
}

// Push appends a sample; a sample at the time of the newest one replaces it
// (a total that sums several sources each second). Non-finite or negative
// values count as 0; a sample older than the newest is ignored.
func (s *TimeSeries) Push(t, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		v = 0
	}
	if math.IsNaN(t) || math.IsInf(t, 0) {
		return
	}
	k := len(s.pts) - 1
	switch {
	case k >= 0 && t == s.last.T:
		s.pts[k].V += (v - s.last.V) / float64(s.n)
	case k >= 0 && t < s.last.T:
		return
	case k >= 0 && s.n < s.step:
		p := &s.pts[k]
		p.T, p.V = (p.T*float64(s.n)+t)/float64(s.n+1), (p.V*float64(s.n)+v)/float64(s.n+1)
		s.n++
	default:
		s.pts = append(s.pts, Point{t, v})
		s.n = 1
		s.step = max(s.step, 1)
	}
	s.last = Point{t, v}
	limit := s.Cap
	if limit <= 0 {
		limit = 240
	}
	if len(s.pts) > limit {
		s.halve()
	}
}

// halve merges each pair of kept points into one, weighted by the samples
// each holds (only the newest may hold fewer than step).
func (s *TimeSeries) halve() {
	w := func(i int) float64 {
		if i == len(s.pts)-1 {
			return float64(s.n)
		}
		return float64(s.step)
	}
	k := 0
	for i := 0; i < len(s.pts); i += 2 {
		if i+1 == len(s.pts) {
			s.pts[k] = s.pts[i] // alone: a partial group of the new step
			k++
			break
		}
		a, b, wa, wb := s.pts[i], s.pts[i+1], w(i), w(i+1)
		s.pts[k] = Point{(a.T*wa + b.T*wb) / (wa + wb), (a.V*wa + b.V*wb) / (wa + wb)}
		if i+1 == len(s.pts)-1 {
			s.n += s.step
		}
		k++
	}
	s.pts = s.pts[:k]
	s.step *= 2
}

// Points returns the points, oldest first (not a copy).
func (s *TimeSeries) Points() []Point { return s.pts }

// Len is the number of points.
func (s *TimeSeries) Len() int { return len(s.pts) }

// Last is the newest value, 0 when empty.
func (s *TimeSeries) Last() float64 {
	if len(s.pts) == 0 {
		return 0
	}
	return s.pts[len(s.pts)-1].V
}

// Peak is the largest value, 0 when empty.
func (s *TimeSeries) Peak() float64 {
	var m float64
	for _, p := range s.pts {
		m = max(m, p.V)
	}
	return m
}

// Values returns the values, oldest first (for sparklines).
func (s *TimeSeries) Values() []float64 {
	out := make([]float64, len(s.pts))
	for i, p := range s.pts {
		out[i] = p.V
	}
	return out
}

// Trace is one line of a Plot.
type Trace struct {
	Name   string
	Points []Point
	Style  lipgloss.Style
}

// Plot is a braille time-series line chart (ntcharts) with a time axis in
// seconds from the run's start and a value axis from 0.
type Plot struct {
	Width, Height int
	// XMax is the seconds the time axis spans (the run's planned length);
	// it grows to the newest point.
	XMax float64
	// YMax is the least top of the value axis; it grows to the largest point.
	YMax   float64
	YLabel func(float64) string // value axis labels
	Axis   lipgloss.Style
	Traces []Trace // drawn in order: a later trace covers an earlier one
}

// Render draws the plot as exactly Height lines of Width cells.
func (p Plot) Render() string {
	if p.Width < 8 || p.Height < 3 {
		return ""
	}
	xMax, yMax := max(p.XMax, 1), p.YMax
	for _, t := range p.Traces {
		for _, pt := range t.Points {
			xMax, yMax = max(xMax, pt.T), max(yMax, pt.V)
		}
	}
	// Each row of the graph is a round amount and labels stand every few
	// rows, so every label is a round number.
	gh := p.Height - 2
	rowStep := niceCeil(yMax / float64(gh))
	yMax = rowStep * float64(gh)
	ySteps := 1
	for _, k := range []int{2, 4, 5, 10, 20, 25, 50} {
		if k <= gh/2 {
			ySteps = k
		}
	}
	yl := p.YLabel
	if yl == nil {
		yl = func(v float64) string { return Compact(v) }
	}
	origin := time.Unix(0, 0)
	xSteps := max(8, p.Width/5)
	c := timeserieslinechart.New(p.Width, p.Height,
		timeserieslinechart.WithTimeRange(origin, origin.Add(time.Duration(math.Ceil(xMax))*time.Second)),
		timeserieslinechart.WithYRange(0, yMax),
		timeserieslinechart.WithXYSteps(xSteps, ySteps),
		timeserieslinechart.WithAxesStyles(p.Axis, p.Axis),
		timeserieslinechart.WithXLabelFormatter(func(_ int, v float64) string { return Elapsed(v) }),
		timeserieslinechart.WithYLabelFormatter(func(_ int, v float64) string { return yl(v) }),
	)
	names := make([]string, 0, len(p.Traces))
	for i, t := range p.Traces {
		name := string(rune('a'+i%26)) + t.Name // drawn in name order
		c.SetDataSetStyle(name, t.Style)
		for _, pt := range t.Points {
			c.PushDataSet(name, timeserieslinechart.TimePoint{Time: origin.Add(time.Duration(pt.T * float64(time.Second))), Value: pt.V})
		}
		if len(t.Points) > 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		c.DrawXYAxisAndLabel()
	} else {
		c.DrawBrailleDataSets(names)
	}
	return c.View()
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten, so axis
// labels are round numbers.
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		if f*e >= v*(1-1e-9) {
			return f * e
		}
	}
	return 10 * e
}

// Elapsed labels seconds from a run's start: 45s, 2m, 2m30s, 1h05m.
func Elapsed(s float64) string {
	n := int64(math.Round(s))
	switch {
	case n >= 3600:
		return fmt.Sprintf("%dh%02dm", n/3600, n%3600/60)
	case n >= 60 && n%60 == 0:
		return fmt.Sprintf("%dm", n/60)
	case n >= 60:
		return fmt.Sprintf("%dm%02ds", n/60, n%60)
	}
	return fmt.Sprintf("%ds", n)
}

// Compact writes a value in at most 5 cells: 0, 12, 2.5, 850, 1.2k, 35k, 1.2M.
func Compact(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1e6:
		return trim(v/1e6) + "M"
	case a >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case a >= 1e3:
		return trim(v/1e3) + "k"
	case a >= 10:
		return fmt.Sprintf("%.0f", v)
	}
	return trim(v)
}

// trim writes v with one decimal, without a trailing ".0".
func trim(v float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0")
}
