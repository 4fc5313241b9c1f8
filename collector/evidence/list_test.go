package evidence

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// List finds the campaigns under a parent folder, newest first, with their
// stages, reported p95s and verdict; it skips what is not evidence (files,
// links, other folders) and never follows a link.
func TestListCampaigns(t *testing.T) {
	parent := t.TempDir()
	// A finished campaign (both runs), an interrupted one (no summary).
	done := filepath.Join(parent, "a-done")
	interrupted(t, done)
	rec := resumed(t, done)
	st1 := runOne(t, rec, testPlan[0], time.Unix(1_800_000_010, 0))
	st2 := runOne(t, rec, testPlan[1], time.Unix(1_800_000_020, 0))
	must(t, finish(t, rec, st1, st2))
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

// TestListBoundsEveryString is issue 25 item 1: List kept each campaign's
// name, reason, status and driver whole (100 folders of a 15 MiB name took
// `tokex ls --no-tui` past 4 GB), and the table padded every row to the
// longest. Every string is cut as it is read, and so is every table cell.
func TestListBoundsEveryString(t *testing.T) {
	parent := t.TempDir()
	for _, src := range hostileListingKinds(t, filepath.Join(t.TempDir(), "src"), 1<<20) {
		dst := filepath.Join(parent, filepath.Base(src))
		must(t, os.Mkdir(dst, 0o755))
		for _, f := range []string{ManifestFile, SummaryJSON} {
			must(t, os.Link(filepath.Join(src, f), filepath.Join(dst, f)))
		}
	}
	ls, skipped, err := List(parent)
	must(t, err)
	if len(ls) != 5 || skipped != 0 {
		t.Fatalf("%d listed, %d skipped", len(ls), skipped)
	}
	runes := utf8.RuneCountInString
	for _, l := range ls {
		kind := filepath.Base(l.Dir)
		if runes(l.Name) > ListNameMax+1 || runes(l.Status) > ListWordMax+1 || runes(l.Driver) > ListWordMax+1 ||
			runes(l.Reason) > ListReasonMax+1 || runes(l.SummaryErr) > ListReasonMax+1 || len(l.Stages) > MaxListedStages {
			t.Errorf("%s: name %d, status %d, driver %d, reason %d, summary error %d characters, %d stages", kind,
				runes(l.Name), runes(l.Status), runes(l.Driver), runes(l.Reason), runes(l.SummaryErr), len(l.Stages))
		}
		if l.Verdict != "passed" || l.SummaryErr != "" {
			t.Errorf("%s: verdict %q (%s)", kind, l.Verdict, l.SummaryErr)
		}
		want := map[string]string{"name": l.Name, "reason": l.Reason, "status": l.Status + l.Driver}[kind]
		if want != "" && (!strings.HasPrefix(want, "\x1b]0;pwned\x07\x1b[2JAAAA") || !strings.HasSuffix(want, "…")) {
			t.Errorf("%s: %q is not the start of the string, cut", kind, want)
		}
	}
	for _, l := range ls {
		if filepath.Base(l.Dir) == "runs" && (l.Runs != stats.MaxRuns || !l.MoreStages || len(l.Stages) != MaxListedStages) {
			t.Errorf("runs: %d runs, %d stages, more %v", l.Runs, len(l.Stages), l.MoreStages)
		}
	}
	for i, line := range strings.Split(ListTable(ls).Text(), "\n") {
		if n := runes(line); n > 400 {
			t.Errorf("table line %d: %d characters", i, n)
		}
	}
}

// TestListNeverHoldsALongString: reading a folder whose manifest holds an
// 8 MiB name and whose summary a 16 MiB one allocates a small part of
// either (the old reader read both files whole and kept the name).
func TestListNeverHoldsALongString(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "c")
	must(t, os.Mkdir(dir, 0o755))
	name := strings.Repeat("n", 8<<20)
	writeJSON(t, filepath.Join(dir, ManifestFile), Manifest{CampaignID: "c", Name: name, Status: "done",
		Runs: []RunEntry{{ID: "01-r1-10rps", Plan: event.PlannedRun{TargetRPS: 10}, Status: "done"}}})
	writeJSON(t, filepath.Join(dir, SummaryJSON), summary.Summary{CampaignID: "c", Name: name + name, ThresholdsPassed: true})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ls, skipped, err := List(parent)
	runtime.ReadMemStats(&after)
	must(t, err)
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("listing allocated %d bytes", got)
	if got > 2<<20 {
		t.Errorf("listing allocated %d bytes for an 8 MiB name", got)
	}
	if len(ls) != 1 || ls[0].Verdict != "passed" || ls[0].Name != strings.Repeat("n", ListNameMax)+"…" {
		t.Errorf("%d listed (%d skipped)", len(ls), skipped)
	}
}
