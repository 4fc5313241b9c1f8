package tui

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
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

// The live summary leaves a search's broken probes out of the cost fit,
// as the final one does: the search is known before it is built.
func TestCampaignLiveCostLeavesOutTheCeiling(t *testing.T) {
	res := curve.Result{Status: curve.StatusFound, Capacity: 40, Upper: 80}
	var plan []event.PlannedRun
	var runs []*stats.Run
	for i, rate := range []float64{20, 40, 80} {
		p := curve.Probe{Rate: rate, Verdict: curve.Pass}
		for round := 1; round <= 2; round++ {
			id := fmt.Sprintf("%02d-r%d", 2*i+round, round)
			served, cores := rate, 0.02+0.02*rate*(1+0.001*float64(round))
			if rate == 80 {
				p.Verdict, served, cores = curve.Broken, 40, 1
			}
			p.Rounds = append(p.Rounds, curve.Round{RunID: id})
			plan = append(plan, event.PlannedRun{ID: id, Index: 2*i + round, Round: round, TargetRPS: rate, Duration: 10 * time.Second})
			runs = append(runs, &stats.Run{ID: id, Index: 2*i + round, Round: round, TargetRPS: rate, Status: stats.StatusDone,
				Requests: int64(served * 10), OK: int64(served * 10), MeasuredSeconds: 10,
				EngineCPU: &stats.CPU{AvgCores: cores, CPUMsPerExchange: cores * 1000 / served, Exchanges: int64(served * 10)}})
		}
		res.Probes = append(res.Probes, p)
	}
	c := newCampaign()
	c.apply(event.CampaignStarted{At: t0, ID: "c", Runs: plan}, nil)
	for i, p := range plan {
		c.apply(event.RunStarted{At: t0, Run: p}, nil)
		c.apply(event.RunFinished{At: t0, RunID: p.ID, Status: stats.StatusDone, Stats: runs[i]}, nil)
	}
	c.apply(event.Search{At: t0, Result: res}, nil)
	if cost := c.summary.Cost; cost == nil || len(cost.LeftOut) != 2 || !cost.Fit.OK() || math.Abs(cost.Fit.MarginalCPUMs-20) > 0.1 {
		t.Fatalf("live cost %+v", cost)
	}
}
