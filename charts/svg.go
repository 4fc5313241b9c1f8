package charts

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Line is one series of an SVG chart; X in seconds from the run's start.
type Line struct {
	Name  string
	X, Y  []float64
	Class string // CSS class (colour), s1…s8
	Dash  bool
}

// Band shades an X interval, e.g. the warmup.
type Band struct {
	X0, X1 float64
	Label  string
}

// Chart is a time-series chart rendered as inline SVG with axes and units.
// All charts of a run share XMax so they line up on one time axis.
type Chart struct {
	Title   string
	YUnit   string
	XMax    float64
	YMin    float64
	Lines   []Line
	Stacked []Line // areas stacked in order (e.g. CPU per engine pod)
	Bands   []Band
	Width   int
	Height  int
}

const (
	padL, padR, padT, padB = 58.0, 12.0, 26.0, 34.0
)

// SVG renders the chart.
func (c Chart) SVG() string {
	f := c.frame()
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, f.w, f.h, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<text class="title" x="%.0f" y="16">%s</text>`, padL, html.EscapeString(c.Title))
	for _, bd := range c.Bands {
		fmt.Fprintf(&b, `<rect class="band" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`,
			f.px(bd.X0), padT, math.Max(0, f.px(bd.X1)-f.px(bd.X0)), f.ph, html.EscapeString(bd.Label))
		fmt.Fprintf(&b, `<text class="bandlabel" x="%.1f" y="%.1f">%s</text>`, f.px(bd.X0)+3, padT+11, html.EscapeString(bd.Label))
	}
	c.axes(&b, f)
	c.areas(&b, f)
	c.lines(&b, f)
	c.legend(&b, f)
	b.WriteString(`</svg>`)
	return b.String()
}

// frame is a chart's geometry: size, plot area and the scales of its data.
type frame struct {
	w, h, pw, ph      float64
	xmax, ystep, ytop float64
	ymin              float64
	cum               [][]float64 // the stacked areas' cumulative sums
}

func (f *frame) px(x float64) float64 { return padL + x/f.xmax*f.pw }
func (f *frame) py(y float64) float64 { return padT + f.ph - (y-f.ymin)/(f.ytop-f.ymin)*f.ph }

// frame sizes the chart and scales its axes to fit every point.
func (c Chart) frame() *frame {
	f := &frame{w: float64(c.Width), h: float64(c.Height), xmax: c.XMax, ymin: c.YMin}
	if f.w == 0 {
		f.w = 900
	}
	if f.h == 0 {
		f.h = 220
	}
	f.pw, f.ph = f.w-padL-padR, f.h-padT-padB
	// Stacked areas are drawn on cumulative sums.
	f.cum = make([][]float64, len(c.Stacked))
	for i, l := range c.Stacked {
		f.cum[i] = make([]float64, len(l.Y))
		for j := range l.Y {
			f.cum[i][j] = l.Y[j]
			if i > 0 && j < len(f.cum[i-1]) {
				f.cum[i][j] += f.cum[i-1][j]
			}
		}
	}
	ymax := 0.0
	for _, l := range c.Lines {
		for j, y := range l.Y {
			ymax = math.Max(ymax, y)
			f.xmax = math.Max(f.xmax, l.X[j])
		}
	}
	for i, l := range c.Stacked {
		for j, y := range f.cum[i] {
			ymax = math.Max(ymax, y)
			f.xmax = math.Max(f.xmax, l.X[j])
		}
	}
	if f.xmax <= 0 {
		f.xmax = 1
	}
	f.ystep = niceStep(ymax / 4)
	if ymax <= 0 {
		f.ystep = 1
	}
	f.ytop = math.Ceil(ymax/f.ystep) * f.ystep
	if f.ytop <= c.YMin {
		f.ytop = c.YMin + f.ystep
	}
	return f
}

// axes draws the Y axis with gridlines and unit, and the X axis in seconds.
func (c Chart) axes(b *strings.Builder, f *frame) {
	for y := c.YMin; y <= f.ytop+f.ystep/2; y += f.ystep {
		fmt.Fprintf(b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, padL, padL+f.pw, f.py(y), f.py(y))
		fmt.Fprintf(b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, padL-6, f.py(y)+4, num(y))
	}
	fmt.Fprintf(b, `<text class="unit" x="12" y="%.1f" transform="rotate(-90 12 %.1f)" text-anchor="middle">%s</text>`, padT+f.ph/2, padT+f.ph/2, html.EscapeString(c.YUnit))
	xstep := niceStep(f.xmax / 8)
	for x := 0.0; x <= f.xmax+xstep/100; x += xstep {
		fmt.Fprintf(b, `<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, f.px(x), f.px(x), padT+f.ph, padT+f.ph+4)
		fmt.Fprintf(b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, f.px(x), padT+f.ph+16, num(x))
	}
	fmt.Fprintf(b, `<text class="unit" x="%.1f" y="%.1f" text-anchor="end">seconds since run start</text>`, padL+f.pw, f.h-2)
	fmt.Fprintf(b, `<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, padL, padL+f.pw, padT+f.ph, padT+f.ph)
}

// areas draws the stacked areas, the last one first.
func (c Chart) areas(b *strings.Builder, f *frame) {
	for i := len(c.Stacked) - 1; i >= 0; i-- {
		l := c.Stacked[i]
		if len(l.X) == 0 {
			continue
		}
		var pts []string
		for j := range l.X {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", f.px(l.X[j]), f.py(f.cum[i][j])))
		}
		for j := len(l.X) - 1; j >= 0; j-- {
			base := c.YMin
			if i > 0 && j < len(f.cum[i-1]) {
				base = f.cum[i-1][j]
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", f.px(l.X[j]), f.py(base)))
		}
		fmt.Fprintf(b, `<polygon class="area %s" points="%s"><title>%s</title></polygon>`, l.Class, strings.Join(pts, " "), html.EscapeString(l.Name))
	}
}

func (c Chart) lines(b *strings.Builder, f *frame) {
	for _, l := range c.Lines {
		if len(l.X) == 0 {
			continue
		}
		var pts []string
		for j := range l.X {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", f.px(l.X[j]), f.py(l.Y[j])))
		}
		dash := ""
		if l.Dash {
			dash = ` stroke-dasharray="5 4"`
		}
		fmt.Fprintf(b, `<polyline class="line %s"%s points="%s"><title>%s</title></polyline>`, l.Class, dash, strings.Join(pts, " "), html.EscapeString(l.Name))
	}
}

// legend lists every series right-aligned above the plot.
func (c Chart) legend(b *strings.Builder, f *frame) {
	lx := padL + f.pw
	all := append(append([]Line{}, c.Lines...), c.Stacked...)
	for i := len(all) - 1; i >= 0; i-- {
		name := html.EscapeString(all[i].Name)
		lx -= float64(len(all[i].Name))*6.2 + 26
		fmt.Fprintf(b, `<rect class="key %s" x="%.1f" y="8" width="10" height="10"/><text class="legend" x="%.1f" y="17">%s</text>`, all[i].Class, lx, lx+14, name)
	}
}

// niceStep rounds a raw step to 1, 2 or 5 × 10^k.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / p; {
	case f <= 1:
		return p
	case f <= 2:
		return 2 * p
	case f <= 5:
		return 5 * p
	}
	return 10 * p
}

func num(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	if math.Abs(v) < 1 {
		return fmt.Sprintf("%.2g", v)
	}
	return fmt.Sprintf("%.1f", v)
}
