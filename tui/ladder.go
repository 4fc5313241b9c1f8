package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/collector/units"
)

// ladderWidth is the width of the ladder (and of the errors panel below it
// in the chart layout).
const ladderWidth = 30

// ladder is the campaign's runs, one a line, each with its mark: a cursor
// moves through them, Enter (or a click) shows the run under it instead of
// the live one (the common selection), f follows the live run again.
type ladder struct {
	com     *common
	w, h    int
	cursor  int // the row under the cursor
	focused bool
}

func newLadder(com *common) *ladder { return &ladder{com: com} }

// SetSize implements component.
func (l *ladder) SetSize(w, h int) { l.w, l.h = w, h }

// ShortHelp implements help.KeyMap.
func (l *ladder) ShortHelp() []key.Binding {
	k := l.com.keys
	return []key.Binding{k.Up, k.Show, k.Live}
}

// FullHelp implements help.KeyMap.
func (l *ladder) FullHelp() [][]key.Binding {
	k := l.com.keys
	return [][]key.Binding{{k.Up, k.Down}, {k.Show, k.Live}}
}

// Update implements component: the keys move the cursor, show its run or
// follow the live one; the wheel moves the cursor, a click on a row shows
// that run.
func (l *ladder) Update(msg tea.Msg) tea.Cmd {
	k := l.com.keys
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, k.Up):
			l.move(-1)
		case key.Matches(msg, k.Down):
			l.move(1)
		case key.Matches(msg, k.Show):
			l.show(l.cursor)
		case key.Matches(msg, k.Live):
			l.follow()
		}
	case tea.MouseMsg:
		switch {
		case msg.Button == tea.MouseButtonWheelUp:
			l.move(-1)
		case msg.Button == tea.MouseButtonWheelDown:
			l.move(1)
		case msg.Button == tea.MouseButtonLeft && msg.Action == tea.MouseActionPress && msg.Y > 0: // below the title
			l.show(l.first() + msg.Y - 1)
		}
	}
	return nil
}

// move steps the cursor.
func (l *ladder) move(step int) {
	if n := len(l.com.camp.runs); n > 0 {
		l.cursor = min(max(0, l.cursor+step), n-1)
	}
}

// show puts run i on screen: a finished (or aborted) run as history, the
// live run as following live; a pending run changes nothing.
func (l *ladder) show(i int) {
	c := l.com.camp
	if i < 0 || i >= len(c.runs) {
		return
	}
	rs := c.runs[i]
	l.cursor = i
	switch {
	case rs == c.current && c.running():
		l.com.selected = nil
	case rs.state != rowPending:
		l.com.selected = rs
	}
}

// follow returns to the live run.
func (l *ladder) follow() {
	l.com.selected = nil
	if c := l.com.camp; c.current != nil {
		l.cursor = c.indexOf(c.current)
	}
}

// runStarted moves the cursor to the run that started, unless the user
// moved it away from the one before (prev) to look at history.
func (l *ladder) runStarted(prev *runState) {
	c := l.com.camp
	if l.com.selected == nil || l.cursor == c.indexOf(prev) {
		l.cursor = c.indexOf(c.current)
	}
}

// first is the first run drawn: the cursor's run stays visible when the
// ladder is taller than the pane.
func (l *ladder) first() int {
	n, rows := len(l.com.camp.runs), l.h-1
	if n > rows {
		return min(max(0, l.cursor-rows/2), n-rows)
	}
	return 0
}

// View implements component.
func (l *ladder) View() string {
	s, c := l.com.styles, l.com.camp
	lines := []string{l.com.title(l.focused, "Ladder")}
	for i := l.first(); i < len(c.runs) && len(lines) < l.h; i++ {
		r := c.runs[i]
		icon, st := l.com.runIcon(r)
		note := units.StageLabel(r.plan.TargetRPS)
		switch {
		case r.state == rowAborted || r.state == rowFailed:
			note = string(r.state)
		case r.plan.Sanity:
			note = "sanity"
		}
		mark := " "
		switch {
		case r == l.com.selected:
			mark = "»"
		case i == l.cursor && l.focused:
			mark = "›"
		}
		line := fmt.Sprintf("%s%s %-16s %s", mark, icon, r.plan.ID, note)
		badge := ""
		if c.flagged(r) {
			badge = " " + s.Warn.Render("⚠")
		}
		lines = append(lines, st.Render(ansi.Truncate(line, l.w-len(" ⚠"), "…"))+badge)
	}
	return fit(strings.Join(lines, "\n"), l.w, l.h)
}
