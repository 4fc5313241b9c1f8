package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// logsPanel is the latest log lines of the agents, the server and tokex,
// as many as fit, in place of the results while l shows it.
type logsPanel struct {
	com  *common
	w, h int
}

func newLogsPanel(com *common) *logsPanel { return &logsPanel{com: com} }

// SetSize implements component.
func (l *logsPanel) SetSize(w, h int) { l.w, l.h = w, h }

// ShortHelp implements help.KeyMap: the key that shows it.
func (l *logsPanel) ShortHelp() []key.Binding { return []key.Binding{l.com.keys.Logs} }

// FullHelp implements help.KeyMap.
func (l *logsPanel) FullHelp() [][]key.Binding { return [][]key.Binding{l.ShortHelp()} }

// Update implements component.
func (l *logsPanel) Update(tea.Msg) tea.Cmd { return nil }

// View implements component.
func (l *logsPanel) View() string {
	s, all := l.com.styles, l.com.camp.logs
	out := []string{s.Label.Render("Logs") + s.Dim.Render(" — agents, server and tokex (l to hide)")}
	logs := all
	if n := l.h - 1; len(logs) > n {
		logs = logs[len(logs)-n:]
	}
	for _, line := range logs {
		st := s.Dim
		switch line.Level {
		case "warn":
			st = s.Warn
		case "error":
			st = s.Bad
		}
		out = append(out, st.Render(ansi.Truncate(fmt.Sprintf("%s %-6s %s", line.At.UTC().Format("15:04:05"), line.Source, line.Message), l.w, "…")))
	}
	if len(all) == 0 {
		out = append(out, s.Dim.Render("no log lines yet"))
	}
	return fit(strings.Join(out, "\n"), l.w, l.h)
}
