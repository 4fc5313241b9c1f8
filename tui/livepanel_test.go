package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
)

// Before the first run the panel is the pre-flight forecast; mid-run, over
// the charts, three lines: progress, what is wrong with the figures (or
// which run is on screen), the figures on one line.
func TestLivePanelStatus(t *testing.T) {
	all := script(0)
	if lines := sized(t, newLivePanel(fed(all[:2])), 90, 6); strings.TrimSpace(lines[0]) != "no run yet" ||
		!strings.Contains(strings.Join(lines, " "), "it cannot drive stage 500/s") {
		t.Errorf("pre-flight:\n%s", strings.Join(lines, "\n"))
	}
	com := fed(midRun(all))
	p := newLivePanel(com)
	lines := sized(t, p, 90, statusRows)
	if !strings.HasPrefix(lines[0], "02-r1-250rps measuring ") || !strings.Contains(lines[0], " 60% 6s/10s") ||
		!strings.Contains(lines[1], "target 250/s  achieved 250/s  in-flight 2  ·  success 100.00%") ||
		!strings.HasPrefix(lines[2], "host running the load: 1000 m busy of 2 cores") {
		t.Errorf("status:\n%s", strings.Join(lines, "\n"))
	}
	if bar := strings.Count(lines[0], "█") + strings.Count(lines[0], "░"); bar != 90-42 {
		t.Errorf("a bar of %d cells at 90 wide", bar)
	}
	com.selected = com.camp.byID["01-r1-100rps"]
	if lines = sized(t, p, 90, statusRows); !strings.HasPrefix(lines[1], "» showing 01-r1-100rps ✓ done") || !strings.Contains(lines[2], "target 100/s") {
		t.Errorf("history:\n%s", strings.Join(lines, "\n"))
	}
}

// A busy machine is said before the first run, over the estimate, and the
// wait for a quiet one as it goes (issue 27 item 2).
func TestLivePanelHostCheck(t *testing.T) {
	all := script(0)
	h := event.HostCheck{At: all[0].(event.Forecast).At, State: event.HostWaiting, CPUs: 2, OthersCores: 1.62, Sampled: 2 * time.Second,
		QuietBelow: 1, Waited: 7 * time.Second, WaitLimit: 10 * time.Minute}
	lines := sized(t, newLivePanel(fed([]event.Event{h, all[0], all[1]})), 90, 8)
	got := strings.Join(lines, " ")
	for _, want := range []string{"waiting for a quiet machine: other processes use 1.6 of 2 cores, quiet is below 1.0 (waited 7s of 10m0s)", "it cannot drive stage 500/s"} {
		if !strings.Contains(strings.Join(strings.Fields(got), " "), want) {
			t.Errorf("pre-flight lacks %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
}

// In the compact layout the panel is a sparkline per figure, the host's
// last; a capacity search's line after them.
func TestLivePanelCompact(t *testing.T) {
	p := newLivePanel(fed(midRun(script(0))))
	p.compact = true
	lines := sized(t, p, 48, 9)
	for i, prefix := range map[int]string{1: "target 250/s", 2: "success 100.00%", 3: "p95 ", 4: "engine ", 5: "gen. ", 6: "host "} {
		if !strings.HasPrefix(lines[i], prefix) {
			t.Errorf("line %d %q, want %q…", i, lines[i], prefix)
		}
	}
	s := newLivePanel(fed(searchAfter(searchScript(), 4)))
	s.compact = true
	lines = sized(t, s, 60, 9)
	if last := strings.TrimSpace(lines[6]); last != "✗ capacity ≥ 200/s, < 400/s · next 300/s" {
		t.Errorf("search line %q:\n%s", last, strings.Join(lines, "\n"))
	}
}
