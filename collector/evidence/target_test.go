package evidence

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// manifest.json names the target under test, which the campaign only knows
// once its driver started (the embedded server's port); it used to be
// always empty.
func TestManifestNamesTheTarget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	w, err := Create(dir, []byte("name: t\n"), Manifest{CampaignID: "c", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	const target = "https://127.0.0.1:40123/as/token.oauth2"
	w.Consume(event.CampaignStarted{At: time.Now(), ID: "c", Target: target})
	if err := NewRecorder(w, nil).Finish(&summary.Summary{Status: "done", Finished: time.Now()}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.Manifest.Target != target {
		t.Errorf("manifest target %q, want %q", f.Manifest.Target, target)
	}
	if s, err := f.Recompute(stats.Thresholds{}); err != nil || s.Target != target {
		t.Errorf("recomputed summary target %q (%v)", s.Target, err)
	}
}
