package tui

import (
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// The layout is computed when the size or what decides it changes, never
// in View: drawing changes nothing, and the mouse finds the panels before
// the first frame.
func TestViewOnlyDraws(t *testing.T) {
	for _, sz := range sizes {
		m := New(Options{Live: true})
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		feed(m, midRun(script(0)))
		zones := append([]zone(nil), m.zones...)
		if len(zones) < 3 {
			t.Fatalf("%v: zones %+v before any frame", sz, zones)
		}
		first := m.View()
		if second := m.View(); second != first || !slices.Equal(m.zones, zones) {
			t.Errorf("%v: View changed the dashboard", sz)
		}
		m.Update(tea.MouseMsg{X: 5, Y: 4, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
		if m.com.selected == nil || m.com.selected.plan.ID != "00-sanity" {
			t.Errorf("%v: a click before any frame selected %v", sz, m.com.selected)
		}
	}
}

// The rows add up to the screen, and the bottom is as tall as the results
// table (3 rows to a third of the screen) or a third for the panes.
func TestLayoutRows(t *testing.T) {
	m := New(Options{})
	feed(m, script(0))
	for _, c := range []struct {
		w, h    int
		keys    string
		charts  bool
		bottomH int
	}{{120, 40, "", true, 7}, {120, 40, "l", true, 13}, {200, 60, "a", true, 20}, {200, 60, "?", true, 20}, {80, 24, "", false, 9}, {99, 40, "", false, 25}} {
		m.showLogs, m.showAgents, m.showHelp = c.keys == "l", c.keys == "a", c.keys == "?"
		m.SetSize(c.w, c.h)
		if m.charts != c.charts || m.bottomH != c.bottomH || headerRows+1+m.midH+1+m.bottomH+footerRows != c.h {
			t.Errorf("%d×%d %q: charts %v, middle %d, bottom %d", c.w, c.h, c.keys, m.charts, m.midH, m.bottomH)
		}
		if got := len(strings.Split(m.View(), "\n")); got != c.h {
			t.Errorf("%d×%d: %d lines", c.w, c.h, got)
		}
	}
	m.SetSize(79, 40)
	if len(m.zones) != 0 || !strings.Contains(m.View(), "at least 80×24") {
		t.Errorf("too small: zones %+v", m.zones)
	}
}
