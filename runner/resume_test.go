package runner

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/summary"
)

// LoadResume reads an unfinished campaign's plan and id back, and refuses
// a finished one.
func TestLoadResume(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	w, err := evidence.Create(dir, []byte("name: resumed\nstages: [7]\nagents:\n  client_secret: '[redacted]'\n"),
		evidence.Manifest{CampaignID: "c-1", Name: "resumed", Started: time.Unix(1_800_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetPlan([]event.PlannedRun{{ID: "01-r1-7rps", Round: 1, TargetRPS: 7, Duration: time.Second, Agents: 1}}); err != nil {
		t.Fatal(err)
	}
	r, err := LoadResume(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "c-1" || r.Cfg.Name != "resumed" || len(r.Cfg.Stages) != 1 || r.Cfg.Stages[0] != 7 || r.Cfg.Agents.ClientSecret != "" || len(r.Done) != 0 {
		t.Errorf("resumed %+v (stages %v)", r, r.Cfg.Stages)
	}
	if err := evidence.NewRecorder(w, nil).Finish(&summary.Summary{CampaignID: "c-1", Status: "done"}); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadResume(dir); err == nil || !strings.Contains(err.Error(), "the campaign already finished") {
		t.Errorf("a finished campaign: %v", err)
	}
}
