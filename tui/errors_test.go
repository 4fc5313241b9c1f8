package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// The errors panel: the shown run's errors most common first, the live
// run's warnings, finished runs' coded warnings newest first, the latest
// warn and error log lines; a long item wraps to at most four lines.
func TestErrorsPanelLists(t *testing.T) {
	run := event.PlannedRun{ID: "01-r1-50rps", Round: 1, TargetRPS: 50, Duration: 10e9, Agents: 1}
	com := fed([]event.Event{
		event.CampaignStarted{At: t0, ID: "c", Runs: []event.PlannedRun{run}},
		event.RunStarted{At: t0, Run: run},
		event.Window{At: t0, Seconds: 1, RunID: run.ID, Phase: stats.Measured, TargetRPS: 50, Completed: 50, OK: 40, Errors: 10,
			ErrorKinds: map[string]int64{"timeout": 3, "oauth_error:invalid_grant": 7}},
		event.Host{At: t0, HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: 2}},
		event.Log{At: t0, Source: "server", Level: "info", Message: "not an error"},
		event.Log{At: t0, Source: "server", Level: "error", Message: strings.Repeat("a very long line ", 20)},
	})
	com.camp.warnings = []stats.Warning{stats.Warn(stats.WarnDropped, "run-0", "first"), stats.Warn(stats.WarnDropped, "run-1", "second")}
	e := newErrorsPanel(com)
	v := strings.Join(sized(t, e, 40, 20), "\n")
	order := []string{"✗ 7× oauth_error:invalid_grant", "✗ 3× timeout", "⚠ host_saturated: CPU 100% busy", "run-1: second", "run-0: first", "· 12:00:00 server: a very long line"}
	at := -1
	for _, s := range order {
		i := strings.Index(v, s)
		if i < at {
			t.Errorf("%q out of order or missing in\n%s", s, v)
		}
		at = i
	}
	if strings.Contains(v, "not an error") || strings.Count(v, "a very long line") > 4*40/len("a very long line ") || !strings.Contains(v, "…") {
		t.Errorf("info lines, or an item past four lines:\n%s", v)
	}
	if v := strings.Join(sized(t, newErrorsPanel(fed(nil)), 30, 3), "\n"); !strings.Contains(v, "none so far") {
		t.Errorf("empty: %q", v)
	}
}

// Focused, the panel scrolls with the keys and the wheel, from its top to
// its last page and no further; the title says how far.
func TestErrorsPanelScrolls(t *testing.T) {
	com := fed(nil)
	for i := range 10 {
		com.camp.warnings = append(com.camp.warnings, stats.Warn(stats.WarnDropped, fmt.Sprintf("run-%d", i), "dropped"))
	}
	e := newErrorsPanel(com)
	e.focused = true
	sized(t, e, 40, 5) // 4 of 10 lines: the last page starts at 6
	for range 3 {
		e.Update(keyMsg("down"))
	}
	if lines := sized(t, e, 40, 5); !strings.HasPrefix(lines[0], "▸ Errors & warnings ↑3") || !strings.Contains(lines[1], "run-6") {
		t.Errorf("scrolled 3:\n%s", strings.Join(lines, "\n"))
	}
	for range 20 {
		e.Update(tea.MouseMsg{Button: tea.MouseButtonWheelDown})
	}
	e.Update(keyMsg("up"))
	if lines := sized(t, e, 40, 5); e.scroll != 5 || !strings.Contains(lines[1], "run-4") {
		t.Errorf("one up from the end: scroll %d\n%s", e.scroll, strings.Join(lines, "\n"))
	}
	for range 9 {
		e.Update(tea.MouseMsg{Button: tea.MouseButtonWheelUp})
	}
	if lines := sized(t, e, 40, 5); e.scroll != 0 || strings.Contains(lines[0], "↑") {
		t.Errorf("back at the top: scroll %d\n%s", e.scroll, strings.Join(lines, "\n"))
	}
	// Taller, every line fits: nothing to scroll, wherever it was.
	e.scroll = 8
	if lines := sized(t, e, 40, 12); strings.Contains(lines[0], "↑") || !strings.Contains(lines[1], "run-9") {
		t.Errorf("tall:\n%s", strings.Join(lines, "\n"))
	}
}
