package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/collector/table"
)

// renderTable lays a table out in at most w cells, leaving out its
// droppable columns as needed: the header dim, each row in its tone.
func (s Styles) renderTable(t table.Table, w int) []string {
	t = t.Fit(w, "  ", ansi.StringWidth)
	widths := t.Widths(ansi.StringWidth)
	line := func(cells []string) string {
		return strings.TrimRight(t.Line(cells, widths, "  ", ansi.StringWidth), " ")
	}
	out := []string{s.Dim.Render(line(t.Header()))}
	for _, r := range t.Rows {
		out = append(out, s.toned(r.Tone, line(r.Cells)))
	}
	return out
}

// toned renders text in the style of its tone.
func (s Styles) toned(t table.Tone, text string) string {
	switch t {
	case table.Good:
		return s.Good.Render(text)
	case table.Bad:
		return s.Bad.Render(text)
	case table.Warn:
		return s.Warn.Render(text)
	}
	return text
}
