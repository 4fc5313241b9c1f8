package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/table"
)

// component is one panel of the dashboard, as soft-serve's
// common.Component: it is given its size when the layout changes (never
// while drawing), takes the keys and mouse events the dashboard routes to
// it (a mouse event in the panel's own coordinates), draws itself in
// exactly the cells it was given, and names its keys: the footer is made
// of them, and a key the focused panel names goes to it.
type component interface {
	help.KeyMap
	SetSize(w, h int)
	Update(msg tea.Msg) tea.Cmd
	View() string
}

// common is what the panels share, as soft-serve's common.Common: the
// campaign's state (only Model.Apply writes it), the styles and keys, and
// which run is on screen.
type common struct {
	camp     *campaign
	styles   Styles
	keys     KeyMap
	selected *runState // a finished run shown instead of the live one
}

// shown is the run whose charts and figures are on screen: the selected
// finished run, or the live one.
func (c *common) shown() *runState {
	if c.selected != nil {
		return c.selected
	}
	return c.camp.current
}

// title is a panel's title, marked when the panel has the focus.
func (c *common) title(focused bool, text string) string {
	if focused {
		return c.styles.Current.Render("▸ " + text)
	}
	return c.styles.Label.Render(text)
}

// stateStyle is the style of a run's rowState or of the campaign's state
// (a summary.CampaignStatus, whose ends are the runs' words, or
// campaignStopping).
func (c *common) stateStyle(state string) lipgloss.Style {
	switch state {
	case string(rowDone), string(rowMeasuring):
		return c.styles.Good
	case string(rowFailed), string(rowAborted), campaignStopping:
		return c.styles.Bad
	case string(rowWarmup), string(summary.CampaignRunning):
		return c.styles.Warn
	}
	return c.styles.Dim
}

// runIcon is a run's mark in the ladder and its style.
func (c *common) runIcon(r *runState) (string, lipgloss.Style) {
	s := c.styles
	switch r.state {
	case rowWarmup, rowMeasuring:
		return "▶", s.Current
	case rowDone:
		if res := c.camp.search; res != nil && !r.plan.Sanity { // the search judges a probe's rounds
			return c.probeIcon(res, r.plan.ID)
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
func (c *common) probeIcon(res *curve.Result, run string) (string, lipgloss.Style) {
	for _, p := range res.Probes {
		for _, x := range p.Rounds {
			if x.RunID == run {
				return c.probeMark(p.Verdict)
			}
		}
	}
	return "…", c.styles.Dim
}

// verdictMark is a probe's mark (doc.ProbeMark) in its tone's style.
func (c *common) verdictMark(v curve.Verdict) string {
	mark, st := c.probeMark(v)
	return st.Render(mark)
}

// probeMark is a probe's mark and style (Dim until it is judged).
func (c *common) probeMark(v curve.Verdict) (string, lipgloss.Style) {
	mark, tone := doc.ProbeMark(v)
	if tone == table.Plain {
		return mark, c.styles.Dim
	}
	return mark, c.styles.tone(tone)
}

// bindings flattens a panel's full help: every key it takes.
func bindings(k help.KeyMap) []key.Binding {
	var out []key.Binding
	for _, group := range k.FullHelp() {
		out = append(out, group...)
	}
	return out
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

// ms writes a latency in milliseconds with sensible precision.
func ms(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// hostNote is the host's size and its tightest figure: run queue, or
// memory when less than a fifth is free.
func hostNote(h *sample.HostMetrics) string {
	note := fmt.Sprintf("of %d · rq %d", h.CPUs, h.Runnable)
	if free := float64(h.MemAvailableBytes) / float64(max(1, h.MemTotalBytes)); h.MemTotalBytes > 0 && free < 0.2 {
		note = fmt.Sprintf("of %d · mem %.0f%%", h.CPUs, 100*free)
	}
	return note
}

// tooSmall is the screen of a terminal smaller than MinWidth×MinHeight.
func tooSmall(w, h int) string {
	return fmt.Sprintf("tokex needs a terminal of at least %d×%d (this one is %d×%d).\nEnlarge it, or press q to quit.", MinWidth, MinHeight, w, h)
}
