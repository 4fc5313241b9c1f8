package evidence

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// List finds the campaigns under a parent folder, newest first, with their
// stages, reported p95s and verdict; it skips what is not evidence (files,
// links, other folders) and never follows a link.
func TestListCampaigns(t *testing.T) {
	parent := t.TempDir()
	// A finished campaign (both runs), an interrupted one (no summary).
	done := filepath.Join(parent, "a-done")
	w := interrupted(t, done)
	st1 := runOne(t, w, testPlan[0], time.Unix(1_800_000_010, 0))
	st2 := runOne(t, w, testPlan[1], time.Unix(1_800_000_020, 0))
	must(t, finish(t, w, st1, st2))
	must(t, os.WriteFile(filepath.Join(done, "report.html"), []byte("<html>"), 0o644))
	cut := filepath.Join(parent, "b-cut")
	interrupted(t, cut)
	must(t, os.Mkdir(filepath.Join(parent, "not-evidence"), 0o755))
	must(t, os.WriteFile(filepath.Join(parent, "file"), nil, 0o644))
	must(t, os.Symlink(done, filepath.Join(parent, "link")))
	ls, skipped, err := List(parent)
	must(t, err)
	if len(ls) != 2 || skipped != 3 {
		t.Fatalf("%d listed, %d skipped: %+v", len(ls), skipped, ls)
	}
	var d, c Listing
	for _, l := range ls {
		switch filepath.Base(l.Dir) {
		case "a-done":
			d = l
		case "b-cut":
			c = l
		}
	}
	if d.Verdict == "" || d.Status != "done" || len(d.Stages) != 2 || !d.Stages[0].Reported || d.Stages[0].P95Ms <= 0 || d.Report == "" || d.Runs != 2 {
		t.Errorf("finished campaign: %+v", d)
	}
	if c.Verdict != "" || len(c.Stages) != 2 || c.Stages[0].Reported || c.Report != "" {
		t.Errorf("interrupted campaign: %+v", c)
	}
	if _, _, err := List(filepath.Join(parent, "missing")); err == nil {
		t.Error("a missing parent is not an error")
	}
}
