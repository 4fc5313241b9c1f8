package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tokex-dev/tokex/collector/event"
)

// fed is what the panels share after evs, folded as the dashboard folds
// them: a panel can be tested alone.
func fed(evs []event.Event) *common {
	c := newCampaign()
	for _, e := range evs {
		c.apply(e, nil)
	}
	return &common{camp: c, styles: DefaultStyles(), keys: DefaultKeyMap()}
}

// sized checks a panel's view is exactly w×h cells and returns its lines.
func sized(t *testing.T, c component, w, h int) []string {
	t.Helper()
	c.SetSize(w, h)
	lines := strings.Split(c.View(), "\n")
	if len(lines) != h {
		t.Fatalf("%T at %d×%d: %d lines", c, w, h, len(lines))
	}
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw != w {
			t.Fatalf("%T at %d×%d: line %d is %d wide: %q", c, w, h, i, lw, l)
		}
	}
	return lines
}

// row is the first line holding s ("" when none).
func row(lines []string, s string) string {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// Every panel draws exactly the cells it was given, at any size, before
// and after the campaign, and names its keys only from the key map.
func TestPanelsFillTheirSize(t *testing.T) {
	all := script(0)
	for _, evs := range [][]event.Event{midRun(all), all, searchScript()} {
		com := fed(evs)
		grid := newChartGrid(com)
		for _, c := range []component{newLadder(com), newErrorsPanel(com), newLivePanel(com), grid, grid.stages,
			newResultsPanel(com), newLogsPanel(com), newAgentsPanel(com), newHelpPane(com)} {
			for _, sz := range [][2]int{{30, 3}, {40, 12}, {169, 20}} {
				sized(t, c, sz[0], sz[1])
			}
			for _, b := range bindings(c) {
				if len(b.Keys()) == 0 {
					t.Errorf("%T names a key without keys", c)
				}
			}
		}
	}
	empty := fed(nil) // before a run the layout gives the grid no room
	for _, c := range []component{newLadder(empty), newErrorsPanel(empty), newLivePanel(empty), newResultsPanel(empty), newLogsPanel(empty)} {
		sized(t, c, 50, 6)
	}
}

// The footer is made of the panels' keys, each once, in the order the
// dashboard has always shown them.
func TestFooterIsThePanelsKeys(t *testing.T) {
	m := New(Options{})
	var got []string
	for _, b := range m.ShortHelp() {
		got = append(got, b.Help().Key+" "+b.Help().Desc)
	}
	want := "tab focus|↑↓ run|⏎ show|f live|z zoom|l logs|a agents|q quit|? help"
	if strings.Join(got, "|") != want {
		t.Errorf("footer keys %q, want %q", strings.Join(got, "|"), want)
	}
	// A key the focused panel names goes to it; others to the ladder.
	m.SetSize(120, 40)
	feed(m, midRun(script(0)))
	m.ladder.cursor = 1
	m.setFocus(panelErrors)
	m.Update(keyMsg("enter")) // the errors panel takes no enter: the ladder shows its cursor's run
	if m.com.selected == nil || m.com.selected.plan.ID != "01-r1-100rps" || m.focus != panelErrors {
		t.Errorf("enter on the errors panel: selected %v focus %v", m.com.selected, m.focus)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyUp}) // up: the errors panel's
	if m.focus != panelErrors || m.ladder.cursor != 1 {
		t.Errorf("up on the errors panel moved the ladder (cursor %d, focus %v)", m.ladder.cursor, m.focus)
	}
}
