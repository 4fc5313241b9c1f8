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
	w, h := float64(c.Width), float64(c.Height)
	if w == 0 {
		w = 900
	}
	if h == 0 {
		h = 220
	}
	pw, ph := w-padL-padR, h-padT-padB
	xmax := c.XMax
	// Stacked areas are drawn on cumulative sums.
	cum := make([][]float64, len(c.Stacked))
	for i, l := range c.Stacked {
		cum[i] = make([]float64, len(l.Y))
		for j := range l.Y {
			cum[i][j] = l.Y[j]
			if i > 0 && j < len(cum[i-1]) {
				cum[i][j] += cum[i-1][j]
			}
		}
	}
	ymax := 0.0
	for _, l := range c.Lines {
		for j, y := range l.Y {
			ymax = math.Max(ymax, y)
			xmax = math.Max(xmax, l.X[j])
		}
	}
	for i, l := range c.Stacked {
		for j, y := range cum[i] {
			ymax = math.Max(ymax, y)
			xmax = math.Max(xmax, l.X[j])
		}
	}
	if xmax <= 0 {
		xmax = 1
	}
	ystep := niceStep(ymax / 4)
	if ymax <= 0 {
		ystep = 1
	}
	ytop := math.Ceil(ymax/ystep) * ystep
	if ytop <= c.YMin {
		ytop = c.YMin + ystep
	}
	px := func(x float64) float64 { return padL + x/xmax*pw }
	py := func(y float64) float64 { return padT + ph - (y-c.YMin)/(ytop-c.YMin)*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<text class="title" x="%.0f" y="16">%s</text>`, padL, html.EscapeString(c.Title))
	for _, bd := range c.Bands {
		fmt.Fprintf(&b, `<rect class="band" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`,
			px(bd.X0), padT, math.Max(0, px(bd.X1)-px(bd.X0)), ph, html.EscapeString(bd.Label))
		fmt.Fprintf(&b, `<text class="bandlabel" x="%.1f" y="%.1f">%s</text>`, px(bd.X0)+3, padT+11, html.EscapeString(bd.Label))
	}
	// Y axis with gridlines and unit.
	for y := c.YMin; y <= ytop+ystep/2; y += ystep {
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, padL, padL+pw, py(y), py(y))
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, padL-6, py(y)+4, num(y))
	}
	fmt.Fprintf(&b, `<text class="unit" x="12" y="%.1f" transform="rotate(-90 12 %.1f)" text-anchor="middle">%s</text>`, padT+ph/2, padT+ph/2, html.EscapeString(c.YUnit))
	// X axis in seconds.
	xstep := niceStep(xmax / 8)
	for x := 0.0; x <= xmax+xstep/100; x += xstep {
		fmt.Fprintf(&b, `<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, px(x), px(x), padT+ph, padT+ph+4)
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, px(x), padT+ph+16, num(x))
	}
	fmt.Fprintf(&b, `<text class="unit" x="%.1f" y="%.1f" text-anchor="end">seconds since run start</text>`, padL+pw, h-2)
	fmt.Fprintf(&b, `<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, padL, padL+pw, padT+ph, padT+ph)
	for i := len(c.Stacked) - 1; i >= 0; i-- {
		l := c.Stacked[i]
		if len(l.X) == 0 {
			continue
		}
		var pts []string
		for j := range l.X {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(l.X[j]), py(cum[i][j])))
		}
		for j := len(l.X) - 1; j >= 0; j-- {
			base := c.YMin
			if i > 0 && j < len(cum[i-1]) {
				base = cum[i-1][j]
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(l.X[j]), py(base)))
		}
		fmt.Fprintf(&b, `<polygon class="area %s" points="%s"><title>%s</title></polygon>`, l.Class, strings.Join(pts, " "), html.EscapeString(l.Name))
	}
	for _, l := range c.Lines {
		if len(l.X) == 0 {
			continue
		}
		var pts []string
		for j := range l.X {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(l.X[j]), py(l.Y[j])))
		}
		dash := ""
		if l.Dash {
			dash = ` stroke-dasharray="5 4"`
		}
		fmt.Fprintf(&b, `<polyline class="line %s"%s points="%s"><title>%s</title></polyline>`, l.Class, dash, strings.Join(pts, " "), html.EscapeString(l.Name))
	}
	// Legend.
	lx := padL + pw
	all := append(append([]Line{}, c.Lines...), c.Stacked...)
	for i := len(all) - 1; i >= 0; i-- {
		name := html.EscapeString(all[i].Name)
		lx -= float64(len(all[i].Name))*6.2 + 26
		fmt.Fprintf(&b, `<rect class="key %s" x="%.1f" y="8" width="10" height="10"/><text class="legend" x="%.1f" y="17">%s</text>`, all[i].Class, lx, lx+14, name)
	}
	b.WriteString(`</svg>`)
	return b.String()
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
