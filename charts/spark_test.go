package charts

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
)

func TestSparklineWidthAndShape(t *testing.T) {
	var vals []float64
	for i := 0; i < 30; i++ {
		vals = append(vals, float64(i))
	}
	out := SparkValues(vals, 10, 0, lipgloss.NewStyle())
	if w := utf8.RuneCountInString(out); w != 10 {
		t.Fatalf("width %d: %q", w, out)
	}
	if !strings.HasSuffix(out, "█") {
		t.Errorf("the newest (largest) point is not full height: %q", out)
	}
	empty := SparkValues(nil, 5, 0, lipgloss.NewStyle())
	if utf8.RuneCountInString(empty) != 5 {
		t.Errorf("empty sparkline %q", empty)
	}
}
