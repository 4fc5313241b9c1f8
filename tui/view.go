package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/stats"
)

const ladderWidth = 30

// View implements tea.Model.
func (m *Model) View() string {
	w, h := m.width, m.height
	if w == 0 || h == 0 {
		return ""
	}
	if w < MinWidth || h < MinHeight {
		return fmt.Sprintf("tokex needs a terminal of at least %d×%d (this one is %d×%d).\nEnlarge it, or press q to quit.", MinWidth, MinHeight, w, h)
	}
	rule := m.styles.Rule.Render(strings.Repeat("─", w))
	header := m.header(w)
	footer := []string{m.status(w), m.helpLine(w)}
	bodyH := h - len(header) - 2 - len(footer) // two rules
	// The middle shows the whole ladder when it can; the results table
	// keeps room for its title, header, one row per stage and the verdict.
	stages := 3
	if m.summary != nil {
		stages = max(stages, len(m.summary.Stages))
	}
	midH := min(max(9, len(m.runs)+1), bodyH-(stages+3))
	midH = max(midH, min(9, bodyH-4))
	bottomH := bodyH - midH
	mid := lipgloss.JoinHorizontal(lipgloss.Top,
		fit(m.ladder(ladderWidth, midH), ladderWidth, midH),
		fit(strings.Repeat("│\n", midH-1)+"│", 1, midH),
		fit(m.live(w-ladderWidth-2, midH), w-ladderWidth-2, midH))
	var bottom []string
	switch {
	case m.showLogs:
		bottom = m.logPane(w, bottomH)
	case m.showAgents:
		bottom = m.agentPane(w, bottomH)
	default:
		bottom = m.results(w, bottomH)
	}
	lines := append([]string{}, header...)
	lines = append(lines, rule, mid, rule)
	lines = append(lines, fit(strings.Join(bottom, "\n"), w, bottomH))
	lines = append(lines, footer...)
	return strings.Join(lines, "\n")
}

// fit pads or cuts a block to exactly w×h cells.
func fit(s string, w, h int) string {
	ls := strings.Split(s, "\n")
	if len(ls) > h {
		ls = ls[:h]
	}
	for len(ls) < h {
		ls = append(ls, "")
	}
	for i, l := range ls {
		l = ansi.Truncate(l, w, "…")
		if pad := w - ansi.StringWidth(l); pad > 0 {
			l += strings.Repeat(" ", pad)
		}
		ls[i] = l
	}
	return strings.Join(ls, "\n")
}

func dur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Second)
	if d >= time.Hour {
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	if d >= time.Minute {
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

func (m *Model) header(w int) []string {
	s := m.styles
	if m.campaign == nil {
		src := "waiting for the campaign to start…"
		if m.opt.Source != "" {
			src = m.opt.Source
		}
		return []string{s.Title.Render("tokex") + " " + s.Dim.Render(src), ""}
	}
	c := m.campaign
	l1 := s.Title.Render("tokex") + " " + s.Value.Render(c.Name) + s.Dim.Render(" · "+c.Driver+" · ") + c.Target
	elapsed := m.now.Sub(c.At)
	var remaining time.Duration
	for _, r := range m.runs {
		switch r.state {
		case "pending":
			remaining += r.plan.Total()
		case "warmup", "measuring":
			remaining += r.plan.Total() - m.now.Sub(r.started)
		}
	}
	state := "running"
	if m.finished != nil {
		state = m.finished.Status
		remaining = 0
	} else if m.stopping {
		state = "stopping"
	}
	l2 := s.Dim.Render("campaign ") + c.ID + s.Dim.Render(" · elapsed ") + dur(elapsed)
	if m.finished == nil {
		l2 += s.Dim.Render(" · ETA ") + dur(remaining)
	}
	l2 += s.Dim.Render(" · ") + m.stateStyle(state).Render(state)
	return []string{ansi.Truncate(l1, w, "…"), ansi.Truncate(l2, w, "…")}
}

func (m *Model) stateStyle(state string) lipgloss.Style {
	switch state {
	case "done", "measuring":
		return m.styles.Good
	case "failed", "aborted", "stopping":
		return m.styles.Bad
	case "warmup", "running":
		return m.styles.Warn
	}
	return m.styles.Dim
}

func (m *Model) ladder(w, h int) string {
	s := m.styles
	lines := []string{s.Label.Render("Ladder")}
	// Keep the current run visible when the ladder is taller than the pane.
	first := 0
	if m.current != nil && len(m.runs) > h-1 {
		idx := m.current.plan.Index
		first = min(max(0, idx-(h-1)/2), len(m.runs)-(h-1))
	}
	for i := first; i < len(m.runs) && len(lines) < h; i++ {
		r := m.runs[i]
		icon, st := "·", s.Dim
		switch r.state {
		case "warmup", "measuring":
			icon, st = "▶", s.Current
		case "done":
			icon, st = "✓", s.Good
			if r.stats != nil && !r.stats.ThresholdsPassed && !r.plan.Sanity {
				icon, st = "✗", s.Bad
			}
		case "failed", "aborted":
			icon, st = "✗", s.Bad
		}
		label := r.plan.ID
		note := stats.StageLabel(r.plan.TargetRPS)
		if r.plan.Sanity {
			note = "sanity"
		}
		line := fmt.Sprintf("%s %-16s %s", icon, label, note)
		if r.state == "aborted" || r.state == "failed" {
			line = fmt.Sprintf("%s %-16s %s", icon, label, r.state)
		}
		badge := ""
		if m.flagged(r) {
			badge = " " + s.Warn.Render("⚠")
		}
		lines = append(lines, st.Render(ansi.Truncate(line, w-len(" ⚠"), "…"))+badge)
	}
	return strings.Join(lines, "\n")
}

func (m *Model) live(w, h int) string {
	s := m.styles
	r := m.current
	if r == nil {
		out := s.Dim.Render("no run yet")
		if c := m.capacity; c != nil {
			st := s.Dim
			if slices.ContainsFunc(c.Stages, c.Estimate.Exceeds) {
				st = s.Warn
			}
			out += "\n" + st.Render(wrap(c.Line(), w))
		}
		return out
	}
	var lines []string
	elapsed := m.now.Sub(r.started)
	total := r.plan.Total()
	frac := 0.0
	if total > 0 {
		frac = min(1, max(0, elapsed.Seconds()/total.Seconds()))
	}
	if r.state != "warmup" && r.state != "measuring" {
		frac = 1
		if r.stats != nil && r.stats.MeasuredSeconds > 0 && r.state != "done" {
			frac = min(1, r.stats.MeasuredSeconds/total.Seconds())
		}
	}
	m.bar.Width = max(10, w-42)
	lines = append(lines, fmt.Sprintf("%s %s %s %3.0f%% %s/%s", s.Value.Render(r.plan.ID), m.stateStyle(r.state).Render(fmt.Sprintf("%-9s", r.state)),
		m.bar.ViewAs(frac), frac*100, dur(min(elapsed, total)), dur(total)))
	if warn := m.healthLine(); warn != "" {
		lines = append(lines, s.Bad.Render(ansi.Truncate(warn, w, "…")))
	}
	achieved, inflight := 0.0, int64(0)
	var p50, p95, p99 float64
	if m.win != nil {
		achieved = m.win.AchievedRPS()
		inflight = m.win.InFlight
		p50, p95, p99 = m.win.Latency.P50, m.win.Latency.P95, m.win.Latency.P99
	}
	lines = append(lines, fmt.Sprintf("%s %s  %s %s  %s %d",
		s.Label.Render("target"), s.Value.Render(stats.StageLabel(r.plan.TargetRPS)),
		s.Label.Render("achieved"), s.Value.Render(fmt.Sprintf("%.0f/s", achieved)),
		s.Label.Render("in-flight"), inflight))
	succ := "—"
	if n := m.ok + m.errs; n > 0 {
		st := s.Good
		if m.errs > 0 {
			st = s.Bad
		}
		succ = st.Render(fmt.Sprintf("%.2f%%", float64(m.ok)/float64(n)*100))
	}
	dropped := s.Good.Render("0")
	if m.dropped > 0 {
		dropped = s.Bad.Render(fmt.Sprint(m.dropped))
	}
	lines = append(lines, fmt.Sprintf("%s %s  %s %s  %s %d", s.Label.Render("success"), succ, s.Label.Render("dropped"), dropped,
		s.Label.Render("errors"), m.errs))
	sparkW := max(8, w-36)
	lines = append(lines, fmt.Sprintf("%s %s %s  %s",
		s.Label.Render("p95   "), charts.Sparkline(&m.p95, sparkW, 1, s.Spark),
		s.Value.Render(fmt.Sprintf("%7.2f ms", p95)), s.Dim.Render(fmt.Sprintf("p50 %.1f p99 %.1f", p50, p99))))
	engines := m.engineList()
	if len(engines) == 0 {
		lines = append(lines, s.Label.Render("engine ")+s.Dim.Render("not measured"))
	}
	var mem int64
	for _, e := range engines {
		mem += e.mem
	}
	if len(engines) > 1 {
		lines = append(lines, fmt.Sprintf("%s %s %s", s.Label.Render("engines"), charts.Sparkline(&m.engineTot, sparkW, 100, s.Engine),
			s.Value.Render(fmt.Sprintf("%7.0f m", m.engineTotal()))))
	}
	for _, e := range engines {
		if len(lines) >= h-2 { // room for the generator and the host
			break
		}
		lines = append(lines, fmt.Sprintf("%s %s %s  %s", s.Label.Render("engine "), charts.Sparkline(&e.series, sparkW, 100, s.Engine),
			s.Value.Render(fmt.Sprintf("%7.0f m", e.series.Last())), s.Dim.Render(ansi.Truncate(e.name, 16, "…"))))
	}
	lines = append(lines, fmt.Sprintf("%s %s %s  %s", s.Label.Render("gen.   "), charts.Sparkline(&m.generator, sparkW, 100, s.Gen),
		s.Value.Render(fmt.Sprintf("%7.0f m", m.generator.Last())), s.Dim.Render("memory "+stats.BytesIEC(mem))))
	if h := m.host; h != nil && h.CPUs > 0 {
		note := fmt.Sprintf("of %d · rq %d", h.CPUs, h.Runnable)
		if free := float64(h.MemAvailableBytes) / float64(max(1, h.MemTotalBytes)); h.MemTotalBytes > 0 && free < 0.2 {
			note = fmt.Sprintf("of %d · mem %.0f%%", h.CPUs, 100*free)
		}
		st := s.Value
		if h.Saturation() != "" {
			st = s.Bad
		}
		lines = append(lines, fmt.Sprintf("%s %s %s  %s", s.Label.Render("host   "), charts.Sparkline(&m.hostBusy, sparkW, float64(h.CPUs)*1000, s.Gen),
			st.Render(fmt.Sprintf("%7.0f m", h.BusyCores*1000)), s.Dim.Render(note)))
	}
	return strings.Join(lines, "\n")
}

// healthLine says, for the current run, which figures are not the
// server's: the rules that broke in the latest samples (and whether they
// broke often enough to become the run's warning), and a stage beyond the
// pre-flight estimate.
// The codes come first, so a narrow panel still shows them.
func (m *Model) healthLine() string {
	var codes, why []string
	if r := m.current; r != nil && !m.running() {
		if r.stats != nil { // finished: the run's statistics decide
			for _, w := range r.stats.Warnings {
				if w.Code.Invalidating() {
					codes = append(codes, string(w.Code))
				}
			}
		}
	} else {
		for _, c := range stats.InvalidatingCodes {
			reason, now := m.health.Now[c]
			switch {
			case now:
				codes, why = append(codes, string(c)), append(why, reason)
			case m.health.Flagged(c):
				codes = append(codes, string(c)+" earlier")
			}
		}
	}
	if c := m.capacity; c != nil && m.current != nil && c.Estimate.Exceeds(m.current.plan.TargetRPS) {
		codes = append(codes, fmt.Sprintf("%s exceeds the pre-flight ~%s/s", stats.StageLabel(m.current.plan.TargetRPS), stats.Thousands(int64(c.Estimate.SustainableRPS))))
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

// wrap breaks text into lines of at most w cells at spaces.
func wrap(text string, w int) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && ansi.StringWidth(line)+1+ansi.StringWidth(word) > w {
			lines = append(lines, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return strings.Join(append(lines, line), "\n")
}

// results is the article's two tables in one, reported run per stage, its
// success next to its latency and how many of the stage's runs failed.
func (m *Model) results(w, h int) []string {
	s := m.styles
	title := s.Label.Render("Results") + s.Dim.Render(" — reported run per stage (median p95, failed runs last); ✗ failed")
	if m.summary == nil || len(m.summary.Stages) == 0 {
		return []string{title, s.Dim.Render("the table fills in as runs finish")}
	}
	flagged := func(id string) bool { rs := m.byID[id]; return rs != nil && m.flagged(rs) }
	out := append([]string{title}, s.renderTable(m.summary.ResultsTable(flagged), w)...)
	if m.finished != nil && m.summary != nil {
		verdict := s.Good.Render("thresholds PASSED")
		if !m.summary.ThresholdsPassed {
			verdict = s.Bad.Render("thresholds FAILED")
		}
		t := m.summary.Totals
		out = append(out, fmt.Sprintf("%s · %s exchanges · %.2f%% success · %d dropped", verdict, stats.Thousands(t.Exchanges), t.SuccessRatio*100, t.Dropped))
	}
	if line := warningsLine(m.summary); line != "" {
		out = append(out, s.Warn.Render(ansi.Truncate(line, w, "…")))
	}
	_ = h
	return out
}

// warningsLine counts the runs carrying each invalidating warning.
func warningsLine(sum *stats.Summary) string {
	runs := map[stats.WarningCode]map[string]bool{}
	for _, w := range sum.Warnings {
		if w.Code.Invalidating() {
			if runs[w.Code] == nil {
				runs[w.Code] = map[string]bool{}
			}
			runs[w.Code][w.Run] = true
		}
	}
	var parts []string
	for _, c := range stats.InvalidatingCodes {
		if n := len(runs[c]); n > 0 {
			allowed := ""
			if sum.Thresholds.Allows(c) {
				allowed = ", allowed"
			}
			parts = append(parts, fmt.Sprintf("%s in %d run%s%s", c, n, plural(n), allowed))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "⚠ " + strings.Join(parts, " · ") + ": not the server's figures alone"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (m *Model) logPane(w, h int) []string {
	s := m.styles
	out := []string{s.Label.Render("Logs") + s.Dim.Render(" — agents, server and tokex (l to hide)")}
	logs := m.logs
	if n := h - 1; len(logs) > n {
		logs = logs[len(logs)-n:]
	}
	for _, l := range logs {
		st := s.Dim
		switch l.Level {
		case "warn":
			st = s.Warn
		case "error":
			st = s.Bad
		}
		out = append(out, st.Render(ansi.Truncate(fmt.Sprintf("%s %-6s %s", l.At.UTC().Format("15:04:05"), l.Source, l.Message), w, "…")))
	}
	if len(m.logs) == 0 {
		out = append(out, s.Dim.Render("no log lines yet"))
	}
	return out
}

func (m *Model) agentPane(w, h int) []string {
	s := m.styles
	out := []string{s.Label.Render("Agents") + s.Dim.Render(" — current run (a to hide)"),
		s.Dim.Render(fmt.Sprintf("%-16s %-9s %9s %9s %7s %8s", "agent", "state", "sent", "ok", "errors", "dropped"))}
	if len(m.agents) == 0 {
		return append(out, s.Dim.Render("no agent reports yet"))
	}
	ids := make([]int, 0, len(m.agents))
	for id := range m.agents {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if len(out) >= h {
			out = append(out[:h-1], s.Dim.Render(fmt.Sprintf("… %d more", len(ids)-(h-3))))
			break
		}
		a := m.agents[id]
		out = append(out, fmt.Sprintf("%-16s %-9s %9d %9d %7d %8d", ansi.Truncate(a.Name, 16, "…"), a.State, a.Sent, a.OK, a.Errors, a.Dropped))
	}
	_ = w
	return out
}

func (m *Model) status(w int) string {
	s := m.styles
	switch {
	case m.confirm:
		return s.Bad.Render("Stop the campaign? Finished runs keep their evidence; the current run is marked aborted. [y/N]")
	case m.stopping && m.finished == nil:
		return s.Warn.Render("stopping the current run… (Ctrl-C again to quit at once)")
	case m.finished != nil:
		msg := "campaign " + m.finished.Status
		if m.finished.Reason != "" {
			msg += ": " + m.finished.Reason
		}
		// A long reason is cut, never the way out.
		const hint = " — press q to exit"
		msg = ansi.Truncate(msg, max(0, w-ansi.StringWidth(hint)), "…")
		return ansi.Truncate(m.stateStyle(m.finished.Status).Render(msg)+s.Dim.Render(hint), w, "…")
	case m.lastWarn != nil:
		return ansi.Truncate(s.Warn.Render(m.lastWarn.Level+": "+m.lastWarn.Message), w, "…")
	}
	return ""
}

func (m *Model) helpLine(w int) string {
	m.help.Width = w
	if m.help.ShowAll {
		return ansi.Truncate(strings.ReplaceAll(m.help.View(m.keys), "\n", "  "), w, "…")
	}
	return m.help.View(m.keys)
}
