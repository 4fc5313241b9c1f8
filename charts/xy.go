package charts

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// XYPoint is one point of an XY chart; Lo and Hi draw a whisker (the
// spread between rounds) when Hi > Lo. Note is its tooltip.
type XYPoint struct {
	X, Y, Lo, Hi float64
	Note         string
}

// XYSeries is one series: markers, optionally joined by a line.
type XYSeries struct {
	Name    string
	Class   string // s0…s7
	Points  []XYPoint
	Join    bool // draw a line through the points
	Dash    bool
	Markers bool
}

// Ref is a horizontal reference line (an objective).
type Ref struct {
	Y     float64
	Label string
	Class string
}

// XYChart plots series against a numeric X (a rate, not time): the cost
// curve. YMax clips the axis (0: fit the data); points above it are drawn
// on the top edge as open markers, their value in the tooltip.
type XYChart struct {
	Title        string
	XUnit, YUnit string
	Series       []XYSeries
	Refs         []Ref
	Bands        []Band // X intervals, e.g. the capacity bracket
	YMax         float64
	XStep        float64 // spacing of the X ticks (1: whole numbers, such as hops); 0 chosen from the data
	Width        int
	Height       int
}

// SVG renders the chart.
func (c XYChart) SVG() string {
	w, h := float64(c.Width), float64(c.Height)
	if w == 0 {
		w = 900
	}
	if h == 0 {
		h = 260
	}
	pw, ph := w-padL-padR, h-padT-padB
	xmax, ymax := c.extent()
	xstep, ystep := niceStep(xmax/8), niceStep(ymax/4)
	if c.XStep > 0 {
		xstep = c.XStep
	}
	xtop, ytop := math.Ceil(xmax/xstep)*xstep, math.Ceil(ymax/ystep)*ystep
	px := func(x float64) float64 { return padL + x/xtop*pw }
	py := func(y float64) float64 { return padT + ph - math.Min(y, ytop)/ytop*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<text class="title" x="%.0f" y="16">%s</text>`, padL, html.EscapeString(c.Title))
	for _, bd := range c.Bands {
		x0, x1 := px(math.Min(bd.X0, xtop)), px(math.Min(bd.X1, xtop))
		fmt.Fprintf(&b, `<rect class="band" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`, x0, padT, math.Max(1.5, x1-x0), ph, html.EscapeString(bd.Label))
		fmt.Fprintf(&b, `<text class="bandlabel" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, x0-3, padT+11, html.EscapeString(bd.Label))
	}
	for y := 0.0; y <= ytop+ystep/2; y += ystep {
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, padL, padL+pw, py(y), py(y))
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, padL-6, py(y)+4, num(y))
	}
	fmt.Fprintf(&b, `<text class="unit" x="12" y="%.1f" transform="rotate(-90 12 %.1f)" text-anchor="middle">%s</text>`, padT+ph/2, padT+ph/2, html.EscapeString(c.YUnit))
	for x := 0.0; x <= xtop+xstep/100; x += xstep {
		fmt.Fprintf(&b, `<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, px(x), px(x), padT+ph, padT+ph+4)
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, px(x), padT+ph+16, num(x))
	}
	fmt.Fprintf(&b, `<text class="unit" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, padL+pw, h-2, html.EscapeString(c.XUnit))
	fmt.Fprintf(&b, `<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, padL, padL+pw, padT+ph, padT+ph)
	for _, r := range c.Refs {
		if r.Y > ytop {
			continue
		}
		fmt.Fprintf(&b, `<line class="line ref %s" stroke-dasharray="2 3" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"><title>%s</title></line>`, r.Class, padL, padL+pw, py(r.Y), py(r.Y), html.EscapeString(r.Label))
		fmt.Fprintf(&b, `<text class="bandlabel" x="%.1f" y="%.1f">%s</text>`, padL+4, py(r.Y)-3, html.EscapeString(r.Label))
	}
	for _, s := range c.Series {
		c.series(&b, s, px, py, ytop)
	}
	c.legend(&b, padL+pw)
	b.WriteString(`</svg>`)
	return b.String()
}

// extent is the data's largest X and Y (Y clipped at YMax), at least 1.
func (c XYChart) extent() (float64, float64) {
	xmax, ymax := 0.0, 0.0
	for _, s := range c.Series {
		for _, p := range s.Points {
			xmax = math.Max(xmax, p.X)
			ymax = math.Max(ymax, math.Max(p.Y, p.Hi))
		}
	}
	for _, r := range c.Refs {
		ymax = math.Max(ymax, r.Y*1.1)
	}
	for _, bd := range c.Bands {
		xmax = math.Max(xmax, bd.X1)
	}
	if c.YMax > 0 {
		ymax = math.Min(ymax, c.YMax)
	}
	return math.Max(xmax, 1e-9), math.Max(ymax, 1e-9)
}

func (c XYChart) series(b *strings.Builder, s XYSeries, px, py func(float64) float64, ytop float64) {
	if s.Join && len(s.Points) > 1 {
		var pts []string
		for _, p := range s.Points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p.X), py(p.Y)))
		}
		dash := ""
		if s.Dash {
			dash = ` stroke-dasharray="5 4"`
		}
		fmt.Fprintf(b, `<polyline class="line %s"%s points="%s"><title>%s</title></polyline>`, s.Class, dash, strings.Join(pts, " "), html.EscapeString(s.Name))
	}
	for _, p := range s.Points {
		if p.Hi > p.Lo {
			fmt.Fprintf(b, `<line class="line whisker %s" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, s.Class, px(p.X), px(p.X), py(p.Lo), py(p.Hi))
		}
		if !s.Markers {
			continue
		}
		tip := fmt.Sprintf("%s: %s at %s", s.Name, num(p.Y), num(p.X))
		if p.Note != "" {
			tip += " — " + p.Note
		}
		fill := "key " + s.Class
		if p.Y > ytop {
			fill = "line open " + s.Class // clipped: drawn on the top edge, hollow
		}
		fmt.Fprintf(b, `<circle class="%s" cx="%.1f" cy="%.1f" r="3.2"><title>%s</title></circle>`, fill, px(p.X), py(p.Y), html.EscapeString(tip))
	}
}

func (c XYChart) legend(b *strings.Builder, right float64) {
	lx := right
	for i := len(c.Series) - 1; i >= 0; i-- {
		s := c.Series[i]
		lx -= float64(len([]rune(s.Name)))*6.2 + 26
		fmt.Fprintf(b, `<rect class="key %s" x="%.1f" y="8" width="10" height="10"/><text class="legend" x="%.1f" y="17">%s</text>`, s.Class, lx, lx+14, html.EscapeString(s.Name))
	}
}
