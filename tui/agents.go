package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// agentsPanel is the run on screen's agents, one a line with what each
// sent, got and dropped, in place of the results while a shows it.
type agentsPanel struct {
	com  *common
	w, h int
}

func newAgentsPanel(com *common) *agentsPanel { return &agentsPanel{com: com} }

// SetSize implements component.
func (a *agentsPanel) SetSize(w, h int) { a.w, a.h = w, h }

// ShortHelp implements help.KeyMap: the key that shows it.
func (a *agentsPanel) ShortHelp() []key.Binding { return []key.Binding{a.com.keys.Agents} }

// FullHelp implements help.KeyMap.
func (a *agentsPanel) FullHelp() [][]key.Binding { return [][]key.Binding{a.ShortHelp()} }

// Update implements component.
func (a *agentsPanel) Update(tea.Msg) tea.Cmd { return nil }

// View implements component.
func (a *agentsPanel) View() string { return fit(strings.Join(a.lines(), "\n"), a.w, a.h) }

func (a *agentsPanel) lines() []string {
	s, h := a.com.styles, a.h
	out := []string{s.Label.Render("Agents") + s.Dim.Render(" — the run on screen (a to hide)"),
		s.Dim.Render(fmt.Sprintf("%-16s %-9s %9s %9s %7s %8s", "agent", "state", "sent", "ok", "errors", "dropped"))}
	var agents map[int]agentRow
	if r := a.com.shown(); r != nil && r.data != nil {
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
		r := agents[id]
		out = append(out, fmt.Sprintf("%-16s %-9s %9d %9d %7d %8d", ansi.Truncate(r.Name, 16, "…"), r.State, r.Sent, r.OK, r.Errors, r.Dropped))
	}
	return out
}
