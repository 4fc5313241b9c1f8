package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
)

const ladderWidth = 30

// View implements tea.Model.
func (m *Model) View() string {
	w, h := m.width, m.height
	if w == 0 || h == 0 {
		return ""
	}
	m.zones = m.zones[:0]
	if w < MinWidth || h < MinHeight {
		return fmt.Sprintf("tokex needs a terminal of at least %d×%d (this one is %d×%d).\nEnlarge it, or press q to quit.", MinWidth, MinHeight, w, h)
	}
	if m.chartMode() {
		return m.chartView()
	}
	return m.compactView()
}

// chartMode reports whether the terminal has room for the braille charts;
// smaller ones get one sparkline per figure.
func (m *Model) chartMode() bool { return m.width >= 100 && m.height >= 32 }

// compactView is the 80×24 layout: the ladder and the live figures as
// sparklines side by side, the results (or logs, or agents) below.
func (m *Model) compactView() string {
	w, h := m.width, m.height
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
	top := len(header) + 1
	m.addZone(panelLadder, 0, top, ladderWidth, midH)
	m.addZone(panelLive, ladderWidth+1, top, w-ladderWidth-1, midH)
	m.addZone(panelResults, 0, top+midH+1, w, bottomH)
	mid := lipgloss.JoinHorizontal(lipgloss.Top,
		fit(m.ladder(ladderWidth, midH), ladderWidth, midH),
		fit(strings.Repeat("│\n", midH-1)+"│", 1, midH),
		fit(m.live(w-ladderWidth-2, midH), w-ladderWidth-2, midH))
	lines := append([]string{}, header...)
	lines = append(lines, rule, mid, rule)
	lines = append(lines, fit(strings.Join(m.bottom(w, bottomH), "\n"), w, bottomH))
	lines = append(lines, footer...)
	return strings.Join(lines, "\n")
}

// bottom is the results table, or the logs or agents when asked for.
func (m *Model) bottom(w, h int) []string {
	switch {
	case m.help.ShowAll:
		return m.helpPane(w, h)
	case m.showLogs:
		return m.logPane(w, h)
	case m.showAgents:
		return m.agentPane(w, h)
	}
	return m.results(w, h)
}

func (m *Model) addZone(p panel, x, y, w, h int) {
	m.zones = append(m.zones, zone{panel: p, x: x, y: y, w: w, h: h})
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
		switch {
		case r.state == rowPending:
			remaining += r.plan.Total()
		case r.state.live():
			remaining += r.plan.Total() - m.now.Sub(r.started)
		}
	}
	state := "running"
	if m.finished != nil {
		state = string(m.finished.Status)
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

// title is a panel's title, marked when the panel has the focus.
func (m *Model) title(p panel, text string) string {
	if m.focus == p {
		return m.styles.Current.Render("▸ " + text)
	}
	return m.styles.Label.Render(text)
}

func (m *Model) ladder(w, h int) string {
	s := m.styles
	lines := []string{m.title(panelLadder, "Ladder")}
	// Keep the cursor's run visible when the ladder is taller than the pane.
	first := 0
	if len(m.runs) > h-1 {
		first = min(max(0, m.cursor-(h-1)/2), len(m.runs)-(h-1))
	}
	m.ladderFirst = first
	for i := first; i < len(m.runs) && len(lines) < h; i++ {
		r := m.runs[i]
		icon, st := m.runIcon(r)
		note := stats.StageLabel(r.plan.TargetRPS)
		switch {
		case r.state == rowAborted || r.state == rowFailed:
			note = string(r.state)
		case r.plan.Sanity:
			note = "sanity"
		}
		mark := " "
		switch {
		case r == m.selected:
			mark = "»"
		case i == m.cursor && m.focus == panelLadder:
			mark = "›"
		}
		line := fmt.Sprintf("%s%s %-16s %s", mark, icon, r.plan.ID, note)
		badge := ""
		if m.flagged(r) {
			badge = " " + s.Warn.Render("⚠")
		}
		lines = append(lines, st.Render(ansi.Truncate(line, w-len(" ⚠"), "…"))+badge)
	}
	return strings.Join(lines, "\n")
}

// runIcon is a run's mark in the ladder and its style.
func (m *Model) runIcon(r *runState) (string, lipgloss.Style) {
	s := m.styles
	switch r.state {
	case rowWarmup, rowMeasuring:
		return "▶", s.Current
	case rowDone:
		if res, _ := m.curve.Search(); res != nil && !r.plan.Sanity { // the search judges a probe's rounds
			return m.probeIcon(res, r.plan.ID)
		}
		if r.stats != nil && !r.stats.ThresholdsPassed && !r.plan.Sanity {
			return "✗", s.Bad
		}
		return "✓", s.Good
	case rowFailed, rowAborted:
		return "✗", s.Bad
	}
	return "·", s.Dim
}

// probeIcon is the mark of the probe that ran run (… until it is judged)
// and its style.
func (m *Model) probeIcon(res *curve.Result, run string) (string, lipgloss.Style) {
	for _, p := range res.Probes {
		for _, x := range p.Rounds {
			if x.RunID == run {
				return m.probeMark(p.Verdict)
			}
		}
	}
	return "…", m.styles.Dim
}

// progress is the live run's line: state, bar, share done and time.
func (m *Model) progress(w int) string {
	s := m.styles
	r := m.current
	elapsed := m.now.Sub(r.started)
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
	m.bar.Width = max(10, w-42)
	return fmt.Sprintf("%s %s %s %3.0f%% %s/%s", s.Value.Render(r.plan.ID), m.stateStyle(string(r.state)).Render(fmt.Sprintf("%-9s", r.state)),
		m.bar.ViewAs(frac), frac*100, dur(min(elapsed, total)), dur(total))
}

// preflight is the screen before the first run: the capacity estimate.
func (m *Model) preflight(w int) string {
	s := m.styles
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

// figures are the shown run's target, achieved, in-flight, success,
// dropped and errors, on one line or two.
func (m *Model) figures(r *runState, oneLine bool) []string {
	s := m.styles
	d := r.data
	achieved, inflight := 0.0, int64(0)
	var okN, errN, droppedN int64
	if d != nil {
		if d.win != nil {
			achieved, inflight = d.win.AchievedRPS(), d.win.InFlight
		}
		okN, errN, droppedN = d.okN, d.errN, d.droppedN
	}
	if r != m.current || !m.running() {
		if st := r.stats; st != nil { // finished: the run's statistics
			achieved, inflight, okN, errN, droppedN = st.AchievedRPS, 0, st.OK, st.Requests-st.OK, st.Dropped
		}
	}
	a := fmt.Sprintf("%s %s  %s %s  %s %d", s.Label.Render("target"), s.Value.Render(stats.StageLabel(r.plan.TargetRPS)),
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
		dropped = s.Bad.Render(stats.Thousands(droppedN))
	}
	b := fmt.Sprintf("%s %s  %s %s  %s %s", s.Label.Render("success"), succ, s.Label.Render("dropped"), dropped,
		s.Label.Render("errors"), stats.Thousands(errN))
	if oneLine {
		return []string{a + s.Dim.Render("  ·  ") + b}
	}
	return []string{a, b}
}

// viewing says which finished run is on screen instead of the live one.
func (m *Model) viewing() string {
	r := m.selected
	icon, st := m.runIcon(r)
	return st.Render("» showing "+r.plan.ID+" "+icon+" "+string(r.state)) + m.styles.Dim.Render(" — f or esc follows the live run")
}

func (m *Model) live(w, h int) string {
	s := m.styles
	if m.current == nil {
		return m.preflight(w)
	}
	lines := []string{m.progress(w)}
	if m.selected != nil {
		lines = append(lines, ansi.Truncate(m.viewing(), w, "…"))
	}
	if warn := m.healthLine(); warn != "" {
		lines = append(lines, s.Bad.Render(ansi.Truncate(warn, w, "…")))
	}
	r := m.shown()
	lines = append(lines, m.figures(r, false)...)
	d := r.data
	if d == nil {
		return strings.Join(append(lines, s.Dim.Render(noCharts)), "\n")
	}
	search := m.searchLine(w)
	if search != "" {
		h--
	}
	lines = append(lines, m.sparks(d, w, h-len(lines))...)
	if search != "" {
		lines = append(lines, search)
	}
	return strings.Join(lines, "\n")
}

// noCharts stands where a run's charts were let go (maxHistory).
var noCharts = fmt.Sprintf("this run's charts are no longer kept (the last %d runs keep theirs)", maxHistory)

// sparks are the compact layout's one-line charts of run data d.
func (m *Model) sparks(d *runData, w, h int) []string {
	s := m.styles
	sparkW := max(8, w-36)
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
		s.Value.Render(fmt.Sprintf("%7.0f m", d.gen.Last())), s.Dim.Render("memory "+stats.BytesIEC(d.memory()))))
	if h := m.host; h != nil && h.CPUs > 0 {
		st := s.Value
		if h.Saturation() != "" {
			st = s.Bad
		}
		lines = append(lines, fmt.Sprintf("%s %s %s  %s", s.Label.Render("host   "), charts.SparkValues(d.host.Values(), sparkW, float64(h.CPUs)*1000, s.Gen),
			st.Render(fmt.Sprintf("%7.0f m", h.BusyCores*1000)), s.Dim.Render(m.hostNote())))
	}
	return lines
}

// hostNote is the host's size and its tightest figure: run queue, or
// memory when less than a fifth is free.
func (m *Model) hostNote() string {
	h := m.host
	note := fmt.Sprintf("of %d · rq %d", h.CPUs, h.Runnable)
	if free := float64(h.MemAvailableBytes) / float64(max(1, h.MemTotalBytes)); h.MemTotalBytes > 0 && free < 0.2 {
		note = fmt.Sprintf("of %d · mem %.0f%%", h.CPUs, 100*free)
	}
	return note
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
	if m.summary.Capacity != nil {
		title = s.Label.Render("Results") + s.Dim.Render(" — a probe per rate, judged by the search's objective: ✓ pass, ✗ broken, ? invalid, ! hard")
	}
	flagged := func(id string) bool { rs := m.byID[id]; return rs != nil && m.flagged(rs) }
	out := append([]string{title}, s.renderTable(m.summary.ResultsTable(flagged), w)...)
	if m.finished != nil && m.summary != nil {
		verdict := s.Good.Render("thresholds PASSED")
		switch {
		case m.summary.Capacity != nil: // a search breaks its objective by design
			verdict = s.Label.Render("capacity " + m.summary.Capacity.Bracket())
		case !m.summary.ThresholdsPassed:
			verdict = s.Bad.Render("thresholds FAILED")
		}
		t := m.summary.Totals
		out = append(out, fmt.Sprintf("%s · %s exchanges · %.2f%% success · %d dropped%s", verdict, stats.Thousands(t.Exchanges), t.SuccessRatio*100, t.Dropped, t.RetriedNote()))
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
	out := []string{s.Label.Render("Agents") + s.Dim.Render(" — the run on screen (a to hide)"),
		s.Dim.Render(fmt.Sprintf("%-16s %-9s %9s %9s %7s %8s", "agent", "state", "sent", "ok", "errors", "dropped"))}
	var agents map[int]agentRow
	if r := m.shown(); r != nil && r.data != nil {
		agents = r.data.agents
	}
	if len(agents) == 0 {
		return append(out, s.Dim.Render("no agent reports yet"))
	}
	ids := make([]int, 0, len(agents))
	for id := range agents {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if len(out) >= h {
			out = append(out[:h-1], s.Dim.Render(fmt.Sprintf("… %d more", len(ids)-(h-3))))
			break
		}
		a := agents[id]
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
		msg := "campaign " + string(m.finished.Status)
		if m.finished.Reason != "" {
			msg += ": " + m.finished.Reason
		}
		// A long reason is cut, never the way out.
		const hint = " — press q to exit"
		msg = ansi.Truncate(msg, max(0, w-ansi.StringWidth(hint)), "…")
		return ansi.Truncate(m.stateStyle(string(m.finished.Status)).Render(msg)+s.Dim.Render(hint), w, "…")
	case m.lastWarn != nil:
		return ansi.Truncate(s.Warn.Render(m.lastWarn.Level+": "+m.lastWarn.Message), w, "…")
	}
	return ""
}

func (m *Model) helpLine(w int) string {
	m.help.Width = w
	return m.help.ShortHelpView(m.keys.ShortHelp())
}

// helpPane is `?`: every key with what it does, and the mouse.
func (m *Model) helpPane(w, h int) []string {
	s := m.styles
	out := []string{s.Label.Render("Keys") + s.Dim.Render(" — ? to hide")}
	k := m.keys
	rows := []struct {
		b    []key.Binding
		what string
	}{
		{[]key.Binding{k.Next, k.Prev}, "move the focus between panels (the mouse too: click a panel)"},
		{[]key.Binding{k.Up, k.Down}, "move through the ladder, or scroll the errors panel (the wheel too)"},
		{[]key.Binding{k.Show}, "show the run under the cursor (its charts and figures; the live run keeps running); on a chart, zoom"},
		{[]key.Binding{k.Live}, "follow the live run again"},
		{[]key.Binding{k.Zoom}, "the focused chart fills the chart area, or not"},
		{[]key.Binding{k.Logs, k.Agents}, "logs; per-agent table (of the run on screen)"},
		{[]key.Binding{k.Quit}, "quit (a live campaign asks first: y stops it, n keeps running; Ctrl-C twice exits at once)"},
	}
	for _, r := range rows {
		var keys []string
		for _, b := range r.b {
			keys = append(keys, strings.Join(b.Keys(), "/"))
		}
		out = append(out, ansi.Truncate(fmt.Sprintf("%-22s %s", s.Value.Render(strings.Join(keys, ", ")), r.what), w, "…"))
	}
	_ = h
	return out
}
