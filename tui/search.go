package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/collector/curve"
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
func (c *stageCurve) searchPanel() string {
	camp, w, h := c.com.camp, c.w, c.h
	res, next := camp.search, camp.next
	lines := []string{c.com.title(c.focused, ansi.Truncate(searchTitle(res, next), w-2, "…"))}
	if camp.coolDown != "" { // the cool-down under way, until the next run starts
		lines = append(lines, c.com.styles.Dim.Render(ansi.Truncate(camp.coolDown, w, "…")))
	}
	if len(res.Probes) == 0 {
		return strings.Join(lines, "\n")
	}
	lines = append(lines, c.searchAxis(res, next, w)...)
	rows := c.probeRows(res, w)
	if room := h - len(lines); len(rows) > room && room > 0 {
		hidden := len(rows) - room + 1
		rows = append([]string{c.com.styles.Dim.Render(fmt.Sprintf("… %d earlier probes", hidden))}, rows[hidden:]...)
	}
	return strings.Join(append(lines, rows...), "\n")
}

// searchAxis is a rate axis from 0 to the highest rate tried, with the
// probes marked, the bracket drawn heavy and the next rate above it.
func (c *stageCurve) searchAxis(res *curve.Result, next float64, w int) []string {
	s := c.com.styles
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
		cells[pos(p.Rate)] = c.com.verdictMark(p.Verdict)
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
func (c *stageCurve) probeRows(res *curve.Result, w int) []string {
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
		line := fmt.Sprintf("#%-2d %7s %s %-7s %s", i+1, curve.RateLabel(p.Rate), c.com.verdictMark(p.Verdict), verdict, detail)
		out = append(out, ansi.Truncate(line, w, "…"))
	}
	return out
}
