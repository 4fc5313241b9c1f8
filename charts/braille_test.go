package charts

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

func TestTimeSeriesStaysBoundedAndInOrder(t *testing.T) {
	s := TimeSeries{Cap: 10}
	for i := 0; i < 1000; i++ {
		s.Push(float64(i), float64(i%7))
	}
	pts := s.Points()
	if len(pts) > 10 || len(pts) < 5 {
		t.Fatalf("%d points kept", len(pts))
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].T <= pts[i-1].T {
			t.Fatalf("out of order: %v", pts)
		}
	}
	if pts[0].T > 100 || pts[len(pts)-1].T < 900 {
		t.Errorf("the whole run is not in view: %v", pts)
	}
	// A point at the newest time replaces it; an older one, NaN or a
	// negative value cannot break the series.
	var f TimeSeries
	f.Push(1000, 3)
	f.Push(1000, 5)
	f.Push(10, 9)
	f.Push(math.NaN(), 1)
	f.Push(1001, math.Inf(1))
	f.Push(1002, -4)
	if want := []Point{{1000, 5}, {1001, 0}, {1002, 0}}; !slices.Equal(f.Points(), want) {
		t.Errorf("points %v, want %v", f.Points(), want)
	}
	// Once merged, a total replaced within its second is as if pushed once.
	twin := s
	twin.pts = slices.Clone(s.pts)
	s.Push(2000, 1)
	s.Push(2000, 7)
	twin.Push(2000, 7)
	a, b := s.Points()[s.Len()-1], twin.Points()[twin.Len()-1]
	if math.Abs(a.V-b.V) > 1e-9 || a.T != b.T {
		t.Errorf("replaced total after merging: %v, pushed once: %v", a, b)
	}
}

func TestPlotFillsItsBoxWithRoundLabels(t *testing.T) {
	var a TimeSeries
	for i := 0; i < 60; i++ {
		a.Push(float64(i), 5+float64(i%4))
	}
	for _, size := range [][2]int{{30, 6}, {44, 9}, {90, 24}, {160, 27}} {
		p := Plot{Width: size[0], Height: size[1], XMax: 120, YMax: 1, Traces: []Trace{{Name: "p95", Points: a.Points()}}}
		out := p.Render()
		lines := strings.Split(out, "\n")
		if len(lines) != size[1] {
			t.Fatalf("%v: %d lines", size, len(lines))
		}
		braille := 0
		for _, l := range lines {
			if w := ansi.StringWidth(l); w != size[0] {
				t.Errorf("%v: line %q is %d wide", size, l, w)
			}
			for _, r := range l {
				if r > 0x2800 && r <= 0x28ff {
					braille++
				}
			}
		}
		if braille < size[0]/4 {
			t.Errorf("%v: no line drawn:\n%s", size, out)
		}
		// Value labels are round: 0 and multiples of one nice step.
		for _, l := range lines {
			label := strings.TrimSpace(strings.SplitN(strings.SplitN(l, "│", 2)[0], "└", 2)[0])
			if label != "" && strings.ContainsAny(label, "0123456789") && strings.Contains(label, ".") && !strings.HasSuffix(label, ".5") {
				t.Errorf("%v: label %q is not round", size, label)
			}
		}
		if !strings.Contains(out, "1m") || !strings.Contains(out, "0s") {
			t.Errorf("%v: the time axis lacks its labels:\n%s", size, out)
		}
	}
	if (Plot{Width: 4, Height: 2}).Render() != "" {
		t.Error("a box too small drew something")
	}
}

func TestLabels(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 2.5: "2.5", 12: "12", 850: "850", 1200: "1.2k", 35000: "35k", 1.25e6: "1.2M", 3: "3"} {
		if got := Compact(v); got != want {
			t.Errorf("Compact(%v) = %q, want %q", v, got, want)
		}
	}
	for s, want := range map[float64]string{0: "0s", 45: "45s", 120: "2m", 150: "2m30s", 3900: "1h05m"} {
		if got := Elapsed(s); got != want {
			t.Errorf("Elapsed(%v) = %q, want %q", s, got, want)
		}
	}
}

// In colour, a plot is the same text with escape codes around each run of
// one colour.
func TestPlotColoursRuns(t *testing.T) {
	defer lipgloss.SetColorProfile(lipgloss.ColorProfile())
	var a, b TimeSeries
	for i := 0; i < 30; i++ {
		a.Push(float64(i), float64(i%5))
		b.Push(float64(i), 3)
	}
	p := Plot{Width: 40, Height: 8, XMax: 30, Traces: []Trace{
		{Name: "a", Points: a.Points(), Style: lipgloss.NewStyle().Foreground(lipgloss.Color("#FF0000"))},
		{Name: "b", Points: b.Points(), Style: lipgloss.NewStyle().Bold(true)}}}
	lipgloss.SetColorProfile(termenv.Ascii)
	plain := p.Render()
	lipgloss.SetColorProfile(termenv.TrueColor)
	coloured := p.Render()
	if !strings.Contains(coloured, "\x1b[") || ansi.Strip(coloured) != plain {
		t.Errorf("coloured plot is not the plain one with colours:\n%s\n%s", plain, coloured)
	}
}

// The warmup's end is a dotted line where no trace is.
func TestPlotMark(t *testing.T) {
	p := Plot{Width: 40, Height: 8, XMax: 40, Mark: 10, Traces: []Trace{{Name: "a", Points: []Point{{0, 1}, {40, 1}}}}}
	out := p.Render()
	if n := strings.Count(out, "┊"); n != 5 { // 6 rows of graph, one holds the line
		t.Errorf("%d mark cells:\n%s", n, out)
	}
	p.Mark = 0
	if strings.Contains(p.Render(), "┊") {
		t.Error("a mark without Mark")
	}
}
