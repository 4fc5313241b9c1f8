package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// helpPane is `?`: every key with what it does, and the mouse, in place of
// the results while it is shown.
type helpPane struct {
	com  *common
	w, h int
}

func newHelpPane(com *common) *helpPane { return &helpPane{com: com} }

// SetSize implements component.
func (p *helpPane) SetSize(w, h int) { p.w, p.h = w, h }

// ShortHelp implements help.KeyMap: the key that shows it.
func (p *helpPane) ShortHelp() []key.Binding { return []key.Binding{p.com.keys.Help} }

// FullHelp implements help.KeyMap.
func (p *helpPane) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }

// Update implements component.
func (p *helpPane) Update(tea.Msg) tea.Cmd { return nil }

// View implements component.
func (p *helpPane) View() string {
	s, k := p.com.styles, p.com.keys
	out := []string{s.Label.Render("Keys") + s.Dim.Render(" — ? to hide")}
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
		out = append(out, ansi.Truncate(fmt.Sprintf("%-22s %s", s.Value.Render(strings.Join(keys, ", ")), r.what), p.w, "…"))
	}
	return fit(strings.Join(out, "\n"), p.w, p.h)
}
