package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
)

// unfinished writes the evidence folder of a campaign interrupted after
// its plan was recorded: a capacity search (search) or its stages.
func unfinished(t *testing.T, search bool) string {
	t.Helper()
	c := config.Article()
	y, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "c")
	w, err := evidence.Create(dir, y, evidence.Manifest{CampaignID: "c", Name: c.Name})
	if err != nil {
		t.Fatal(err)
	}
	plan := runner.Plan(&c)
	if search {
		plan = []event.PlannedRun{{ID: "01-p1-r1-100rps", Index: 1, Round: 1, TargetRPS: 100, Duration: c.Duration}}
		if err := w.SetSearch(runner.SearchSpec(&c)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SetPlan(plan); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestResumeFollowsTheFolder: `tokex run --resume` of a capacity campaign
// resumes its search (issue 13: it reran it as stages), and `tokex
// capacity --resume` of a staged campaign is refused rather than turned
// into a search.
func TestResumeFollowsTheFolder(t *testing.T) {
	o := &runOptions{resume: unfinished(t, true)}
	if err := o.load(); err != nil || !o.cost.search {
		t.Errorf("tokex run --resume of a capacity search: search %v, %v", o.cost.search, err)
	}
	o = &runOptions{resume: unfinished(t, false)}
	if err := o.load(); err != nil || o.cost.search {
		t.Errorf("tokex run --resume of stages: search %v, %v", o.cost.search, err)
	}
	o.cost.search = true // tokex capacity
	if err := o.load(); err == nil || !strings.Contains(err.Error(), "tokex run --resume") {
		t.Errorf("tokex capacity --resume of stages: %v", err)
	}
}
