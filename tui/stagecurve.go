package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// stageCurve is the chart grid's last cell: the article's curve as the
// runs finish, per stage the rounds' p95 spread (├──●──┤, ● the reported
// run) and the engine's CPU-ms per exchange as a bar, on scales shared by
// every stage; a capacity search's bracket and probes instead (search.go).
type stageCurve struct {
	com     *common
	w, h    int
	focused bool
}

func newStageCurve(com *common) *stageCurve { return &stageCurve{com: com} }

// SetSize implements component.
func (c *stageCurve) SetSize(w, h int) { c.w, c.h = w, h }

// ShortHelp implements help.KeyMap: its keys are the chart grid's.
func (c *stageCurve) ShortHelp() []key.Binding { return nil }

// FullHelp implements help.KeyMap.
func (c *stageCurve) FullHelp() [][]key.Binding { return nil }

// Update implements component.
func (c *stageCurve) Update(tea.Msg) tea.Cmd { return nil }

// View implements component: exactly w×h.
func (c *stageCurve) View() string {
	if c.com.camp.search != nil {
		return fit(c.searchPanel(), c.w, c.h)
	}
	return fit(c.curve(), c.w, c.h)
}

// stagePoint is one stage of the curve: its rounds' p95 spread, the
// reported run's p95 and CPU-ms per exchange.
type stagePoint struct {
	label        string
	lo, hi, p95  float64
	cpuMs        float64
	rounds, fail int
	ok           bool // a reported run with a completed exchange
}

func stagePoints(sum *summary.Summary) []stagePoint {
	if sum == nil {
		return nil
	}
	var out []stagePoint
	for _, st := range sum.Stages {
		p := stagePoint{label: st.Label(), lo: math.Inf(1), fail: len(st.FailedRuns)}
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

// curve draws the stages, then the marginal cost when a row is free.
func (c *stageCurve) curve() string {
	s, w, h, sum := c.com.styles, c.w, c.h, c.com.camp.summary
	lines := []string{c.com.title(c.focused, "p95 ms per stage ├rounds┤ ●reported · CPU-ms/ex")}
	pts := stagePoints(sum)
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
		lines = append(lines, c.stageRow(p, labelW, barW, cpuW, top, cpuTop))
	}
	// The marginal cost below the stages, when a row is free: the
	// straight line's, or the cost curve's segments.
	if cost := doc.CostShort(sum.Cost); cost != "" && len(lines) < h {
		lines = append(lines, s.Engine.Render(ansi.Truncate(cost, w, "…")))
	}
	if sc := doc.ScalingShort(sum.Scaling); sc != "" && len(lines) < h { // a campaign over engine counts
		lines = append(lines, s.Engine.Render(ansi.Truncate(sc, w, "…")))
	}
	return strings.Join(lines, "\n")
}

func (c *stageCurve) stageRow(p stagePoint, labelW, barW, cpuW int, top, cpuTop float64) string {
	s := c.com.styles
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
