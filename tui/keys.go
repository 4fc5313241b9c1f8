package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap are the dashboard's key bindings; each panel names those it
// takes (its help.KeyMap), and the footer lists them.
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
