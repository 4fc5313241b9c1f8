package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/event"
)

// The agents pane lists the shown run's agents by number; when they do
// not fit it says how many more; a finished run selected shows its own.
func TestAgentsPanel(t *testing.T) {
	all := script(0)
	mid := midRun(all)
	com := fed(mid)
	if lines := sized(t, newAgentsPanel(com), 70, 5); strings.TrimSpace(lines[2]) != "no agent reports yet" {
		t.Errorf("the live run has no report yet:\n%s", strings.Join(lines, "\n"))
	}
	com.selected = com.camp.byID["01-r1-100rps"]
	lines := sized(t, newAgentsPanel(com), 70, 12)
	if !strings.HasPrefix(lines[2], "perf-agent-0") || !strings.HasPrefix(lines[11], "perf-agent-9") || !strings.Contains(lines[11], "100       100") {
		t.Errorf("history's agents:\n%s", strings.Join(lines, "\n"))
	}
	var evs []event.Event
	for a := 11; a >= 0; a-- {
		evs = append(evs, event.AgentStatus{At: t0, RunID: "02-r1-250rps", Agent: a, Name: fmt.Sprintf("a%d", a), State: "running"})
	}
	com = fed(append(mid, evs...))
	lines = sized(t, newAgentsPanel(com), 70, 6)
	if !strings.HasPrefix(lines[2], "a0 ") || !strings.HasPrefix(lines[4], "a2 ") || strings.TrimSpace(lines[5]) != "… 9 more" {
		t.Errorf("more than fit:\n%s", strings.Join(lines, "\n"))
	}
}
