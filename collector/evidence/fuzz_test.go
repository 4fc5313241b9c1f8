package evidence

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// The readers' fuzz targets: whatever a file holds, reading it returns
// values or an error, never a panic, never unbounded work. Seeds live in
// testdata/fuzz/<target>/ (real files tokex wrote, and the inputs of issue
// 9's defects).

// template writes a minimal valid folder once per fuzz target.
func template(f *testing.F) string {
	dir := filepath.Join(f.TempDir(), "c")
	w, err := Create(dir, nil, Manifest{CampaignID: "c", Started: time.Unix(1_800_000_000, 0)})
	if err != nil {
		f.Fatal(err)
	}
	if err := w.SetPlan(testPlan[:1]); err != nil {
		f.Fatal(err)
	}
	runOne(f, w, testPlan[0], time.Unix(1_800_000_000, 0))
	if err := w.Finish(&stats.Summary{CampaignID: "c", Status: "done"}); err != nil {
		f.Fatal(err)
	}
	return dir
}

// folderWith copies the template, then replaces files with data.
func folderWith(t *testing.T, tmpl string, files map[string][]byte) string {
	dir := filepath.Join(t.TempDir(), "c")
	if err := os.CopyFS(dir, os.DirFS(tmpl)); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readAll exercises every reader of an opened folder.
func readAll(t *testing.T, dir string) {
	f, err := Open(dir)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.EachEvent(func(Sequenced) error { return nil })
	if s, err := f.Summary(); err == nil {
		_ = s.Markdown()
		_, _, _ = s.LatencyTable().Text(), s.ScheduleTable().Text(), s.ResourceTable().Text()
	}
	for _, r := range f.Manifest.Runs {
		_, _ = f.RunStats(r.ID)
	}
	if s, err := f.Recompute(stats.Thresholds{P95Ms: 10, SuccessRatio: 0.5}); err == nil {
		_ = s.Markdown()
	}
}

func FuzzManifest(f *testing.F) {
	tmpl := template(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		readAll(t, folderWith(t, tmpl, map[string][]byte{ManifestFile: b}))
	})
}

func FuzzSummary(f *testing.F) {
	tmpl := template(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		readAll(t, folderWith(t, tmpl, map[string][]byte{SummaryJSON: b}))
	})
}

func FuzzRunStats(f *testing.F) {
	tmpl := template(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		readAll(t, folderWith(t, tmpl, map[string][]byte{filepath.Join(RunsDir, testPlan[0].ID, StatsFile): b}))
	})
}

func FuzzEvents(f *testing.F) {
	tmpl := template(f)
	f.Fuzz(func(t *testing.T, top, run []byte) {
		readAll(t, folderWith(t, tmpl, map[string][]byte{EventsFile: top, filepath.Join(RunsDir, testPlan[0].ID, EventsFile): run}))
	})
}

// FuzzRequests reads the CSV text of requests.csv.gz: every row accepted
// is written back identically, and the run's statistics can be computed.
func FuzzRequests(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		tally := stats.NewTally(stats.RunMeta{MeasuredEnd: time.Unix(1, 0)})
		_, _ = parseRequests("fuzz", bytes.NewReader(b), func(q *stats.Request) {
			tally.Add(q)
			line := string(AppendRequest(nil, q))
			back, err := ParseRequest(strings.TrimSuffix(line, "\n"))
			if err != nil || back != *q {
				if clean(exchange.SafeDetail(q.Detail)) == q.Detail && clean(string(q.Outcome)) == string(q.Outcome) {
					t.Fatalf("row %+v written as %q read back as %+v (%v)", *q, line, back, err)
				}
			}
		})
		_ = tally.Run(stats.RunMeta{ID: "r", Status: stats.StatusDone, MeasuredEnd: time.Unix(1, 0)}, nil, stats.Thresholds{})
	})
}

// FuzzRequestsFile reads requests.csv.gz as bytes on disk (gzip included).
func FuzzRequestsFile(f *testing.F) {
	tmpl := template(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		readAll(t, folderWith(t, tmpl, map[string][]byte{filepath.Join(RunsDir, testPlan[0].ID, RequestsFile): b}))
	})
}

func FuzzResources(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		res, _, err := parseSamples("fuzz", bytes.NewReader(b), ResourcesHeader, parseResource)
		if err != nil {
			return
		}
		meta := stats.RunMeta{ID: "r", Status: stats.StatusDone, MeasuredStart: time.Unix(1_800_000_000, 0), MeasuredEnd: time.Unix(1_800_000_010, 0)}
		tally := stats.NewTally(meta)
		tally.Add(&stats.Request{Phase: stats.Measured, Outcome: "ok", Status: 200, DurationUS: 1})
		_ = tally.Run(meta, res, stats.Thresholds{})
	})
}
