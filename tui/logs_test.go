package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/event"
)

// The logs pane shows the newest lines that fit under its title, each cut
// to the width; the campaign keeps the last 500.
func TestLogsPanel(t *testing.T) {
	if lines := sized(t, newLogsPanel(fed(nil)), 60, 4); strings.TrimSpace(lines[1]) != "no log lines yet" {
		t.Errorf("empty: %q", lines)
	}
	var evs []event.Event
	for i := range 600 {
		evs = append(evs, event.Log{At: t0, Source: "agent", Level: []string{"info", "warn", "error"}[i%3], Message: fmt.Sprintf("line %d %s", i, strings.Repeat("x", 80))})
	}
	com := fed(evs)
	if n := len(com.camp.logs); n != maxLogs {
		t.Errorf("%d log lines kept", n)
	}
	lines := sized(t, newLogsPanel(com), 60, 5)
	if !strings.HasPrefix(lines[0], "Logs") || !strings.HasPrefix(lines[1], "12:00:00 agent  line 596 ") || !strings.HasPrefix(lines[4], "12:00:00 agent  line 599 ") ||
		!strings.HasSuffix(lines[4], "…") {
		t.Errorf("logs:\n%s", strings.Join(lines, "\n"))
	}
}
