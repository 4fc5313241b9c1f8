package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap are the dashboard's key bindings.
type KeyMap struct {
	Quit    key.Binding
	Logs    key.Binding
	Agents  key.Binding
	Help    key.Binding
	Confirm key.Binding
	Cancel  key.Binding
}

// DefaultKeyMap is the standard key map.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Logs:    key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "logs")),
		Agents:  key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "agents")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Confirm: key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "stop")),
		Cancel:  key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n", "keep running")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Quit, k.Logs, k.Agents, k.Help} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Quit, k.Help}, {k.Logs, k.Agents}, {k.Confirm, k.Cancel}}
}
