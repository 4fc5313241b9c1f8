package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// ladderOf is a campaign of n runs, the first k finished, the next one
// under way.
func ladderOf(n, k int) []event.Event {
	var plan []event.PlannedRun
	for i := range n {
		plan = append(plan, event.PlannedRun{ID: fmt.Sprintf("%02d-r1-%drps", i, 10*(i+1)), Index: i, Round: 1, TargetRPS: float64(10 * (i + 1)), Duration: time.Second})
	}
	evs := []event.Event{event.CampaignStarted{At: t0, ID: "c", Runs: plan}}
	for i := 0; i <= k && i < n; i++ {
		evs = append(evs, event.RunStarted{At: t0, Run: plan[i]})
		if i < k {
			evs = append(evs, event.RunFinished{At: t0, RunID: plan[i].ID, Status: stats.StatusDone,
				Stats: &stats.Run{ID: plan[i].ID, Round: 1, TargetRPS: plan[i].TargetRPS, Status: stats.StatusDone, ThresholdsPassed: i != 1}})
		}
	}
	return evs
}

// The ladder marks each run (✓ passed, ✗ failed, ▶ under way, · pending),
// keeps the cursor's run in sight in a short pane, and marks the cursor
// only when focused.
func TestLadderDrawsTheRuns(t *testing.T) {
	l := newLadder(fed(ladderOf(20, 5)))
	lines := sized(t, l, 30, 6)
	for id, mark := range map[string]string{"00-r1-10rps": "✓", "01-r1-20rps": "✗", "02-r1-30rps": "✓"} {
		if r := row(lines, id); !strings.HasPrefix(r, " "+mark+" ") {
			t.Errorf("%s: %q, want %s", id, r, mark)
		}
	}
	if row(lines, "05-r1-60rps") != "" || !strings.HasPrefix(lines[0], "Ladder") {
		t.Errorf("rows beyond the pane, or no title:\n%s", strings.Join(lines, "\n"))
	}
	l.focused = true
	for range 12 {
		l.Update(keyMsg("down"))
	}
	lines = sized(t, l, 30, 6)
	if l.cursor != 12 || l.first() != 10 || !strings.HasPrefix(row(lines, "12-r1-130rps"), "›· ") || !strings.HasPrefix(lines[0], "▸ Ladder") {
		t.Errorf("cursor %d, first %d:\n%s", l.cursor, l.first(), strings.Join(lines, "\n"))
	}
	for range 30 {
		l.Update(keyMsg("down"))
	}
	if lines = sized(t, l, 30, 6); l.cursor != 19 || !strings.Contains(lines[5], "19-r1-200rps") {
		t.Errorf("past the end: cursor %d\n%s", l.cursor, strings.Join(lines, "\n"))
	}
}

// Enter shows the run under the cursor: a finished one as history, the
// live one as following it, a pending one not at all; a click on a row
// and the wheel do the same as the keys; f comes back to the live run.
func TestLadderSelects(t *testing.T) {
	com := fed(ladderOf(8, 3))
	l := newLadder(com)
	l.SetSize(30, 5) // 4 rows: runs 0-3 when the cursor is on 1
	l.cursor = 1
	l.Update(keyMsg("enter"))
	if com.selected == nil || com.selected.plan.ID != "01-r1-20rps" {
		t.Fatalf("selected %+v", com.selected)
	}
	if !strings.HasPrefix(row(strings.Split(l.View(), "\n"), "01-r1-20rps"), "»✗") {
		t.Errorf("no » on the selected run:\n%s", l.View())
	}
	l.Update(tea.MouseMsg{X: 3, Y: 4, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress}) // row 4: the live run
	if com.selected != nil || l.cursor != 3 {
		t.Errorf("a click on the live run: selected %v cursor %d", com.selected, l.cursor)
	}
	l.Update(tea.MouseMsg{X: 3, Y: 0, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress}) // the title
	l.Update(tea.MouseMsg{X: 3, Y: 2, Button: tea.MouseButtonLeft, Action: tea.MouseActionRelease})
	if com.selected != nil || l.cursor != 3 {
		t.Errorf("a click on the title or a release selected: %v cursor %d", com.selected, l.cursor)
	}
	l.Update(tea.MouseMsg{Button: tea.MouseButtonWheelDown})
	l.Update(keyMsg("enter")) // a pending run
	if com.selected != nil || l.cursor != 4 {
		t.Errorf("a pending run: selected %v cursor %d", com.selected, l.cursor)
	}
	l.show(0)
	l.Update(keyMsg("f"))
	if com.selected != nil || l.cursor != 3 {
		t.Errorf("f: selected %v cursor %d", com.selected, l.cursor)
	}
}

// A new run takes the cursor along, unless the user moved it to look at
// history.
func TestLadderFollowsNewRuns(t *testing.T) {
	all := ladderOf(6, 5)
	m := New(Options{Live: true})
	m.SetSize(120, 40)
	feed(m, all[:4]) // 00 finished, 01 under way
	if m.ladder.cursor != 1 {
		t.Fatalf("cursor %d on the live run's row 1", m.ladder.cursor)
	}
	feed(m, all[4:6]) // 01 finished, 02 started
	if m.ladder.cursor != 2 {
		t.Errorf("the cursor stayed on %d", m.ladder.cursor)
	}
	press(m, "up", "up", "enter") // showing 00
	feed(m, all[6:8])
	if m.ladder.cursor != 0 || m.com.selected.plan.ID != "00-r1-10rps" {
		t.Errorf("history lost: cursor %d selected %v", m.ladder.cursor, m.com.selected)
	}
}
