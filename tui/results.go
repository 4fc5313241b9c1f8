package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/table"
	"github.com/tokex-dev/tokex/collector/units"
)

// resultsPanel is the article's two tables in one, reported run per
// stage, its success next to its latency and how many of the stage's runs
// failed (a probe per rate in a capacity search), then the verdict once
// the campaign ended and the invalidating warnings.
type resultsPanel struct {
	com    *common
	w, h   int
	drawn  resultsKey // what cached was drawn from
	cached []string
}

// resultsKey is what the table is drawn from: its width, the summary and
// the campaign's end (sumVer counts their changes), and whether the live
// run carries a warning (a run that started again is in the summary).
type resultsKey struct {
	w, ver      int
	sum         *summary.Summary
	liveFlagged bool
}

func newResultsPanel(com *common) *resultsPanel { return &resultsPanel{com: com} }

// SetSize implements component.
func (r *resultsPanel) SetSize(w, h int) { r.w, r.h = w, h }

// ShortHelp implements help.KeyMap: the panel takes no key.
func (r *resultsPanel) ShortHelp() []key.Binding { return nil }

// FullHelp implements help.KeyMap.
func (r *resultsPanel) FullHelp() [][]key.Binding { return nil }

// Update implements component.
func (r *resultsPanel) Update(tea.Msg) tea.Cmd { return nil }

// View implements component.
func (r *resultsPanel) View() string { return fit(strings.Join(r.lines(), "\n"), r.w, r.h) }

// lines are the panel's lines, as many as it has: the chart layout gives
// it that many rows (from 3 to a third of the screen). They are drawn
// again only when what they show changed.
func (r *resultsPanel) lines() []string {
	c := r.com.camp
	k := resultsKey{w: r.w, ver: c.sumVer, sum: c.summary, liveFlagged: c.running() && c.flagged(c.current)}
	if r.cached == nil || k != r.drawn {
		r.drawn, r.cached = k, r.draw()
	}
	return r.cached
}

func (r *resultsPanel) draw() []string {
	s, c := r.com.styles, r.com.camp
	sum := c.summary
	title := s.Label.Render("Results") + s.Dim.Render(" — reported run per stage (median p95, failed runs last); ✗ failed")
	if sum == nil || len(sum.Stages) == 0 {
		return []string{title, s.Dim.Render("the table fills in as runs finish")}
	}
	if sum.Capacity != nil {
		title = s.Label.Render("Results") + s.Dim.Render(" — a probe per rate, judged by the search's objective: ✓ pass, ✗ broken, ? invalid, ! hard")
	}
	flagged := func(id string) bool { rs := c.byID[id]; return rs != nil && c.flagged(rs) }
	out := append([]string{title}, s.renderTable(doc.ResultsTable(sum, flagged), r.w)...)
	if c.finished != nil {
		verdict := s.Good.Render("thresholds PASSED")
		switch {
		case sum.Capacity != nil: // a search breaks its objective by design
			verdict = s.Label.Render("capacity " + sum.Capacity.Bracket())
		case !sum.ThresholdsPassed:
			verdict = s.Bad.Render("thresholds FAILED")
		}
		t := sum.Totals
		out = append(out, fmt.Sprintf("%s · %s exchanges · %.2f%% success · %d dropped%s", verdict, units.Thousands(t.Exchanges), t.SuccessRatio*100, t.Dropped, doc.RetriedNote(t)))
	}
	if line := warningsLine(sum); line != "" {
		out = append(out, s.Warn.Render(ansi.Truncate(line, r.w, "…")))
	}
	return append(out, r.agentic(sum)...)
}

// agentic are the workload's figures under the results (issue 30): the
// exchange premium over the baseline, each hop's p95, token size and CPU,
// or each grant of a mix.
func (r *resultsPanel) agentic(sum *summary.Summary) []string {
	a := sum.Agentic
	if a == nil {
		return nil
	}
	s := r.com.styles
	var out []string
	if lines := doc.PremiumLines(a); len(lines) > 0 {
		out = append(out, s.Label.Render("Premium ")+ansi.Truncate(lines[0], max(r.w-8, 1), "…"))
	}
	for _, t := range []table.Table{doc.HopTable(a), doc.KindTable(a)} {
		if len(t.Rows) > 0 {
			out = append(out, s.renderTable(t, r.w)...)
		}
	}
	return append(out, r.p95Bars(a)...)
}

// p95Bars chart the highest stage's p95 per hop (per grant of a mix) as
// bars, each labelled with its figure.
func (r *resultsPanel) p95Bars(a *summary.Agentic) []string {
	var names []string
	var vals []float64
	var rate float64
	for _, st := range a.Stages {
		var n []string
		var v []float64
		for _, h := range st.Hops {
			n, v = append(n, fmt.Sprintf("hop %d", h.Hop)), append(v, h.P95Ms)
		}
		for _, k := range st.Kinds {
			n, v = append(n, string(k.Kind)), append(v, k.LatencyMs.P95)
		}
		if len(v) > 0 {
			names, vals, rate = n, v, st.TargetRPS
		}
	}
	top := 0.0
	for _, v := range vals {
		top = max(top, v)
	}
	if top <= 0 {
		return nil
	}
	s := r.com.styles
	out := []string{s.Label.Render("p95 at " + units.StageLabel(rate))}
	room := max(r.w-32, 4)
	for i, v := range vals {
		bar := strings.Repeat("█", max(int(float64(room)*v/top+0.5), 1))
		out = append(out, ansi.Truncate(fmt.Sprintf("%18s ", names[i])+s.Good.Render(bar)+fmt.Sprintf(" %.3g ms", v), r.w, "…"))
	}
	return out
}

// warningsLine counts the runs carrying each invalidating warning.
func warningsLine(sum *summary.Summary) string {
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
