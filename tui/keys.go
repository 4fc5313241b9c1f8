package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap are the dashboard's key bindings.
type KeyMap struct {
	Next, Prev, Up, Down, Show, Live, Zoom key.Binding
	Quit, Logs, Agents, Help               key.Binding
	Confirm, Cancel                        key.Binding
}

// DefaultKeyMap is the standard key map.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Next:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "focus")),
		Prev:    key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("⇧tab", "back")),
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑↓", "run")),
		Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("j/k", "down/up")),
		Show:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("⏎", "show")),
		Live:    key.NewBinding(key.WithKeys("f", "esc"), key.WithHelp("f", "live")),
		Zoom:    key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "zoom")),
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Logs:    key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "logs")),
		Agents:  key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "agents")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Confirm: key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "stop")),
		Cancel:  key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n", "keep running")),
	}
}

// ShortHelp implements help.KeyMap: every key the footer names.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Next, k.Up, k.Show, k.Live, k.Zoom, k.Logs, k.Agents, k.Quit, k.Help}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Next, k.Prev}, {k.Up, k.Down}, {k.Show, k.Live, k.Zoom}, {k.Logs, k.Agents}, {k.Quit, k.Help}, {k.Confirm, k.Cancel}}
}
