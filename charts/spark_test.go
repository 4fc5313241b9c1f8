package charts

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
)

func TestSeriesBounded(t *testing.T) {
	s := Series{Max: 3}
	for _, v := range []float64{1, 2, -5, 4} {
		s.Push(v)
	}
	if got := s.Values(); len(got) != 3 || got[0] != 2 || got[1] != 0 || got[2] != 4 {
		t.Errorf("values %v", got)
	}
	if s.Last() != 4 || s.Peak() != 4 {
		t.Errorf("last %v peak %v", s.Last(), s.Peak())
	}
}

func TestSparklineWidthAndShape(t *testing.T) {
	s := Series{}
	for i := 0; i < 30; i++ {
		s.Push(float64(i))
	}
	out := Sparkline(&s, 10, 0, lipgloss.NewStyle())
	if w := utf8.RuneCountInString(out); w != 10 {
		t.Fatalf("width %d: %q", w, out)
	}
	if !strings.HasSuffix(out, "█") {
		t.Errorf("the newest (largest) point is not full height: %q", out)
	}
	empty := Sparkline(&Series{}, 5, 0, lipgloss.NewStyle())
	if utf8.RuneCountInString(empty) != 5 {
		t.Errorf("empty sparkline %q", empty)
	}
}
