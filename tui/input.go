package tui

import (
	"slices"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/tokex-dev/tokex/collector/event"
)

// eventsMsg carries a batch of events: one update and one frame for all.
type eventsMsg []event.Event

// panel names what can hold the focus.
type panel int

const (
	panelLadder panel = iota
	panelLive         // the live figures (the narrow layout's sparklines)
	panelLatency
	panelThroughput
	panelEngineCPU
	panelEngineMem
	panelGenerator
	panelStages
	panelErrors
	panelResults
)

// isChart reports a panel that zoom can fill the chart area with.
func (p panel) isChart() bool { return p >= panelLatency && p <= panelStages }

// zone is where the last frame drew a panel.
type zone struct {
	panel      panel
	x, y, w, h int
}

func (z zone) contains(x, y int) bool { return x >= z.x && x < z.x+z.w && y >= z.y && y < z.y+z.h }

// navigate handles the keys that move focus, selection and zoom.
func (m *Model) navigate(msg tea.KeyMsg) {
	switch {
	case key.Matches(msg, m.keys.Next):
		m.cycleFocus(1)
	case key.Matches(msg, m.keys.Prev):
		m.cycleFocus(-1)
	case key.Matches(msg, m.keys.Up):
		m.move(-1)
	case key.Matches(msg, m.keys.Down):
		m.move(1)
	case key.Matches(msg, m.keys.Show):
		if m.focus.isChart() {
			m.zoom = !m.zoom
			return
		}
		m.show(m.cursor)
	case key.Matches(msg, m.keys.Live):
		m.follow()
	case key.Matches(msg, m.keys.Zoom):
		if m.focus.isChart() {
			m.zoom = !m.zoom
		}
	}
}

// cycleFocus moves the focus to the next (or previous) panel on screen.
func (m *Model) cycleFocus(step int) {
	if len(m.zones) == 0 {
		return
	}
	i := slices.IndexFunc(m.zones, func(z zone) bool { return z.panel == m.focus })
	i = (i + step + len(m.zones)) % len(m.zones)
	if i < 0 {
		i = 0
	}
	m.focus = m.zones[i].panel
	if !m.focus.isChart() {
		m.zoom = false
	}
}

// move steps the ladder cursor or scrolls the errors panel.
func (m *Model) move(step int) {
	switch m.focus {
	case panelErrors:
		m.errScroll = max(0, m.errScroll+step)
	default:
		m.focus = panelLadder
		if n := len(m.runs); n > 0 {
			m.cursor = min(max(0, m.cursor+step), n-1)
		}
	}
}

// show puts run i on screen: a finished (or aborted) run as history, the
// live run as following live.
func (m *Model) show(i int) {
	if i < 0 || i >= len(m.runs) {
		return
	}
	rs := m.runs[i]
	m.cursor = i
	switch {
	case rs == m.current && m.running():
		m.selected = nil
	case rs.state != rowPending:
		m.selected = rs
	}
}

// follow returns to the live run.
func (m *Model) follow() {
	m.selected, m.zoom = nil, false
	if m.current != nil {
		m.cursor = m.indexOf(m.current)
	}
}

// mouse focuses the panel under a click; a click on a ladder row shows that
// run, the wheel moves through the ladder or scrolls the errors.
func (m *Model) mouse(msg tea.MouseMsg) {
	i := slices.IndexFunc(m.zones, func(z zone) bool { return z.contains(msg.X, msg.Y) })
	if i < 0 {
		return
	}
	z := m.zones[i]
	switch msg.Button {
	case tea.MouseButtonWheelUp, tea.MouseButtonWheelDown:
		step := 1
		if msg.Button == tea.MouseButtonWheelUp {
			step = -1
		}
		if z.panel == panelLadder || z.panel == panelErrors {
			m.focus = z.panel
			m.move(step)
		}
	case tea.MouseButtonLeft:
		if msg.Action != tea.MouseActionPress {
			return
		}
		m.focus = z.panel
		if z.panel == panelLadder {
			if row := m.ladderFirst + msg.Y - z.y - 1; row >= 0 && msg.Y > z.y {
				m.show(row)
			}
		}
	}
}
