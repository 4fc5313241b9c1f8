package charts

import (
	"fmt"
	"math"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
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

// Plot is a braille time-series line chart with a time axis in seconds
// from the run's start and a value axis from 0, drawn the way ntcharts'
// time-series line chart draws braille (2×4 dots a cell) into a small cell
// buffer: ntcharts' own canvas allocates a full lipgloss style per cell,
// twice per draw, and its braille grid a pattern array per line, which cost
// a 200×60 frame of six charts 15–25 ms of CPU; this buffer about 1 ms.
type Plot struct {
	Width, Height int
	// XMax is the seconds the time axis spans (the run's planned length);
	// it grows to the newest point.
	XMax float64
	// YMax is the least top of the value axis; it grows to the largest point.
	YMax   float64
	YLabel func(float64) string // value axis labels
	Axis   lipgloss.Style
	Traces []Trace // drawn in order: a later trace's colour wins a shared cell
	// Mark draws a dotted vertical line at that second where no trace is
	// (the end of the warmup); 0 draws none.
	Mark float64
}

// cell is one character of a plot and the trace whose colour it takes
// (-1: none).
type cell struct {
	r     rune
	trace int
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
		yl = Compact
	}
	labels := make([]string, gh+1) // by rows above the time axis
	lw := 0
	for i := 0; i <= gh; i += ySteps {
		labels[i] = yl(float64(i) * rowStep)
		lw = max(lw, ansi.StringWidth(labels[i]))
	}
	gw := p.Width - lw - 1
	if gw < 4 {
		return ""
	}
	return p.text(p.draw(gw, gh, xMax, yMax), labels, lw, xMax)
}

// dots are the braille dot bits of a cell by row (0-3) and column (0-1).
var dots = [4][2]rune{{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}}

// draw lays each trace's lines into a gw×gh buffer of braille cells (2×4
// dots a cell); a cell two lines cross holds both lines' dots.
func (p Plot) draw(gw, gh int, xMax, yMax float64) [][]cell {
	cells := make([][]cell, gh)
	buf := make([]cell, gw*gh)
	for i := range buf {
		buf[i] = cell{' ', -1}
	}
	for y := range cells {
		cells[y] = buf[y*gw : (y+1)*gw]
	}
	w, h := 2*gw-1, 4*gh-1
	dot := func(x, y, trace int) {
		c := &cells[y/4][x/2]
		if c.r < runes.BrailleBlockOffset || c.r > runes.BrailleBlockOffset+0xff {
			c.r = runes.BrailleBlockOffset
		}
		c.r |= dots[y%4][x%2]
		c.trace = trace
	}
	at := func(pt Point) (int, int) {
		x := int(math.Round(pt.T / xMax * float64(w)))
		y := h - int(math.Round(pt.V/yMax*float64(h)))
		return min(max(x, 0), w), min(max(y, 0), h)
	}
	for ti, t := range p.Traces {
		for i, pt := range t.Points {
			x1, y1 := at(pt)
			x0, y0 := x1, y1
			if i > 0 {
				x0, y0 = at(t.Points[i-1])
			}
			n := max(abs(x1-x0), abs(y1-y0))
			for k := 0; k <= n; k++ { // the segment, one dot a step
				x, y := x0, y0
				if n > 0 {
					x, y = x0+(x1-x0)*k/n, y0+(y1-y0)*k/n
				}
				dot(x, y, ti)
			}
		}
	}
	if p.Mark > 0 && p.Mark < xMax {
		x := int(math.Round(p.Mark/xMax*float64(w))) / 2
		for y := range cells {
			if cells[y][x].trace < 0 {
				cells[y][x] = cell{'┊', markTrace}
			}
		}
	}
	return cells
}

// markTrace is the cell owner of the mark: drawn in the axis style.
const markTrace = -2

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// text writes the buffer with its axes and labels, each run of cells of
// one colour wrapped in that colour's escape codes.
func (p Plot) text(cells [][]cell, labels []string, lw int, xMax float64) string {
	var b strings.Builder
	gh, gw := len(cells), len(cells[0])
	b.Grow((gw + lw + 8) * (gh + 2) * 3)
	looks := make([]look, len(p.Traces))
	for i, t := range p.Traces {
		looks[i] = lookOf(t.Style)
	}
	axis := lookOf(p.Axis)
	run := make([]rune, 0, gw)
	for y, row := range cells {
		axis.write(&b, fmt.Sprintf("%*s│", lw, labels[gh-y]))
		for x := 0; x < len(row); {
			run = run[:0]
			end := x
			for ; end < len(row) && row[end].trace == row[x].trace; end++ {
				run = append(run, row[end].r)
			}
			if t := row[x].trace; t >= 0 {
				looks[t].write(&b, string(run))
			} else if t == markTrace {
				axis.write(&b, string(run))
			} else {
				b.WriteString(string(run))
			}
			x = end
		}
		b.WriteByte('\n')
	}
	axis.write(&b, fmt.Sprintf("%*s└%s", lw, labels[0], strings.Repeat("─", gw)))
	b.WriteByte('\n')
	axis.write(&b, timeLabels(lw+1, gw, xMax))
	return b.String()
}

// look is a style's escape codes before and after its text, taken once: a
// lipgloss render per run of cells costs a 200×60 frame a millisecond.
type look struct{ before, after string }

func lookOf(s lipgloss.Style) look {
	const mark = "\x00"
	out := s.Render(mark)
	i := strings.Index(out, mark)
	if i < 0 {
		return look{}
	}
	return look{out[:i], out[i+len(mark):]}
}

func (l look) write(b *strings.Builder, text string) {
	b.WriteString(l.before)
	b.WriteString(text)
	b.WriteString(l.after)
}

// timeLabels is the time axis' labels: round times (5s, 30s, 2m…) under
// their column, as many as fit with room between them, padded to the width.
func timeLabels(indent, gw int, xMax float64) string {
	line := []rune(strings.Repeat(" ", indent+gw))
	tick := 7200.0
	for _, t := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600} {
		if xMax/t*7 <= float64(gw) { // a label and its gap take about 7 cells
			tick = t
			break
		}
	}
	next := 0
	for t := 0.0; t <= xMax; t += tick {
		col := indent + int(math.Round(t/xMax*float64(gw-1)))
		label := []rune(Elapsed(t))
		col = min(col, len(line)-len(label)) // the last one may lean left
		if col < next {
			continue
		}
		copy(line[col:], label)
		next = col + len(label) + 1
	}
	return string(line)
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
