package tui

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/collector/stats"
)

// stagePoint is one stage of the curve: its rounds' p95 spread, the
// reported run's p95 and CPU-ms per exchange.
type stagePoint struct {
	label        string
	lo, hi, p95  float64
	cpuMs        float64
	rounds, fail int
	ok           bool // a reported run with a completed exchange
}

func (m *Model) stagePoints() []stagePoint {
	if m.summary == nil {
		return nil
	}
	var out []stagePoint
	for _, st := range m.summary.Stages {
		p := stagePoint{label: stats.StageLabel(st.TargetRPS), lo: math.Inf(1), fail: len(st.FailedRuns)}
		for _, r := range st.Runs {
			if r.Status == stats.StatusDone && r.Requests > 0 {
				p.lo, p.hi = min(p.lo, r.LatencyMs.P95), max(p.hi, r.LatencyMs.P95)
				p.rounds++
			}
		}
		if rep := st.Reported(); rep != nil && rep.Requests > 0 {
			p.p95, p.ok = rep.LatencyMs.P95, true
			if rep.EngineCPU != nil {
				p.cpuMs = rep.EngineCPU.CPUMsPerExchange
			}
		}
		if p.rounds == 0 {
			p.lo = 0
		}
		out = append(out, p)
	}
	return out
}

// stageCurve draws the article's curve as the runs finish: per stage the
// rounds' p95 spread (├──●──┤, ● the reported run) and the engine's CPU-ms
// per exchange as a bar, on scales shared by every stage.
func (m *Model) stageCurve(w, h int) string {
	s := m.styles
	lines := []string{m.title(panelStages, "p95 ms per stage ├rounds┤ ●reported · CPU-ms/ex")}
	pts := m.stagePoints()
	if len(pts) == 0 {
		return lines[0] + "\n" + s.Dim.Render("fills in as runs finish")
	}
	var top, cpuTop float64
	for _, p := range pts {
		top, cpuTop = max(top, p.hi, p.p95), max(cpuTop, p.cpuMs)
	}
	labelW := 0
	for _, p := range pts {
		labelW = max(labelW, len(p.label))
	}
	textW := 24 // "6.50 (6.00–7.25)  3.00 ms"
	barW := max(4, (w-labelW-textW-4)*2/3)
	cpuW := max(3, w-labelW-textW-4-barW)
	for i, p := range pts {
		if len(lines) == h-1 && i < len(pts)-1 {
			lines = append(lines, s.Dim.Render(fmt.Sprintf("… %d more stages in the table below", len(pts)-i)))
			break
		}
		lines = append(lines, m.stageRow(p, labelW, barW, cpuW, top, cpuTop))
	}
	// The marginal cost below the stages, when a row is free: the
	// straight line's, or the cost curve's segments.
	if cost := m.summary.Cost.Short(); cost != "" && len(lines) < h {
		lines = append(lines, s.Engine.Render(ansi.Truncate(cost, w, "…")))
	}
	return strings.Join(lines, "\n")
}

func (m *Model) stageRow(p stagePoint, labelW, barW, cpuW int, top, cpuTop float64) string {
	s := m.styles
	if !p.ok {
		return fmt.Sprintf("%-*s %s", labelW, p.label, s.Dim.Render("no reported run yet"))
	}
	bar := rangeBar(p.lo, p.hi, p.p95, top, barW)
	st := s.Spark
	if p.fail > 0 {
		st = s.Bad
	}
	spread := ms(p.p95)
	if p.rounds > 1 {
		spread += " (" + ms(p.lo) + "–" + ms(p.hi) + ")"
	}
	cpu := ""
	if cpuTop > 0 {
		n := int(math.Round(p.cpuMs / cpuTop * float64(cpuW)))
		cpu = s.Engine.Render(strings.Repeat("█", n)+strings.Repeat(" ", cpuW-n)) + " " + fmt.Sprintf("%.2f", p.cpuMs)
	}
	return fmt.Sprintf("%-*s %s %-18s %s", labelW, p.label, st.Render(bar), spread, cpu)
}

// rangeBar draws lo–hi with the reported value v on a scale of 0–top in w
// cells.
func rangeBar(lo, hi, v, top float64, w int) string {
	if top <= 0 {
		top = 1
	}
	pos := func(x float64) int { return min(w-1, max(0, int(math.Round(x/top*float64(w-1))))) }
	cells := []rune(strings.Repeat(" ", w))
	a, b := pos(lo), pos(hi)
	for i := a; i <= b; i++ {
		cells[i] = '─'
	}
	if a < b {
		cells[a], cells[b] = '├', '┤'
	}
	cells[pos(v)] = '●'
	return string(cells)
}

// errorsPanel lists what went wrong: the shown run's most common errors
// (with what the server said, once the run finished), the live run's
// warnings as its samples raise them, the coded warnings of finished runs
// and the latest warning and error log lines, newest first.
func (m *Model) errorsPanel(w, h int) string {
	s := m.styles
	items := m.errorItems()
	title := m.title(panelErrors, "Errors & warnings")
	if len(items) == 0 {
		return title + "\n" + s.Dim.Render("none so far")
	}
	var lines []string
	for _, it := range items {
		wrapped := strings.Split(wrap(it.text, w-2), "\n")
		if len(wrapped) > maxItemLines { // room for the next ones; summary.json has it whole
			wrapped = append(wrapped[:maxItemLines-1], wrapped[maxItemLines-1]+"…")
		}
		for i, l := range wrapped {
			prefix := "  "
			if i == 0 {
				prefix = it.mark + " "
			}
			lines = append(lines, it.style.Render(ansi.Truncate(prefix+l, w, "…")))
		}
	}
	first := min(m.errScroll, max(0, len(lines)-(h-1)))
	m.errScroll = first
	if first > 0 {
		title += s.Dim.Render(fmt.Sprintf(" ↑%d", first))
	}
	return title + "\n" + strings.Join(lines[first:], "\n")
}

// maxItemLines is the most lines one error or warning takes in the panel.
const maxItemLines = 4

type errorItem struct {
	mark, text string
	style      lipgloss.Style
}

func (m *Model) errorItems() []errorItem {
	s := m.styles
	var out []errorItem
	if r := m.shown(); r != nil {
		for _, e := range m.topErrors(r) {
			out = append(out, errorItem{"✗", e, s.Bad})
		}
	}
	if m.running() && m.selected == nil {
		for _, c := range stats.InvalidatingCodes {
			if reason, now := m.health.Now[c]; now {
				out = append(out, errorItem{"⚠", string(c) + ": " + reason, s.Warn})
			} else if m.health.Flagged(c) {
				out = append(out, errorItem{"⚠", string(c) + " earlier in this run", s.Warn})
			}
		}
	}
	for i := len(m.warnings) - 1; i >= 0; i-- {
		w := m.warnings[i]
		out = append(out, errorItem{"⚠", w.String(), s.Warn})
	}
	n := 0
	for i := len(m.logs) - 1; i >= 0 && n < 5; i-- {
		if l := m.logs[i]; l.Level == "warn" || l.Level == "error" {
			out = append(out, errorItem{"·", l.At.UTC().Format("15:04:05") + " " + l.Source + ": " + l.Message, s.Dim})
			n++
		}
	}
	return out
}

// topErrors are a run's most common errors: from its statistics once it
// finished (with the server's words), from its windows while it runs.
func (m *Model) topErrors(r *runState) []string {
	var out []string
	if st := r.stats; st != nil {
		for _, e := range st.TopErrors {
			line := fmt.Sprintf("%s× %s", stats.Thousands(e.Count), e.Error)
			if len(e.Descriptions) > 0 {
				line += fmt.Sprintf(" (%q)", e.Descriptions[0].Text)
			}
			out = append(out, line)
		}
		if l := st.RetriedLine(); l != "" {
			out = append(out, l)
		}
		return out
	}
	if r.data == nil {
		return nil
	}
	type kv struct {
		k string
		n int64
	}
	var kinds []kv
	for k, n := range r.data.errKinds {
		kinds = append(kinds, kv{k, n})
	}
	slices.SortFunc(kinds, func(a, b kv) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return strings.Compare(a.k, b.k)
	})
	for _, e := range kinds[:min(len(kinds), stats.MaxTopErrors)] {
		out = append(out, fmt.Sprintf("%s× %s", stats.Thousands(e.n), e.k))
	}
	return out
}
