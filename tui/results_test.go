package tui

import (
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/event"
)

// The results: a hint until a run finishes, then a row per stage; once
// the campaign ended the verdict, and the runs whose figures are not the
// server's alone. As many lines as that: the chart layout sizes the
// bottom by them.
func TestResultsPanel(t *testing.T) {
	all := script(0)
	if lines := newResultsPanel(fed(all[:3])).lines(); len(lines) != 2 || lines[1] != "the table fills in as runs finish" {
		t.Errorf("before any run: %q", lines)
	}
	mid := newResultsPanel(fed(midRun(all)))
	mid.SetSize(120, 10)
	if lines := mid.lines(); len(lines) != 3 || !strings.HasPrefix(lines[2], "100/s") || strings.Contains(strings.Join(lines, " "), "thresholds") {
		t.Errorf("mid-run: %q", lines)
	}
	end := newResultsPanel(fed(all))
	lines := sized(t, end, 120, 10)
	if n := len(end.lines()); n != 7 {
		t.Errorf("final: %d lines", n)
	}
	for _, want := range []string{"500/s", "thresholds FAILED · 6,800 exchanges · 100.00% success · 12 dropped", "⚠ host_saturated in 1 run: not the server's figures alone"} {
		if row(lines, want) == "" {
			t.Errorf("final lacks %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	search := searchScript()
	if lines := sized(t, newResultsPanel(fed(search)), 120, 14); row(lines, "a probe per rate") == "" || row(lines, "capacity ≥ 338/s, < 350/s · 8,252 exchanges") == "" {
		t.Errorf("search:\n%s", strings.Join(lines, "\n"))
	}
	// One panel through the campaign: drawn again as runs finish, and at
	// the end.
	com := fed(midRun(all))
	p := newResultsPanel(com)
	p.SetSize(120, 10)
	before := len(p.lines())
	for _, e := range all[len(midRun(all)):] {
		com.camp.apply(e, nil)
	}
	if n := len(p.lines()); before != 3 || n != 7 {
		t.Errorf("%d lines mid-run, %d at the end", before, n)
	}
	var none []event.Event
	for _, e := range all {
		if _, ok := e.(event.CampaignFinished); !ok {
			none = append(none, e)
		}
	}
	if row(newResultsPanel(fed(none)).lines(), "thresholds") != "" {
		t.Error("a verdict before the campaign ended")
	}
}
