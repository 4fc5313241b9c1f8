package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/units"
)

// livePanel is the shown run's figures: the live run's progress, which
// run is on screen or what is wrong with the live one's figures, then
// target, achieved, success and errors. In the compact layout it fills
// its pane with a sparkline per figure and the search's line; over the
// chart grid it is statusRows lines. Before the first run, the pre-flight
// estimate (the forecast).
type livePanel struct {
	com     *common
	w, h    int
	compact bool // the 80×24 layout's pane, sparklines and all
	bar     progress.Model
}

func newLivePanel(com *common) *livePanel { return &livePanel{com: com, bar: newBar()} }

// newBar is the progress bar in the current run's colour for this
// terminal's background, in the colour profile lipgloss uses (none under
// NO_COLOR).
func newBar() progress.Model {
	fill := "#005FAF"
	if lipgloss.HasDarkBackground() {
		fill = "#6CB6FF"
	}
	return progress.New(progress.WithSolidFill(fill), progress.WithoutPercentage(), progress.WithColorProfile(lipgloss.ColorProfile()))
}

// statusRows is the height of the figures above the charts.
const statusRows = 3

// SetSize implements component.
func (p *livePanel) SetSize(w, h int) {
	p.w, p.h = w, h
	p.bar.Width = max(10, w-42)
}

// ShortHelp implements help.KeyMap: the panel takes no key.
func (p *livePanel) ShortHelp() []key.Binding { return nil }

// FullHelp implements help.KeyMap.
func (p *livePanel) FullHelp() [][]key.Binding { return nil }

// Update implements component.
func (p *livePanel) Update(tea.Msg) tea.Cmd { return nil }

// View implements component.
func (p *livePanel) View() string {
	c := p.com.camp
	switch {
	case c.current == nil:
		return fit(p.preflight(), p.w, p.h)
	case p.compact:
		return fit(p.pane(), p.w, p.h)
	}
	return fit(p.status(), p.w, p.h)
}

// status is the chart layout's lines above the charts.
func (p *livePanel) status() string {
	s, c := p.com.styles, p.com.camp
	lines := []string{p.progress()}
	if p.com.selected != nil {
		lines = append(lines, p.viewing())
	} else if warn := p.healthLine(); warn != "" {
		lines = append(lines, s.Bad.Render(warn))
	}
	lines = append(lines, p.figures(true)...)
	if len(lines) < statusRows && c.host != nil && c.host.CPUs > 0 {
		h := c.host
		lines = append(lines, s.Dim.Render(fmt.Sprintf("host running the load: %.0f m busy of %d cores · run queue %d", h.BusyCores*1000, h.CPUs, h.Runnable)))
	}
	return strings.Join(lines, "\n")
}

// pane is the compact layout's: the figures over a sparkline each.
func (p *livePanel) pane() string {
	s, w, h := p.com.styles, p.w, p.h
	lines := []string{p.progress()}
	if p.com.selected != nil {
		lines = append(lines, ansi.Truncate(p.viewing(), w, "…"))
	}
	if warn := p.healthLine(); warn != "" {
		lines = append(lines, s.Bad.Render(ansi.Truncate(warn, w, "…")))
	}
	lines = append(lines, p.figures(false)...)
	d := p.com.shown().data
	if d == nil {
		return strings.Join(append(lines, s.Dim.Render(noCharts)), "\n")
	}
	search := p.searchLine()
	if search != "" {
		h--
	}
	lines = append(lines, p.sparks(d, h-len(lines))...)
	if search != "" {
		lines = append(lines, search)
	}
	return strings.Join(lines, "\n")
}

// noCharts stands where a run's charts were let go (maxHistory).
var noCharts = fmt.Sprintf("this run's charts are no longer kept (the last %d runs keep theirs)", maxHistory)

// progress is the live run's line: state, bar, share done and time.
func (p *livePanel) progress() string {
	s, c := p.com.styles, p.com.camp
	r := c.current
	elapsed := c.now.Sub(r.started)
	total := r.plan.Total()
	frac := 0.0
	if total > 0 {
		frac = min(1, max(0, elapsed.Seconds()/total.Seconds()))
	}
	if !r.state.live() {
		frac = 1
		if r.stats != nil && r.stats.MeasuredSeconds > 0 && r.state != rowDone {
			frac = min(1, r.stats.MeasuredSeconds/total.Seconds())
		}
	}
	return fmt.Sprintf("%s %s %s %3.0f%% %s/%s", s.Value.Render(r.plan.ID), p.com.stateStyle(string(r.state)).Render(fmt.Sprintf("%-9s", r.state)),
		p.bar.ViewAs(frac), frac*100, dur(min(elapsed, total)), dur(total))
}

// preflight is the screen before the first run: what the host check
// found (a busy machine, the wait for a quiet one) and the pre-flight
// forecast.
func (p *livePanel) preflight() string {
	s := p.com.styles
	out := s.Dim.Render("no run yet")
	if h := p.com.camp.hostChk; h != nil {
		st := s.Dim
		if h.Busy() {
			st = s.Warn
		}
		out += "\n" + st.Render(wrap(h.Line(), p.w))
	}
	if c := p.com.camp.forecast; c != nil {
		st := s.Dim
		if slices.ContainsFunc(c.Stages, c.Estimate.Exceeds) {
			st = s.Warn
		}
		out += "\n" + st.Render(wrap(c.Line(), p.w))
	}
	return out
}

// figures are the shown run's target, achieved, in-flight, success,
// dropped and errors, on one line or two.
func (p *livePanel) figures(oneLine bool) []string {
	s, c := p.com.styles, p.com.camp
	r := p.com.shown()
	d := r.data
	achieved, inflight := 0.0, int64(0)
	var okN, errN, droppedN int64
	if d != nil {
		if d.win != nil {
			achieved, inflight = d.win.AchievedRPS(), d.win.InFlight
		}
		okN, errN, droppedN = d.okN, d.errN, d.droppedN
	}
	if r != c.current || !c.running() {
		if st := r.stats; st != nil { // finished: the run's statistics
			achieved, inflight, okN, errN, droppedN = st.AchievedRPS, 0, st.OK, st.Requests-st.OK, st.Dropped
		}
	}
	target := units.StageLabel(r.plan.TargetRPS)
	if n := hopsOf(r.plan); n > 1 {
		target += fmt.Sprintf(" chains of %d", n)
	}
	a := fmt.Sprintf("%s %s  %s %s  %s %d", s.Label.Render("target"), s.Value.Render(target),
		s.Label.Render("achieved"), s.Value.Render(fmt.Sprintf("%.0f/s", achieved)), s.Label.Render("in-flight"), inflight)
	succ := "—"
	if n := okN + errN; n > 0 {
		st := s.Good
		if errN > 0 {
			st = s.Bad
		}
		succ = st.Render(fmt.Sprintf("%.2f%%", float64(okN)/float64(n)*100))
	}
	dropped := s.Good.Render("0")
	if droppedN > 0 {
		dropped = s.Bad.Render(units.Thousands(droppedN))
	}
	b := fmt.Sprintf("%s %s  %s %s  %s %s", s.Label.Render("success"), succ, s.Label.Render("dropped"), dropped,
		s.Label.Render("errors"), units.Thousands(errN))
	if oneLine {
		return []string{a + s.Dim.Render("  ·  ") + b}
	}
	return []string{a, b}
}

// viewing says which finished run is on screen instead of the live one.
func (p *livePanel) viewing() string {
	r := p.com.selected
	icon, st := p.com.runIcon(r)
	return st.Render("» showing "+r.plan.ID+" "+icon+" "+string(r.state)) + p.com.styles.Dim.Render(" — f or esc follows the live run")
}

// sparks are the compact layout's one-line charts of run data d, in at
// most h lines.
func (p *livePanel) sparks(d *runData, h int) []string {
	s, host := p.com.styles, p.com.camp.host
	sparkW := max(8, p.w-36)
	var p50, p95, p99 float64
	if d.win != nil {
		p50, p95, p99 = d.win.Latency.P50, d.win.Latency.P95, d.win.Latency.P99
	}
	lines := []string{fmt.Sprintf("%s %s %s  %s",
		s.Label.Render("p95   "), charts.SparkValues(d.p95.Values(), sparkW, 1, s.Spark),
		s.Value.Render(fmt.Sprintf("%7.2f ms", p95)), s.Dim.Render(fmt.Sprintf("p50 %.1f p99 %.1f", p50, p99)))}
	engines := d.engineList()
	if len(engines) == 0 {
		lines = append(lines, s.Label.Render("engine ")+s.Dim.Render("not measured"))
	}
	if len(engines) > 1 {
		lines = append(lines, fmt.Sprintf("%s %s %s", s.Label.Render("engines"), charts.SparkValues(d.engineTot.Values(), sparkW, 100, s.Engine),
			s.Value.Render(fmt.Sprintf("%7.0f m", d.engineTot.Last()))))
	}
	for _, e := range engines {
		if len(lines) >= h-2 { // room for the generator and the host
			break
		}
		lines = append(lines, fmt.Sprintf("%s %s %s  %s", s.Label.Render("engine "), charts.SparkValues(e.cpu.Values(), sparkW, 100, s.Engine),
			s.Value.Render(fmt.Sprintf("%7.0f m", e.cpu.Last())), s.Dim.Render(ansi.Truncate(e.name, 16, "…"))))
	}
	lines = append(lines, fmt.Sprintf("%s %s %s  %s", s.Label.Render("gen.   "), charts.SparkValues(d.gen.Values(), sparkW, 100, s.Gen),
		s.Value.Render(fmt.Sprintf("%7.0f m", d.gen.Last())), s.Dim.Render("memory "+units.BytesIEC(d.memory()))))
	if host != nil && host.CPUs > 0 {
		st := s.Value
		if stats.Saturation(&host.HostMetrics) != "" {
			st = s.Bad
		}
		lines = append(lines, fmt.Sprintf("%s %s %s  %s", s.Label.Render("host   "), charts.SparkValues(d.host.Values(), sparkW, float64(host.CPUs)*1000, s.Gen),
			st.Render(fmt.Sprintf("%7.0f m", host.BusyCores*1000)), s.Dim.Render(hostNote(&host.HostMetrics))))
	}
	return lines
}

// healthLine says, for the current run, which figures are not the
// server's: the rules that broke in the latest samples (and whether they
// broke often enough to become the run's warning), and a stage beyond the
// pre-flight estimate.
// The codes come first, so a narrow panel still shows them.
func (p *livePanel) healthLine() string {
	c := p.com.camp
	var codes, why []string
	if r := c.current; r != nil && !c.running() {
		if r.stats != nil { // finished: the run's statistics decide
			for _, w := range r.stats.Warnings {
				if w.Code.Invalidating() {
					codes = append(codes, string(w.Code))
				}
			}
		}
	} else {
		for _, code := range stats.InvalidatingCodes {
			reason, now := c.health.Now[code]
			switch {
			case now:
				codes, why = append(codes, string(code)), append(why, reason)
			case c.health.Flagged(code):
				codes = append(codes, string(code)+" earlier")
			}
		}
	}
	if cp := c.forecast; cp != nil && c.current != nil && cp.Estimate.Exceeds(c.current.plan.TargetRPS) {
		codes = append(codes, fmt.Sprintf("%s exceeds the pre-flight ~%s/s", units.StageLabel(c.current.plan.TargetRPS), units.Thousands(int64(cp.Estimate.SustainableRPS))))
	}
	if len(codes) == 0 {
		return ""
	}
	line := "⚠ " + strings.Join(codes, " · ")
	if len(why) > 0 {
		line += ": " + strings.Join(why, "; ")
	}
	return line
}

// searchLine is the search in one line for the compact layout ("" when
// the campaign is not a search).
func (p *livePanel) searchLine() string {
	c := p.com.camp
	res := c.search
	if res == nil {
		return ""
	}
	t := searchTitle(res, c.next)
	if c.coolDown != "" { // what happens now, in place of the bracket
		t = c.coolDown
	}
	if n := len(res.Probes); n > 0 { // the latest probe's verdict first
		t = p.com.verdictMark(res.Probes[n-1].Verdict) + " " + t
	}
	return ansi.Truncate(t, p.w, "…")
}
