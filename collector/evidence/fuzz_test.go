package evidence

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
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
	rec := NewRecorder(w, nil)
	runOne(f, rec, testPlan[0], time.Unix(1_800_000_000, 0))
	if err := rec.Finish(&summary.Summary{CampaignID: "c", Status: "done"}); err != nil {
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

// readAll exercises every reader of an opened folder, and the listing.
func readAll(t *testing.T, dir string) {
	checkListing(t, dir)
	f, err := Open(dir)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.EachEvent(func(Sequenced) error { return nil })
	if s, err := f.Summary(); err == nil {
		renderAll(t, s)
	}
	for _, r := range f.Manifest.Runs {
		_, _ = f.RunStats(r.ID)
	}
	if s, err := f.Recompute(stats.Thresholds{P95Ms: 10, SuccessRatio: 0.5}); err == nil {
		renderAll(t, s)
	}
}

// renderAll renders the summary's document in every medium.
func renderAll(t *testing.T, s *summary.Summary) {
	d := doc.Campaign(s, &doc.Page{})
	_, _ = d.Markdown(), d.Text()
	if err := d.HTML(io.Discard); err != nil {
		t.Fatal(err)
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
		_ = tally.Run(stats.RunMeta{ID: "r", Status: stats.StatusDone, MeasuredEnd: time.Unix(1, 0)}, stats.Thresholds{})
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
		_ = stats.ComputeRun(meta, []stats.Request{{Phase: stats.Measured, Outcome: "ok", Status: 200, DurationUS: 1}}, res, stats.Thresholds{})
	})
}

// checkListing lists dir's parent, and checks that the folder is listed
// as listFolder reads it whole, if Open can open it.
func checkListing(t *testing.T, dir string) {
	if ls, _, err := List(filepath.Dir(dir)); err == nil {
		_ = ListTable(ls).Text()
	}
	l, lerr := listOne(dir)
	f, err := Open(dir)
	if err != nil {
		return
	}
	defer f.Close()
	if lerr != nil {
		t.Fatalf("opened, not listed: %v", lerr)
	}
	if want := listFolder(f); !reflect.DeepEqual(manifestPart(l, want), want) {
		t.Fatalf("listed\n%+v\nread whole\n%+v", l, want)
	}
}

// listFolder is what List showed of a folder before it streamed (Open and
// Summary, which read the files whole), with the listing's cuts: the
// streaming reader must list the same.
func listFolder(f *Folder) Listing {
	m := f.Manifest
	l := Listing{Dir: f.Dir, ID: m.CampaignID, Name: cutText(m.Name, ListNameMax), Driver: cutText(m.Driver, ListWordMax),
		Status: cutText(string(m.Status), ListWordMax), Reason: cutText(m.Reason, ListReasonMax), Started: m.Started}
	for _, r := range m.Runs {
		if r.Plan.Sanity {
			continue
		}
		l.Runs++
		if r.Status == "done" {
			l.Done++
		}
		switch {
		case slices.ContainsFunc(l.Stages, func(s ListedStage) bool { return s.TargetRPS == r.Plan.TargetRPS }):
		case len(l.Stages) < MaxListedStages:
			l.Stages = append(l.Stages, ListedStage{TargetRPS: r.Plan.TargetRPS})
		default:
			l.MoreStages = true
		}
	}
	if s, err := f.Summary(); err == nil {
		l.Verdict = "failed"
		if s.ThresholdsPassed {
			l.Verdict = "passed"
		}
		for _, st := range s.Stages {
			i := slices.IndexFunc(l.Stages, func(x ListedStage) bool { return x.TargetRPS == st.TargetRPS })
			if i < 0 {
				continue
			}
			if rep := st.Reported(); rep != nil && rep.Requests > 0 {
				l.Stages[i].P95Ms, l.Stages[i].Reported = rep.LatencyMs.P95, true
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		l.SummaryErr = "?" // see manifestPart
		for i := range l.Stages {
			l.Stages[i] = ListedStage{TargetRPS: l.Stages[i].TargetRPS}
		}
	}
	if fi, err := os.Lstat(filepath.Join(f.Dir, "report.html")); err == nil && fi.Mode().IsRegular() {
		l.Report = filepath.Join(f.Dir, "report.html")
	}
	return l
}

// manifestPart is l as listFolder words a summary that could not be read
// whole: the streaming reader decodes only the fields it shows, so it may
// show a verdict where Summary refuses a field it does not read.
func manifestPart(l, whole Listing) Listing {
	if whole.SummaryErr == "" {
		return l
	}
	l.Verdict, l.SummaryErr = "", "?"
	l.Stages = slices.Clone(l.Stages)
	for i := range l.Stages {
		l.Stages[i] = ListedStage{TargetRPS: l.Stages[i].TargetRPS}
	}
	return l
}

// FuzzListing: whatever manifest.json and summary.json hold, List shows
// what reading them whole shows, cut to its bounds (listFolder), or skips a
// folder that Open refuses.
func FuzzListing(f *testing.F) {
	tmpl := template(f)
	m, _ := os.ReadFile(filepath.Join(tmpl, ManifestFile))
	s, _ := os.ReadFile(filepath.Join(tmpl, SummaryJSON))
	f.Add(m, s)
	f.Add(m, []byte(`{"thresholds_passed":true,"stages":[null,{"target_rps":10,"reported_run":"01-r1-10rps","runs":[null,{"id":"01-r1-10rps","requests":3,"latency_ms":{"p95":2.5}}]}]}`))
	f.Add([]byte(`{"campaign_id":"c","name":"\u001b]0;x\u0007`+strings.Repeat("n", 2000)+`","runs":[{"id":"a","plan":{"target_rps":1}},{"id":"b","plan":{"sanity":true}}]}`), []byte(`{"totals":"x"}`))
	f.Fuzz(func(t *testing.T, manifest, summary []byte) {
		dir := filepath.Join(t.TempDir(), "c")
		must(t, os.Mkdir(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, ManifestFile), manifest, 0o644))
		must(t, os.WriteFile(filepath.Join(dir, SummaryJSON), summary, 0o644))
		checkListing(t, dir)
	})
}
