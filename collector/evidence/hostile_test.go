package evidence

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/internal/safefs"
)

var testPlan = []event.PlannedRun{
	{ID: "01-r1-10rps", Index: 1, Round: 1, TargetRPS: 10, Duration: time.Second, Agents: 1},
	{ID: "02-r1-20rps", Index: 2, Round: 1, TargetRPS: 20, Duration: time.Second, Agents: 1},
}

// interrupted writes a campaign whose first run finished and whose second
// was under way when tokex was killed (no Finish: nothing flushed since).
func interrupted(t *testing.T, dir string, opts ...Option) *Writer {
	t.Helper()
	w, err := Create(dir, []byte("name: t\n"), Manifest{CampaignID: filepath.Base(dir), Started: time.Unix(1_800_000_000, 0)}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetPlan(testPlan); err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(w, nil)
	start := time.Unix(1_800_000_000, 0)
	w.Consume(event.CampaignStarted{At: start, ID: filepath.Base(dir), Runs: testPlan})
	runOne(t, rec, testPlan[0], start)
	w.Consume(event.Resource{At: start.Add(1500 * time.Millisecond), Role: "engine", Name: "between", CPUMillicores: 5})
	run, err := rec.Begin(testPlan[1], start.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	run.Record(&stats.Request{Phase: stats.Measured, ScheduledUS: start.Add(2 * time.Second).UnixMicro(), DurationUS: 1000, Status: 200, Outcome: "ok"})
	return w
}

// resumed reopens an interrupted campaign, as tokex run --resume does.
func resumed(t *testing.T, dir string) *Recorder {
	t.Helper()
	w, err := Resume(dir)
	must(t, err)
	return NewRecorder(w, nil)
}

func runOne(t testing.TB, rec *Recorder, p event.PlannedRun, start time.Time) *stats.Run {
	t.Helper()
	run, err := rec.Begin(p, start)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		run.Record(&stats.Request{Seq: int64(i), Phase: stats.Measured, ScheduledUS: start.Add(time.Duration(i) * 100 * time.Millisecond).UnixMicro(),
			DurationUS: 1000 + int64(i), Status: 200, Outcome: "ok"})
	}
	st, err := run.End(start.Add(time.Second), stats.RunMeta{ID: p.ID, Round: p.Round, TargetRPS: p.TargetRPS, Started: start, MeasuredStart: start,
		MeasuredEnd: start.Add(time.Second), Status: stats.StatusDone}, stats.Thresholds{P95Ms: 10, SuccessRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// finish ends a (resumed) campaign the way the runner does.
func finish(t *testing.T, rec *Recorder, runs ...*stats.Run) error {
	t.Helper()
	s := &summary.Summary{CampaignID: "c", Status: "done", Finished: time.Unix(1_800_000_100, 0)}
	summary.BuildSummary(s, runs, true)
	return rec.Finish(s)
}

// snapshot is every file under dir with its content, links as "-> target".
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "-> " + l
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			out[rel] = string(b)
		case fi.IsDir():
			out[rel+"/"] = ""
		}
		return nil
	})
	return out
}

// TestResumeNeverWritesThroughLinks is issue 9 item 9: --resume deleted and
// wrote through a symlinked runs/, appended through a symlinked
// events.jsonl and overwrote through manifest.json.tmp. Whatever link the
// folder holds, nothing outside it changes (refusing is fine).
func TestResumeNeverWritesThroughLinks(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir, outside string)
	}{
		{"runs folder", func(t *testing.T, dir, outside string) {
			// The outside folder looks like a runs/ folder with the
			// unfinished run in it: resume would delete and rewrite it.
			must(t, os.MkdirAll(filepath.Join(outside, "02-r1-20rps"), 0o755))
			must(t, os.WriteFile(filepath.Join(outside, "02-r1-20rps", "precious"), []byte("keep"), 0o644))
			must(t, os.Rename(filepath.Join(dir, RunsDir), filepath.Join(outside, "moved-runs")))
			must(t, os.Symlink(outside, filepath.Join(dir, RunsDir)))
		}},
		{"run folder", func(t *testing.T, dir, outside string) {
			must(t, os.RemoveAll(filepath.Join(dir, RunsDir, "02-r1-20rps")))
			must(t, os.WriteFile(filepath.Join(outside, "precious"), []byte("keep"), 0o644))
			must(t, os.Symlink(outside, filepath.Join(dir, RunsDir, "02-r1-20rps")))
		}},
		{"events.jsonl", func(t *testing.T, dir, outside string) {
			must(t, os.WriteFile(filepath.Join(outside, "log"), []byte("keep\n"), 0o644))
			must(t, os.Remove(filepath.Join(dir, EventsFile)))
			must(t, os.Symlink(filepath.Join(outside, "log"), filepath.Join(dir, EventsFile)))
		}},
		{"resources.csv", func(t *testing.T, dir, outside string) {
			must(t, os.WriteFile(filepath.Join(outside, "res"), []byte("keep\n"), 0o644))
			must(t, os.Remove(filepath.Join(dir, ResourcesFile)))
			must(t, os.Symlink(filepath.Join(outside, "res"), filepath.Join(dir, ResourcesFile)))
		}},
		{"manifest.json.tmp", func(t *testing.T, dir, outside string) {
			must(t, os.WriteFile(filepath.Join(outside, "tmp"), []byte("keep"), 0o644))
			must(t, os.Symlink(filepath.Join(outside, "tmp"), filepath.Join(dir, ManifestFile+".tmp")))
		}},
		{"stats.json of the new run", func(t *testing.T, dir, outside string) {
			must(t, os.WriteFile(filepath.Join(outside, "stats"), []byte("keep"), 0o644))
			must(t, os.Symlink(filepath.Join(outside, "stats"), filepath.Join(dir, RunsDir, "01-r1-10rps", StatsFile+".tmp")))
		}},
		{"summary.md", func(t *testing.T, dir, outside string) {
			must(t, os.WriteFile(filepath.Join(outside, "md"), []byte("keep"), 0o644))
			must(t, os.Symlink(filepath.Join(outside, "md"), filepath.Join(dir, SummaryMD)))
		}},
		{"manifest.json is a FIFO", func(t *testing.T, dir, outside string) {
			must(t, os.Remove(filepath.Join(dir, ManifestFile)))
			must(t, syscall.Mkfifo(filepath.Join(dir, ManifestFile), 0o644))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			dir, outside := filepath.Join(base, "c"), filepath.Join(base, "outside")
			must(t, os.Mkdir(outside, 0o755))
			w := interrupted(t, dir)
			_ = w // killed: never finished
			c.setup(t, dir, outside)
			before := snapshot(t, outside)
			done := make(chan struct{})
			go func() {
				defer close(done)
				w2, err := Resume(dir)
				if err != nil {
					t.Logf("resume refused: %v", err)
					return
				}
				rec := NewRecorder(w2, nil)
				st := runOne(t, rec, testPlan[1], time.Unix(1_800_000_010, 0))
				_ = finish(t, rec, st)
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("resume blocked (opened a FIFO?)")
			}
			if after := snapshot(t, outside); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the folder outside changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadersRefuseIDsThatLeaveTheFolder is issue 9 item 10: a run id of
// "../../.." in manifest.json or summary.json was joined into paths.
func TestReadersRefuseIDsThatLeaveTheFolder(t *testing.T) {
	for _, bad := range []string{"..", "../../..", "../x", "a/b", "/etc", ".hidden", "", "a\x00b", "a\\b", strings.Repeat("x", 200), "run\n1"} {
		if CheckID(bad) == nil {
			t.Errorf("CheckID(%q) accepted", bad)
		}
	}
	for _, good := range []string{"01-r1-100rps", "00-sanity", "20261130-154030.417-quick", "03-r2-2.5rps", "k6_import"} {
		if err := CheckID(good); err != nil {
			t.Errorf("CheckID(%q): %v", good, err)
		}
	}
	cases := []struct {
		name string
		file string
		edit func(m map[string]any)
		read func(f *Folder) error
	}{
		{"manifest run id", ManifestFile, func(m map[string]any) { m["runs"].([]any)[0].(map[string]any)["id"] = "../../.." }, nil},
		{"manifest campaign id", ManifestFile, func(m map[string]any) { m["campaign_id"] = "../c" }, nil},
		{"summary run id", SummaryJSON, func(m map[string]any) {
			m["stages"].([]any)[0].(map[string]any)["runs"].([]any)[0].(map[string]any)["id"] = "../../../etc"
		}, func(f *Folder) error { _, err := f.Summary(); return err }},
		{"summary reported run", SummaryJSON, func(m map[string]any) { m["stages"].([]any)[0].(map[string]any)["reported_run"] = "../x" },
			func(f *Folder) error { _, err := f.Summary(); return err }},
		{"stats of another id", "", nil, func(f *Folder) error { _, err := f.RunStats("../01-r1-10rps"); return err }},
		{"requests of another id", "", nil, func(f *Folder) error { _, err := f.Requests("../../c", func(*stats.Request) {}); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			interrupted(t, dir)
			rec := resumed(t, dir)
			st := runOne(t, rec, testPlan[1], time.Unix(1_800_000_010, 0))
			must(t, finish(t, rec, st))
			if c.file != "" {
				p := filepath.Join(dir, c.file)
				b, _ := os.ReadFile(p)
				var m map[string]any
				must(t, json.Unmarshal(b, &m))
				c.edit(m)
				b, _ = json.Marshal(m)
				must(t, os.WriteFile(p, b, 0o644))
			}
			f, err := Open(dir)
			if err == nil && c.read != nil {
				err = c.read(f)
			}
			if err == nil || !strings.Contains(err.Error(), "not a valid campaign or run id") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// TestLongEventLinesAreSkippedNotFatal is issue 9 item 14: one line over
// 16 MiB made replay and --resume refuse the whole stream.
func TestLongEventLinesAreSkippedNotFatal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	w := interrupted(t, dir)
	_ = w
	long := `{"seq":999,"kind":"log","data":{"message":"` + strings.Repeat("x", MaxEventLine+10) + `"}}` + "\n"
	f, err := os.OpenFile(filepath.Join(dir, RunsDir, "01-r1-10rps", EventsFile), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, _ = f.WriteString(long)
	f.Close()
	top, err := os.OpenFile(filepath.Join(dir, EventsFile), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, _ = top.WriteString(long + "{not json}\n")
	top.Close()
	fo, err := Open(dir)
	must(t, err)
	evs, info := allEvents(t, fo)
	if !strings.Contains(strings.Join(info.Notes, "\n"), "events.jsonl: 2 unreadable line(s) skipped (1 longer than 16 MiB)") {
		t.Errorf("the campaign file's skipped lines are not said: %v", info.Notes)
	}
	if len(evs) < 4 || !strings.Contains(strings.Join(info.Notes, "\n"), "1 unreadable line(s) skipped (1 longer than 16 MiB)") {
		t.Fatalf("%d events, notes %v", len(evs), info.Notes)
	}
	if _, err := Resume(dir); err != nil {
		t.Fatalf("resume refused the stream: %v", err)
	}
}

// TestTokexOwnLinesStayShort is issue 9 item 14's other half: a plan of
// 200,000 stages wrote a line over 16 MiB. Plans are bounded, and the
// longest lines tokex writes for the largest plan stay well below the limit.
func TestTokexOwnLinesStayShort(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "c"), nil, Manifest{CampaignID: "c"})
	must(t, err)
	huge := make([]event.PlannedRun, 200_000)
	for i := range huge {
		huge[i] = event.PlannedRun{ID: fmt.Sprintf("%02d-r1-%drps", i, i+1), Index: i, Round: 1, TargetRPS: float64(i + 1)}
	}
	if err := w.SetPlan(huge); err == nil {
		t.Fatal("a plan of 200,000 runs was accepted")
	}
	plan := huge[:stats.MaxRuns]
	start, _ := event.Marshal(1, event.CampaignStarted{ID: "c", Runs: plan})
	var runs []*stats.Run
	for _, p := range plan {
		r := &stats.Run{ID: p.ID, Round: 1, TargetRPS: p.TargetRPS, Status: stats.StatusDone, Requests: 1, EngineCPU: &stats.CPU{}, GeneratorCPU: &stats.CPU{},
			Errors: map[string]int64{}, Warnings: []stats.Warning{stats.Warn(stats.WarnHostSaturated, p.ID, "a warning of ordinary length, as tokex writes them for a run")}}
		for k := 0; k < 32; k++ {
			r.Errors[fmt.Sprintf("oauth_error:invalid_request_%02d", k)] = 1
		}
		runs = append(runs, r)
	}
	s := &summary.Summary{CampaignID: "c"}
	summary.BuildSummary(s, runs, true)
	end, _ := event.Marshal(2, event.CampaignFinished{Status: "done", Summary: s})
	for name, n := range map[string]int{"campaign_started": len(start), "campaign_finished": len(end)} {
		if n > MaxEventLine/2 {
			t.Errorf("%s of %d runs is %d bytes, too close to the %d limit", name, stats.MaxRuns, n, MaxEventLine)
		}
	}
}

// TestCampaignFilesAreOnDiskAtEveryRunBoundary is issue 9 item 18: the
// campaign's events.jsonl and resources.csv sat in buffers until the end,
// so a kill lost them (and resources.csv its header).
func TestCampaignFilesAreOnDiskAtEveryRunBoundary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	_ = interrupted(t, dir) // killed during the second run: nothing flushed by Finish
	ev, _ := os.ReadFile(filepath.Join(dir, EventsFile))
	for _, want := range []string{`"kind":"campaign_started"`, `"kind":"run_finished"`, `"name":"between"`} {
		if !bytes.Contains(ev, []byte(want)) {
			t.Errorf("events.jsonl lacks %s after a run boundary:\n%s", want, ev)
		}
	}
	res, _ := os.ReadFile(filepath.Join(dir, ResourcesFile))
	if !strings.HasPrefix(string(res), ResourcesHeader+"\n") || !strings.Contains(string(res), ",between,") {
		t.Errorf("resources.csv after a run boundary: %q", res)
	}
}

// TestResumeRepairsTornTails is issue 9 item 18: after a kill mid-write
// --resume appended to the torn last line (both events lost) and left
// resources.csv without its header.
func TestResumeRepairsTornTails(t *testing.T) {
	cases := []struct {
		name        string
		events, res func(string) string
	}{
		{"torn last lines", func(s string) string { return s + `{"seq":77,"kind":"lo` }, func(s string) string { return s + "1800000001000000,eng" }},
		{"empty resources.csv", func(s string) string { return s }, func(string) string { return "" }},
		{"header only, torn", func(s string) string { return s }, func(string) string { return "at_unix_us,ki" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			_ = interrupted(t, dir)
			for name, edit := range map[string]func(string) string{EventsFile: c.events, ResourcesFile: c.res} {
				p := filepath.Join(dir, name)
				b, _ := os.ReadFile(p)
				must(t, os.WriteFile(p, []byte(edit(string(b))), 0o644))
			}
			w, err := Resume(dir)
			must(t, err)
			w.Consume(event.Resource{At: time.Unix(1_800_000_009, 0), Role: "engine", Name: "after-resume", CPUMillicores: 7})
			rec := NewRecorder(w, nil)
			st := runOne(t, rec, testPlan[1], time.Unix(1_800_000_010, 0))
			must(t, finish(t, rec, st))
			f, err := Open(dir)
			must(t, err)
			evs, info := allEvents(t, f)
			if len(info.Notes) != 0 {
				t.Errorf("notes after a repaired resume: %v", info.Notes)
			}
			found := false
			for _, e := range evs {
				if r, ok := e.Event.(event.Resource); ok && r.Name == "after-resume" {
					found = true
				}
			}
			if !found {
				t.Error("the first event after the resume was lost (appended to a torn line)")
			}
			res, _ := os.ReadFile(filepath.Join(dir, ResourcesFile))
			lines := strings.Split(strings.TrimSuffix(string(res), "\n"), "\n")
			if lines[0] != ResourcesHeader {
				t.Errorf("resources.csv starts with %q", lines[0])
			}
			for _, l := range lines[1:] {
				if _, err := parseResource(l); err != nil {
					t.Errorf("resources.csv line %q: %v", l, err)
				}
			}
		})
	}
}

// failingFS makes every write to the files matching name fail with ENOSPC
// once budget bytes have been written to them: a disk that fills up.
type failingFS struct {
	name   func(string) bool
	budget int
}

func (f *failingFS) wrap(name string, w io.Writer) io.Writer {
	if !f.name(name) {
		return w
	}
	return writerFunc(func(p []byte) (int, error) {
		if len(p) > f.budget {
			n, _ := w.Write(p[:f.budget])
			f.budget = 0
			return n, &os.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
		}
		f.budget -= len(p)
		return w.Write(p)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestFullDiskFailsFastAndLeavesWholeFiles is issue 9 item 18: on ENOSPC
// events.jsonl, summary.md and report.html ended up 0 bytes, *.tmp files
// remained, and rows were dropped silently. The first failed write is an
// error at once (Failed closes), and every summary file is whole or absent.
func TestFullDiskFailsFastAndLeavesWholeFiles(t *testing.T) {
	cases := []struct {
		name   string
		match  func(string) bool
		budget int
	}{
		{"requests", func(n string) bool { return strings.HasSuffix(n, RequestsFile) }, 50},
		{"run events", func(n string) bool { return strings.HasSuffix(n, "/"+EventsFile) }, 10},
		{"campaign events", func(n string) bool { return n == EventsFile }, 100},
		{"stats.json", func(n string) bool { return strings.HasSuffix(n, StatsFile) }, 20},
		{"summary.md", func(n string) bool { return n == SummaryMD }, 30},
		{"summary.json", func(n string) bool { return n == SummaryJSON }, 30},
		{"manifest.json", func(n string) bool { return n == ManifestFile }, 2000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			fs := &failingFS{name: c.match, budget: c.budget}
			w, err := Create(dir, []byte("name: t\n"), Manifest{CampaignID: "c"}, WrapFiles(fs.wrap))
			if err != nil {
				t.Logf("create: %v", err)
				assertWholeFiles(t, dir)
				return
			}
			_ = w.SetPlan(testPlan)
			w.Consume(event.CampaignStarted{ID: "c", Runs: testPlan})
			rec := NewRecorder(w, nil)
			var runErr error
			for _, p := range testPlan {
				var run *Run
				if run, runErr = rec.Begin(p, time.Unix(1_800_000_000, 0)); runErr != nil {
					break
				}
				for i := 0; i < 2000; i++ {
					run.Record(&stats.Request{Seq: int64(i), Phase: stats.Measured, ScheduledUS: int64(i), DurationUS: int64(1000 + i%977), Status: 200, Outcome: "ok"})
					w.Consume(event.Log{Message: "row"})
					if i%500 == 0 {
						_ = w.Flush()
					}
				}
				if _, runErr = run.End(time.Unix(1_800_000_001, 0), stats.RunMeta{ID: p.ID, Status: stats.StatusDone}, stats.Thresholds{}); runErr != nil {
					break
				}
			}
			s := &summary.Summary{CampaignID: "c", Status: "done"}
			summary.BuildSummary(s, nil, true)
			ferr := rec.Finish(s)
			err = errors.Join(runErr, ferr)
			if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, ErrWrite) || !strings.Contains(err.Error(), "evidence cannot be written") {
				t.Fatalf("err = %v", err)
			}
			select {
			case <-w.Failed():
			default:
				t.Error("Failed is not closed after a write error")
			}
			assertWholeFiles(t, dir)
		})
	}
}

// assertWholeFiles: no temporary file is left, and every JSON or Markdown
// summary that exists is complete.
func assertWholeFiles(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		if safefs.IsTemp(fi.Name()) || strings.HasSuffix(fi.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", p)
		}
		b, _ := os.ReadFile(p)
		switch {
		case strings.HasSuffix(p, ".json"):
			if !json.Valid(b) {
				t.Errorf("%s is not whole JSON (%d bytes)", p, len(b))
			}
		case strings.HasSuffix(p, ".md"):
			if !strings.Contains(string(b), summary.LatencyDefinition) {
				t.Errorf("%s is cut (%d bytes)", p, len(b))
			}
		}
		return nil
	})
}

// TestFinishKeepsTheCampaignsReason is issue 9 item 19: Finish cleared the
// reason SetStatus had recorded. The reason is now the summary's.
func TestFinishKeepsTheCampaignsReason(t *testing.T) {
	cases := []struct {
		status summary.CampaignStatus
		reason string
	}{
		{"failed", "sanity run failed: 0 of 20 exchanges succeeded"},
		{"aborted", "interrupted"},
		{"failed", "evidence cannot be written: no space left on device"},
		{"done", ""},
	}
	for _, c := range cases {
		dir := filepath.Join(t.TempDir(), "c")
		interrupted(t, dir)
		s := &summary.Summary{CampaignID: "c", Status: c.status, Reason: c.reason, Finished: time.Unix(1_800_000_100, 0)}
		must(t, resumed(t, dir).Finish(s))
		f, err := Open(dir)
		must(t, err)
		if f.Manifest.Status != c.status || f.Manifest.Reason != c.reason {
			t.Errorf("manifest status %q reason %q, want %q %q", f.Manifest.Status, f.Manifest.Reason, c.status, c.reason)
		}
	}
}

// TestCampaignIDsAreUniqueWithinASecond is issue 9 item 20: ids had
// 1-second resolution and the second campaign failed with "file exists".
func TestCampaignIDsAreUniqueWithinASecond(t *testing.T) {
	parent := t.TempDir()
	now := time.Date(2026, 11, 30, 15, 40, 30, 417_000_000, time.UTC)
	seen := map[string]bool{}
	var ids []string
	for i := 0; i < 5; i++ {
		at := now
		if i == 4 {
			at = now.Add(-400 * time.Millisecond) // same second, earlier
		}
		w, err := CreateNew(parent, "quick run/1", at, nil, Manifest{})
		if err != nil {
			t.Fatalf("campaign %d: %v", i, err)
		}
		id := w.Manifest().CampaignID
		if seen[id] || filepath.Base(w.Dir) != id || CheckID(id) != nil {
			t.Fatalf("id %q (dir %s)", id, w.Dir)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	if ids[0] != "20261130-154030.417-quick-run-1" || ids[1] != "20261130-154030.418-quick-run-1" {
		t.Errorf("ids %v", ids)
	}
	if !(ids[4] < ids[0]) {
		t.Errorf("ids do not sort by start time: %v", ids)
	}
}

// bomb writes a requests.csv.gz of rows copies of one valid row: a few
// hundred KiB that decompress to rows × 47 bytes.
func bomb(t *testing.T, path string, rows int) {
	t.Helper()
	f, err := os.Create(path)
	must(t, err)
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	_, _ = zw.Write([]byte(requestsHeaderV2 + "\n")) // rows without retried, as before it
	line := []byte("3,42,measured,1800000000000000,17,5321,200,ok,,\n")
	chunk := bytes.Repeat(line, 10_000)
	for n := 0; n < rows; n += 10_000 {
		_, _ = zw.Write(chunk[:min(rows-n, 10_000)*len(line)])
	}
	must(t, zw.Close())
	must(t, f.Close())
}

// TestCompressionBombIsRefused is issue 9 item 11: a 2.9 MB requests.csv.gz
// made `report` use 7.5 GB, every row held in memory. Rows are streamed and
// both the rows and the decompressed bytes are capped with a clear error.
func TestCompressionBombIsRefused(t *testing.T) {
	defer func(l struct{ runRows, requestBytes int64 }) { limits = l }(limits)
	cases := []struct {
		name    string
		rows    int
		rowCap  int64
		byteCap int64
		want    string
	}{
		{"too many rows", 300_000, 200_000, 1 << 30, "refused: more than 200,000 rows"},
		{"too many bytes", 300_000, 1 << 30, 4 << 20, "refused: more than 4,194,304 bytes decompressed"},
		{"within the caps", 100_000, 200_000, 8 << 20, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			limits.runRows, limits.requestBytes = c.rowCap, c.byteCap
			dir := filepath.Join(t.TempDir(), "c")
			interrupted(t, dir)
			rec := resumed(t, dir)
			st := runOne(t, rec, testPlan[1], time.Unix(1_800_000_010, 0))
			must(t, finish(t, rec, st))
			bomb(t, filepath.Join(dir, RunsDir, testPlan[0].ID, RequestsFile), c.rows)
			f, err := Open(dir)
			must(t, err)
			var seen int64
			_, err = f.Requests(testPlan[0].ID, func(*stats.Request) { seen++ })
			if c.want == "" {
				if err != nil || seen != int64(c.rows) {
					t.Fatalf("%d rows, err %v", seen, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if _, err := f.Recompute(stats.Thresholds{}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("recompute: %v", err)
			}
		})
	}
}
