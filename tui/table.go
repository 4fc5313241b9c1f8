package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
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
	if t == table.Plain {
		return text
	}
	return s.tone(t).Render(text)
}

// tone is a tone's style (Plain: no style).
func (s Styles) tone(t table.Tone) lipgloss.Style {
	switch t {
	case table.Good:
		return s.Good
	case table.Bad:
		return s.Bad
	case table.Warn:
		return s.Warn
	}
	return lipgloss.NewStyle()
}
