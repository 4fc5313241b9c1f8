package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/table"
)

// searchTitle is the capacity search in one line: its bracket as it
// narrows and the rate it tries next, or how it ended.
func searchTitle(res *curve.Result, next float64) string {
	if len(res.Probes) == 0 && next > 0 {
		return "capacity search · first " + curve.RateLabel(next)
	}
	if len(res.Probes) == 0 {
		return "capacity search"
	}
	t := "capacity " + res.Bracket()
	if res.Status == curve.StatusRunning {
		if next > 0 {
			t += " · next " + curve.RateLabel(next)
		}
		return t
	}
	return t + " · " + strings.ReplaceAll(res.Status, "_", " ")
}

// searchPanel draws a capacity search where the stage curve is: the
// bracket narrowing in the title, the probes on a rate axis (✓ passed,
// ✗ broke, ? invalid, ! hard failure; the bracket as a heavy line, the next
// rate ▾) and the latest probes with their verdicts and what broke.
func (m *Model) searchPanel(w, h int) string {
	res, next := m.curve.Search()
	lines := []string{m.title(panelStages, ansi.Truncate(searchTitle(res, next), w-2, "…"))}
	if m.coolDown != "" { // the cool-down under way, until the next run starts
		lines = append(lines, m.styles.Dim.Render(ansi.Truncate(m.coolDown, w, "…")))
	}
	if len(res.Probes) == 0 {
		return strings.Join(lines, "\n")
	}
	lines = append(lines, m.searchAxis(res, next, w)...)
	rows := m.probeRows(res, w)
	if room := h - len(lines); len(rows) > room && room > 0 {
		hidden := len(rows) - room + 1
		rows = append([]string{m.styles.Dim.Render(fmt.Sprintf("… %d earlier probes", hidden))}, rows[hidden:]...)
	}
	return strings.Join(append(lines, rows...), "\n")
}

// verdictMark is a probe's mark (stats.ProbeMark) in its tone's style.
func (m *Model) verdictMark(v curve.Verdict) string {
	mark, st := m.probeMark(v)
	return st.Render(mark)
}

// probeMark is a probe's mark and style (Dim until it is judged).
func (m *Model) probeMark(v curve.Verdict) (string, lipgloss.Style) {
	mark, tone := stats.ProbeMark(v)
	if tone == table.Plain {
		return mark, m.styles.Dim
	}
	return mark, m.styles.tone(tone)
}

// searchAxis is a rate axis from 0 to the highest rate tried, with the
// probes marked, the bracket drawn heavy and the next rate above it.
func (m *Model) searchAxis(res *curve.Result, next float64, w int) []string {
	s := m.styles
	top := next
	for _, p := range res.Probes {
		top = math.Max(top, p.Rate)
	}
	right := curve.RateLabel(top)
	n := max(8, w-len(right)-1)
	pos := func(r float64) int { return min(n-1, max(0, int(math.Round(r/top*float64(n-1))))) }
	cells := make([]string, n)
	for i := range cells {
		cells[i] = s.Rule.Render("─")
	}
	if res.Capacity > 0 && res.Upper > res.Capacity {
		for i := pos(res.Capacity); i <= pos(res.Upper); i++ {
			cells[i] = s.Current.Render("━")
		}
	}
	for _, p := range res.Probes {
		cells[pos(p.Rate)] = m.verdictMark(p.Verdict)
	}
	marker := []rune(strings.Repeat(" ", n))
	if next > 0 && res.Status == curve.StatusRunning {
		marker[pos(next)] = '▾'
	}
	return []string{
		s.Current.Render(strings.TrimRight(string(marker), " ")),
		strings.Join(cells, "") + " " + s.Dim.Render(right),
	}
}

// probeRows are the probes in the order they ran: rate, verdict, and the
// median round's p95 or what broke.
func (m *Model) probeRows(res *curve.Result, w int) []string {
	var out []string
	for i, p := range res.Probes {
		detail := ""
		switch {
		case len(p.Broken) > 0:
			detail = strings.Join(p.Broken, "; ")
		case p.Reason != "":
			detail = p.Reason
		case len(p.Valid()) > 0:
			detail = "p95 " + ms(p.P95Ms) + " ms"
		}
		if strings.HasPrefix(p.Noise, "within noise") { // decided by the median of more rounds
			detail += " (within noise)"
		}
		verdict := string(p.Verdict)
		if verdict == "" {
			verdict = "running"
		}
		line := fmt.Sprintf("#%-2d %7s %s %-7s %s", i+1, curve.RateLabel(p.Rate), m.verdictMark(p.Verdict), verdict, detail)
		out = append(out, ansi.Truncate(line, w, "…"))
	}
	return out
}

// searchLine is the search in one line for the compact layout ("" when
// the campaign is not a search).
func (m *Model) searchLine(w int) string {
	res, next := m.curve.Search()
	if res == nil {
		return ""
	}
	t := searchTitle(res, next)
	if m.coolDown != "" { // what happens now, in place of the bracket
		t = m.coolDown
	}
	if n := len(res.Probes); n > 0 { // the latest probe's verdict first
		t = m.verdictMark(res.Probes[n-1].Verdict) + " " + t
	}
	return ansi.Truncate(t, w, "…")
}
