package charts

import (
	"strings"
	"testing"
)

func TestXYChart(t *testing.T) {
	c := XYChart{Title: "latency", XUnit: "exchanges/s", YUnit: "ms", YMax: 30,
		Refs:  []Ref{{Y: 10, Label: "objective p95 < 10 ms", Class: "s4"}, {Y: 500, Label: "off the axis"}},
		Bands: []Band{{X0: 300, X1: 320, Label: "capacity ≥ 300/s, < 320/s"}},
		Series: []XYSeries{{Name: "p95", Class: "s1", Join: true, Markers: true, Points: []XYPoint{
			{X: 100, Y: 4, Lo: 3.5, Hi: 4.4}, {X: 200, Y: 6}, {X: 320, Y: 900, Note: "broken"}}}},
	}
	svg := c.SVG()
	for _, want := range []string{"objective p95 &lt; 10 ms", "capacity ≥ 300/s, &lt; 320/s", "exchanges/s", `class="line whisker s1"`,
		`class="line open s1"`, "p95: 900 at 320 — broken"} {
		if !strings.Contains(svg, want) {
			t.Errorf("svg lacks %q", want)
		}
	}
	if strings.Contains(svg, "off the axis") {
		t.Error("a reference line above the clipped axis was drawn")
	}
	if n := strings.Count(svg, "<circle"); n != 3 {
		t.Errorf("%d markers, want 3", n)
	}
	// The clipped point sits on the top edge (y = padT), not above the chart.
	if !strings.Contains(svg, `cy="26.0"`) {
		t.Error("the clipped point is not on the top edge")
	}
	if empty := (XYChart{Title: "none"}).SVG(); !strings.HasPrefix(empty, "<svg") || strings.Contains(empty, "NaN") {
		t.Errorf("empty chart: %s", empty)
	}
}

// XStep sets the X ticks: hops are whole numbers, never "0.5".
func TestXYChartXStep(t *testing.T) {
	c := XYChart{Title: "hops", XUnit: "hop", Series: []XYSeries{{Name: "p95", Class: "s1", Markers: true,
		Points: []XYPoint{{X: 1, Y: 3}, {X: 2, Y: 2}, {X: 3, Y: 2.5}}}}}
	ticks := func(svg string) []string {
		var out []string
		for _, part := range strings.Split(svg, `text-anchor="middle">`)[1:] {
			if text := part[:strings.Index(part, "<")]; text != "" { // the unit labels are empty here
				out = append(out, text)
			}
		}
		return out
	}
	if got := strings.Join(ticks(c.SVG()), " "); !strings.Contains(got, "0.5") {
		t.Fatalf("without XStep the ticks are %q: the test no longer tells", got)
	}
	c.XStep = 1
	if got := strings.Join(ticks(c.SVG()), " "); got != "0 1 2 3" {
		t.Errorf("XStep 1: ticks %q, want 0 1 2 3", got)
	}
}
