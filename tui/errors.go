package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/units"
)

// errorsPanel lists what went wrong: the shown run's most common errors
// (with what the server said, once the run finished), the live run's
// warnings as its samples raise them, the coded warnings of finished runs
// and the latest warning and error log lines, newest first. Focused, the
// keys and the wheel scroll it.
type errorsPanel struct {
	com     *common
	w, h    int
	scroll  int // the first line drawn, as asked (View stops at the last page)
	focused bool
}

func newErrorsPanel(com *common) *errorsPanel { return &errorsPanel{com: com} }

// SetSize implements component.
func (e *errorsPanel) SetSize(w, h int) { e.w, e.h = w, h }

// ShortHelp implements help.KeyMap.
func (e *errorsPanel) ShortHelp() []key.Binding { return []key.Binding{e.com.keys.Up} }

// FullHelp implements help.KeyMap.
func (e *errorsPanel) FullHelp() [][]key.Binding {
	return [][]key.Binding{{e.com.keys.Up, e.com.keys.Down}}
}

// Update implements component: up and down (and the wheel) scroll.
func (e *errorsPanel) Update(msg tea.Msg) tea.Cmd {
	step := 0
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, e.com.keys.Up):
			step = -1
		case key.Matches(msg, e.com.keys.Down):
			step = 1
		}
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			step = -1
		case tea.MouseButtonWheelDown:
			step = 1
		}
	}
	if step != 0 { // from where the panel is drawn, never past its last page
		e.scroll = min(max(0, e.top(len(e.lines()))+step), e.last(len(e.lines())))
	}
	return nil
}

// last is the first line of the last page of n lines.
func (e *errorsPanel) last(n int) int { return max(0, n-(e.h-1)) }

// top is the first of n lines drawn.
func (e *errorsPanel) top(n int) int { return min(e.scroll, e.last(n)) }

// View implements component.
func (e *errorsPanel) View() string {
	title := e.com.title(e.focused, "Errors & warnings")
	lines := e.lines()
	if lines == nil {
		return fit(title+"\n"+e.com.styles.Dim.Render("none so far"), e.w, e.h)
	}
	first := e.top(len(lines))
	if first > 0 {
		title += e.com.styles.Dim.Render(fmt.Sprintf(" ↑%d", first))
	}
	return fit(title+"\n"+strings.Join(lines[first:], "\n"), e.w, e.h)
}

// lines are the items wrapped to the panel's width (nil: none).
func (e *errorsPanel) lines() []string {
	var lines []string
	for _, it := range e.items() {
		wrapped := strings.Split(wrap(it.text, e.w-2), "\n")
		if len(wrapped) > maxItemLines { // room for the next ones; summary.json has it whole
			wrapped = append(wrapped[:maxItemLines-1], wrapped[maxItemLines-1]+"…")
		}
		for i, l := range wrapped {
			prefix := "  "
			if i == 0 {
				prefix = it.mark + " "
			}
			lines = append(lines, it.style.Render(ansi.Truncate(prefix+l, e.w, "…")))
		}
	}
	return lines
}

// maxItemLines is the most lines one error or warning takes in the panel.
const maxItemLines = 4

type errorItem struct {
	mark, text string
	style      lipgloss.Style
}

func (e *errorsPanel) items() []errorItem {
	s, c := e.com.styles, e.com.camp
	var out []errorItem
	if r := e.com.shown(); r != nil {
		for _, line := range topErrors(r) {
			out = append(out, errorItem{"✗", line, s.Bad})
		}
	}
	if c.running() && e.com.selected == nil {
		for _, code := range stats.InvalidatingCodes {
			if reason, now := c.health.Now[code]; now {
				out = append(out, errorItem{"⚠", string(code) + ": " + reason, s.Warn})
			} else if c.health.Flagged(code) {
				out = append(out, errorItem{"⚠", string(code) + " earlier in this run", s.Warn})
			}
		}
	}
	for i := len(c.warnings) - 1; i >= 0; i-- {
		out = append(out, errorItem{"⚠", c.warnings[i].String(), s.Warn})
	}
	n := 0
	for i := len(c.logs) - 1; i >= 0 && n < 5; i-- {
		if l := c.logs[i]; l.Level == "warn" || l.Level == "error" {
			out = append(out, errorItem{"·", l.At.UTC().Format("15:04:05") + " " + l.Source + ": " + l.Message, s.Dim})
			n++
		}
	}
	return out
}

// topErrors are a run's most common errors: from its statistics once it
// finished (with the server's words), from its windows while it runs.
func topErrors(r *runState) []string {
	var out []string
	if st := r.stats; st != nil {
		for _, e := range st.TopErrors {
			line := fmt.Sprintf("%s× %s", units.Thousands(e.Count), e.Error)
			if len(e.Descriptions) > 0 {
				line += fmt.Sprintf(" (%q)", e.Descriptions[0].Text)
			}
			out = append(out, line)
		}
		if l := doc.RetriedLine(st); l != "" {
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
		out = append(out, fmt.Sprintf("%s× %s", units.Thousands(e.n), e.k))
	}
	return out
}
