package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// The fold keeps the charts of the last maxHistory runs, never letting the
// pinned one (on screen) go; nothing after the campaign's end counts.
func TestCampaignKeepsHistory(t *testing.T) {
	var plan []event.PlannedRun
	for i := range maxHistory + 6 {
		plan = append(plan, event.PlannedRun{ID: fmt.Sprintf("%03d", i), Index: i, Round: 1, TargetRPS: 1, Duration: time.Second})
	}
	c := newCampaign()
	c.apply(event.CampaignStarted{At: t0, ID: "c", Runs: plan}, nil)
	var pinned *runState
	for i, p := range plan {
		c.apply(event.RunStarted{At: t0, Run: p}, pinned)
		c.apply(event.RunFinished{At: t0, RunID: p.ID, Status: stats.StatusDone, Stats: &stats.Run{ID: p.ID, Status: stats.StatusDone}}, pinned)
		if i == 2 {
			pinned = c.byID[p.ID]
		}
	}
	if len(c.kept) != maxHistory || c.byID["002"].data == nil || c.byID["001"].data != nil || c.byID["003"].data != nil || c.byID["069"].data == nil {
		t.Errorf("kept %d; 001 %v, 002 %v, 003 %v", len(c.kept), c.byID["001"].data != nil, c.byID["002"].data != nil, c.byID["003"].data != nil)
	}
	if !c.apply(event.CampaignFinished{At: t0, Status: "done"}, nil) || c.apply(event.Log{At: t0.Add(time.Hour), Message: "late"}, nil) ||
		len(c.logs) != 0 || c.now.After(t0) {
		t.Error("an event after the end was folded in")
	}
}

// The fold's versions move with what they version: the panels redraw on
// them.
func TestCampaignVersions(t *testing.T) {
	all := script(0)
	c := newCampaign()
	var sum, host, cool int
	for _, e := range all {
		c.apply(e, nil)
		switch e.(type) {
		case event.RunFinished, event.CampaignFinished, event.Search:
			sum++
		case event.Host:
			host++
		case event.RunStarted:
			cool++
		}
	}
	c2 := newCampaign()
	c2.apply(all[1], nil)
	c2.apply(event.Log{At: t0, Source: event.CoolDownSource, Message: "cooling down"}, nil)
	if c.sumVer != sum || c.hostVer != host || c.coolVer != cool || c2.coolVer != 1 || c2.coolDown != "cooling down" {
		t.Errorf("versions %d/%d/%d, want %d/%d/%d; cool-down %d %q", c.sumVer, c.hostVer, c.coolVer, sum, host, cool, c2.coolVer, c2.coolDown)
	}
}
