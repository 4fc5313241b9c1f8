package k6import

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/runner/replay"
)

func fixturePath(t *testing.T, name string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for ; dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
	}
	p := filepath.Join(dir, "testdata", "k6", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return p
}

func copyFile(t *testing.T, src, dst string, extra string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	_, _ = out.WriteString(extra)
	out.Close()
}

func TestImportRealK6Results(t *testing.T) {
	src := t.TempDir()
	run := filepath.Join(src, "run-500")
	_ = os.Mkdir(run, 0o755)
	// The NDJSON fixture is the first 2000 lines of the run whose log is the
	// pod-quiet fixture: the summary must disagree with the points.
	copyFile(t, fixturePath(t, "gen-k6v2.2.0-out.ndjson"), filepath.Join(run, "agent-0.ndjson"), "{broken line\n")
	copyFile(t, fixturePath(t, "gen-k6v2.2.0-pod-quiet.log"), filepath.Join(run, "agent-0.log"), "")
	csv := filepath.Join(src, "monitor.csv")
	_ = os.WriteFile(csv, []byte("timestamp,kind,name,cpu,memory\n"+
		"2026-11-30T14:36:02Z,pod,pf-engine-0,1250m,1500Mi\n2026-11-30T14:36:03Z,pod,pf-engine-0,1.3,1500Mi\n"+
		"2026-11-30T14:36:03Z,node,ip-10-0-0-1,2100m,9Gi\nnot,a,line\n"), 0o644)
	res, err := Import(Options{Dir: src, Out: t.TempDir(), Resources: csv, Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}, Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var ws []string
	for _, w := range res.Warnings {
		ws = append(ws, w.String())
	}
	all := strings.Join(ws, "\n")
	for _, want := range []string{
		"incomplete evidence: agent-0.ndjson: the k6 summary counts 215 requests, the points hold 117",
		"1 malformed line(s) skipped",
		"monitor.csv: 1 malformed line(s) skipped",
		"inferred",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if len(res.Summary.Stages) != 1 || len(res.Summary.Stages[0].Runs) != 1 {
		t.Fatalf("summary %+v", res.Summary)
	}
	r := res.Summary.Stages[0].Runs[0]
	if r.Requests+r.WarmupRequests != 117 {
		t.Errorf("requests %d + warmup %d, want 117 points", r.Requests, r.WarmupRequests)
	}
	if r.Errors["http_error:503"] == 0 && len(r.Errors) == 0 {
		t.Errorf("no errors read from the points: %+v", r.Errors)
	}
	if r.EngineCPU == nil && r.MeasuredEnd.After(r.MeasuredStart) {
		t.Log("no engine samples inside the measured window (the CSV covers 2 s)")
	}
	// The folder works with replay and recomputes to the same figures.
	f, err := evidence.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replay.Load(res.Dir); err != nil {
		t.Fatal(err)
	}
	again, err := f.Recompute(stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99})
	if err != nil {
		t.Fatal(err)
	}
	if again.Stages[0].Runs[0].LatencyMs != r.LatencyMs {
		t.Errorf("recomputed %+v vs %+v", again.Stages[0].Runs[0].LatencyMs, r.LatencyMs)
	}
}

func TestImportRefusesNothingUsable(t *testing.T) {
	d := t.TempDir()
	_ = os.WriteFile(filepath.Join(d, "a.ndjson"), []byte("garbage\n{\"type\":\"Point\"}\n"), 0o644)
	if _, err := Import(Options{Dir: d, Out: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "nothing usable") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Import(Options{Dir: t.TempDir(), Out: t.TempDir()}); err == nil {
		t.Fatal("imported an empty folder")
	}
}

func TestMonitorQuantities(t *testing.T) {
	cases := []struct {
		cpu  string
		want float64
	}{{"250m", 250}, {"1.5", 1500}, {"2500000n", 2.5}, {"800u", 0.8}}
	for _, c := range cases {
		if got, err := parseCPU(c.cpu); err != nil || got != c.want {
			t.Errorf("parseCPU(%q) = %v %v", c.cpu, got, err)
		}
	}
	for in, want := range map[string]int64{"64Mi": 64 << 20, "1Gi": 1 << 30, "500K": 500000, "123": 123} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %v %v", in, got, err)
		}
	}
}

func FuzzReadMonitorCSV(f *testing.F) {
	f.Add("timestamp,kind,name,cpu,memory\n2026-11-30T14:36:02Z,pod,pf-engine-0,1250m,1500Mi\n")
	f.Add("1796049361.5,node,n,2,9Gi\n,,,,\n")
	f.Fuzz(func(t *testing.T, s string) {
		out, bad, err := ReadMonitorCSV(strings.NewReader(s))
		if err == nil && len(out) == 0 && bad > 0 {
			t.Fatal("only bad lines but no error")
		}
	})
}

// importRun imports one run folder made of fixtures (fixture name → file
// name in the folder) and returns its run and its warnings.
func importRun(t *testing.T, files map[string]string) (*stats.Run, string) {
	t.Helper()
	src := t.TempDir()
	for fx, name := range files {
		copyFile(t, fixturePath(t, fx), filepath.Join(src, name), "")
	}
	res, err := Import(Options{Dir: src, Out: t.TempDir(), Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}, Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var ws []string
	for _, w := range res.Warnings {
		ws = append(ws, w.String())
	}
	return res.Summary.Stages[0].Runs[0], strings.Join(ws, "\n")
}

// TestImportTokexScriptUnderRealK6 imports the agent script's real k6
// v2.2.0 output with drops: the summary (201 requests: 161 measured, 40
// warmup; 300 dropped: 240 measured, 60 warmup) agrees with the points.
func TestImportTokexScriptUnderRealK6(t *testing.T) {
	r, ws := importRun(t, map[string]string{
		"tokex-script-k6v2.2.0-drops-agent-0.ndjson.gz": "agent-0.ndjson.gz",
		"tokex-script-k6v2.2.0-drops-agent-0.log":       "agent-0.log",
	})
	if r.Requests != 161 || r.WarmupRequests != 40 || r.Dropped != 240 || r.WarmupDropped != 60 {
		t.Errorf("requests %d warmup %d dropped %d warmup dropped %d", r.Requests, r.WarmupRequests, r.Dropped, r.WarmupDropped)
	}
	if strings.Contains(ws, "incomplete") {
		t.Errorf("warnings:\n%s", ws)
	}
}

// TestImportSummaryFormats pairs the same points with summaries in every
// machine-readable format: each is read (its counts are compared), none is
// refused or taken as an empty summary.
func TestImportSummaryFormats(t *testing.T) {
	for fx, want := range map[string]string{
		// metrics.http_reqs.values.count = 3
		"k6repo-summary_test-handlesummary-raw-data.json": "the k6 summary counts 3 requests, the points hold 201",
		// results.metrics[http_reqs].values.count = 1500
		"k6summary-example-summary-v1-basic.json": "the k6 summary counts 1500 requests, the points hold 201",
		// metrics.http_reqs.count = 215
		"gen-k6v2.2.0-summary-export-legacy.json": "the k6 summary counts 215 requests, the points hold 201",
	} {
		_, ws := importRun(t, map[string]string{"tokex-script-k6v2.2.0-drops-agent-0.ndjson.gz": "agent-0.ndjson.gz", fx: "agent-0.json"})
		if !strings.Contains(ws, want) {
			t.Errorf("%s: warnings lack %q:\n%s", fx, want, ws)
		}
	}
}

// TestImportCSV imports k6's --out csv. Expected from Python's csv module
// over the fixture: 118 http_req_duration rows, 92 dropped_iterations rows
// (each value 1), timestamps whole seconds.
func TestImportCSV(t *testing.T) {
	r, ws := importRun(t, map[string]string{"gen-k6v2.2.0-out.csv": "agent-0.csv", "gen-k6v2.2.0-pod-quiet.log": "agent-0.log"})
	if r.Requests+r.WarmupRequests != 118 || r.Dropped+r.WarmupDropped != 92 {
		t.Errorf("requests %d+%d dropped %d+%d", r.Requests, r.WarmupRequests, r.Dropped, r.WarmupDropped)
	}
	for _, want := range []string{
		"the k6 summary counts 215 requests, the points hold 118", // the fixture is the file's first 2000 lines
		"agent-0.csv: k6 wrote whole-second timestamps",
	} {
		if !strings.Contains(ws, want) {
			t.Errorf("warnings lack %q:\n%s", want, ws)
		}
	}
}

// point is one k6 --out json line.
func point(metric, at string, value string, tags string) string {
	return `{"metric":"` + metric + `","type":"Point","data":{"time":"` + at + `","value":` + value + `,"tags":{` + tags + `}}}` + "\n"
}

const okTags = `"status":"200","expected_response":"true","scenario":"measured"`

// goodPoints is a small usable run: 20 exchanges over two seconds.
func goodPoints() string {
	var b strings.Builder
	for i := 0; i < 20; i++ {
		b.WriteString(point("http_req_duration", fmt.Sprintf("2026-11-30T14:36:%02d.%03dZ", 1+i/10, (i%10)*100), "4.5", okTags))
	}
	return b.String()
}

// folderNames lists what an import left in out, hidden entries included.
func folderNames(t *testing.T, out string) []string {
	t.Helper()
	ents, _ := os.ReadDir(out)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestImportDroppedIterationsAreCounts is issue 9 item 11: a 228-byte file
// with a dropped_iterations point of value 1e12 grew to 3 GB in 8 s (a row
// per dropped iteration). One row carries the count; figures stay exact.
func TestImportDroppedIterationsAreCounts(t *testing.T) {
	src, out := t.TempDir(), t.TempDir()
	data := goodPoints() + point("dropped_iterations", "2026-11-30T14:36:01.5Z", "1e12", `"scenario":"measured"`) +
		point("dropped_iterations", "2026-11-30T14:36:01.6Z", "3", `"scenario":"measured"`)
	_ = os.WriteFile(filepath.Join(src, "agent-0.ndjson"), []byte(data), 0o644)
	res, err := Import(Options{Dir: src, Out: out, Rate: 10, Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Summary.Stages[0].Runs[0]
	if r.Dropped != 1_000_000_000_003 || r.Requests != 20 {
		t.Fatalf("dropped %d requests %d", r.Dropped, r.Requests)
	}
	// The folder holds the same exact figure, in two rows.
	f, err := evidence.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var rows, dropped int64
	if _, err := f.Requests(r.ID, func(q *stats.Request) {
		rows++
		if q.Dropped() {
			dropped += q.Arrivals()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if rows != 22 || dropped != 1_000_000_000_003 {
		t.Errorf("requests.csv.gz: %d rows, %d dropped", rows, dropped)
	}
	again, err := f.Recompute(stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99})
	if err != nil || again.Stages[0].Runs[0].Dropped != r.Dropped {
		t.Errorf("recomputed: %v", err)
	}
}

// TestImportBadLinesAreCountedNeverFatal is issue 9 item 16: one line over
// 16 MiB, a time outside years 0–9999 or a NaN CPU value aborted the
// import, twice after creating a partial folder.
func TestImportBadLinesAreCountedNeverFatal(t *testing.T) {
	long := `{"metric":"http_req_duration","type":"Point","data":{"time":"2026-11-30T14:36:01Z","value":1,"tags":{"x":"` + strings.Repeat("a", 17<<20) + `"}}}` + "\n"
	cases := []struct {
		name      string
		points    string
		resources string
		warning   string
	}{
		{"a line over 16 MiB", long, "", "1 malformed line(s) skipped"},
		{"year 0", point("http_req_duration", "0000-01-01T00:00:00.001Z", "5", okTags), "", "1 of them points with impossible values"},
		{"scheduled before year 1", point("http_req_duration", "0001-01-01T12:00:00Z", "86400000", okTags), "", "points with impossible values"},
		{"endless duration", point("http_req_duration", "2026-11-30T14:36:01Z", "1e300", okTags), "", "points with impossible values"},
		{"negative duration", point("http_req_duration", "2026-11-30T14:36:01Z", "-5", okTags), "", "points with impossible values"},
		{"dropped not a count", point("dropped_iterations", "2026-11-30T14:36:01Z", "2.5", okTags), "", "points with impossible values"},
		{"NaN CPU", "", "timestamp,kind,name,cpu,memory\n2026-11-30T14:36:01Z,pod,e,NaN,1Mi\n2026-11-30T14:36:02Z,pod,e,250m,1Mi\n", "1 malformed line(s) skipped"},
		{"Inf memory and year 10000", "", "2026-11-30T14:36:01Z,pod,e,1,Inf\n253402300800,pod,e,1,1Mi\n2026-11-30T14:36:02Z,pod,e,-1,1Mi\n2026-11-30T14:36:02Z,pod,e,1,1Mi\n", "3 malformed line(s) skipped"},
		{"CSV line over 64 KiB", "", strings.Repeat("x", 70<<10) + "\n2026-11-30T14:36:02Z,pod,e,1,1Mi\n", "1 malformed line(s) skipped"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
			_ = os.WriteFile(filepath.Join(src, "agent-0.ndjson"), []byte(goodPoints()+c.points), 0o644)
			opt := Options{Dir: src, Out: out, Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}}
			if c.resources != "" {
				opt.Resources = filepath.Join(t.TempDir(), "monitor.csv")
				_ = os.WriteFile(opt.Resources, []byte(c.resources), 0o644)
			}
			res, err := Import(opt)
			if err != nil {
				t.Fatalf("import failed: %v (left %v)", err, folderNames(t, out))
			}
			if !strings.Contains(fmt.Sprint(res.Warnings), c.warning) {
				t.Errorf("warnings lack %q: %v", c.warning, res.Warnings)
			}
			if r := res.Summary.Stages[0].Runs[0]; r.Requests != 20 {
				t.Errorf("%d requests imported, want the 20 good ones", r.Requests)
			}
			if names := folderNames(t, out); len(names) != 1 || names[0] != filepath.Base(res.Dir) {
				t.Errorf("out holds %v", names)
			}
			if _, err := replay.Load(res.Dir); err != nil {
				t.Errorf("replay: %v", err)
			}
		})
	}
}

// TestImportNeverLeavesAPartialFolder: whatever stops an import, the
// evidence parent holds no folder of it afterwards; a link or a FIFO among
// the results is skipped (never followed, never opened).
func TestImportNeverLeavesAPartialFolder(t *testing.T) {
	cases := map[string]func(src, out string){
		"nothing usable": func(src, out string) {
			_ = os.WriteFile(filepath.Join(src, "a.ndjson"), []byte("garbage\n"), 0o644)
		},
		"a points file that is a FIFO": func(src, out string) {
			_ = syscall.Mkfifo(filepath.Join(src, "agent-1.ndjson"), 0o644)
			_ = os.WriteFile(filepath.Join(src, "agent-0.ndjson"), []byte("garbage\n"), 0o644)
		},
		"a link to a file outside": func(src, out string) {
			outside := filepath.Join(filepath.Dir(src), "secret.ndjson")
			_ = os.WriteFile(outside, []byte(goodPoints()), 0o644)
			_ = os.Symlink(outside, filepath.Join(src, "agent-0.ndjson"))
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			src, out := t.TempDir(), t.TempDir()
			setup(src, out)
			done := make(chan struct{})
			var res *Result
			var err error
			go func() { defer close(done); res, err = Import(Options{Dir: src, Out: out}) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("import blocked on a FIFO")
			}
			names := folderNames(t, out)
			if err == nil {
				t.Fatalf("imported %s from a folder with nothing usable in it (out holds %v)", res.Dir, names)
			}
			if len(names) > 0 {
				t.Errorf("a failed import (%v) left %v", err, names)
			}
		})
	}
}

// FuzzImport imports a folder of one arbitrary points file and one
// arbitrary k6 log: an evidence folder or an error, never a panic, and
// never a folder left behind by a failed import.
func FuzzImport(f *testing.F) {
	f.Fuzz(func(t *testing.T, points, log []byte) {
		src, out := t.TempDir(), t.TempDir()
		_ = os.WriteFile(filepath.Join(src, "agent-0.ndjson"), points, 0o644)
		_ = os.WriteFile(filepath.Join(src, "agent-0.log"), log, 0o644)
		res, err := Import(Options{Dir: src, Out: out, Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}})
		names := folderNames(t, out)
		if err != nil {
			if len(names) > 0 {
				t.Fatalf("a failed import (%v) left %v", err, names)
			}
			return
		}
		if _, err := evidence.Open(res.Dir); err != nil {
			t.Fatalf("the imported folder does not open: %v", err)
		}
	})
}

// eventKinds lists the kinds in one events.jsonl, in order.
func eventKinds(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct{ Kind string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

// An import is recorded as a campaign is (the evidence recorder): each
// run's events start with its run_started, the campaign's file holds the
// start, each run's end and the campaign's end; the manifest's status and
// end are the summary's.
func TestImportRecordsLikeACampaign(t *testing.T) {
	src := t.TempDir()
	for _, run := range []string{"a", "b"} {
		_ = os.Mkdir(filepath.Join(src, run), 0o755)
		copyFile(t, fixturePath(t, "tokex2-k6v2.2.0-wrong-ca-agent-0.ndjson.gz"), filepath.Join(src, run, "agent-0.ndjson.gz"), "")
		copyFile(t, fixturePath(t, "tokex2-k6v2.2.0-wrong-ca-agent-0.log"), filepath.Join(src, run, "agent-0.log"), "")
	}
	res, err := Import(Options{Dir: src, Out: t.TempDir(), Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}, Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	top := strings.Join(eventKinds(t, filepath.Join(res.Dir, evidence.EventsFile)), ",")
	if top != "campaign_started,run_finished,run_finished,campaign_finished" {
		t.Errorf("events.jsonl: %s", top)
	}
	f, err := evidence.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	m := f.Manifest
	if m.Status != summary.CampaignDone || m.Reason != "" || !m.Finished.Equal(res.Summary.Finished) || len(m.Runs) != 2 {
		t.Fatalf("manifest %q %q %v, %d runs", m.Status, m.Reason, m.Finished, len(m.Runs))
	}
	for _, r := range m.Runs {
		kinds := eventKinds(t, filepath.Join(res.Dir, evidence.RunsDir, r.ID, evidence.EventsFile))
		if kinds[0] != "run_started" || slices.Contains(kinds, "run_finished") || slices.Contains(kinds, "campaign_finished") {
			t.Errorf("run %s events: %v", r.ID, kinds)
		}
		if r.Status != stats.StatusDone || r.Meta == nil || !r.Started.Equal(r.Meta.Started) {
			t.Errorf("manifest run %+v", r)
		}
	}
}
