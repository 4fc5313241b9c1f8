package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/tui"
)

// folderOf writes an evidence folder holding evs (and one finished run with
// a summary when finished is set), as a hostile or damaged folder may be.
func folderOf(t *testing.T, name string, finished bool, evs ...event.Event) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	w, err := evidence.Create(dir, []byte("name: t\n"), evidence.Manifest{CampaignID: "c", Name: name, Started: time.Unix(1_800_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	p := event.PlannedRun{ID: "01-r1-10rps", Index: 0, Round: 1, TargetRPS: 10, Duration: time.Second, Agents: 1}
	if err := w.SetPlan([]event.PlannedRun{p}); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		w.Consume(e)
	}
	// The stream is evs and what this function consumes, nothing else: the
	// recorder announces nowhere.
	rec := evidence.NewRecorder(w, func(event.Event) {})
	if !finished {
		if err := rec.Finish(&summary.Summary{CampaignID: "c", Status: "aborted", Reason: "killed"}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	start := time.Unix(1_800_000_000, 0)
	run, err := rec.Begin(p, start)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		run.Record(&stats.Request{Seq: int64(i), Phase: stats.Measured, ScheduledUS: start.Add(time.Duration(i) * 100 * time.Millisecond).UnixMicro(), DurationUS: 1000, Status: 200, Outcome: "ok"})
	}
	st, err := run.End(start.Add(time.Second), stats.RunMeta{ID: p.ID, Round: 1, TargetRPS: 10, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(time.Second), Status: stats.StatusDone}, stats.Thresholds{P95Ms: 10, SuccessRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	st.Warnings = append(st.Warnings, stats.Warn(stats.WarnNote, "", name))
	s := &summary.Summary{CampaignID: "c", Name: name, Target: name, Status: "done", Finished: start.Add(2 * time.Second)}
	summary.BuildSummary(s, []*stats.Run{st}, true)
	w.Consume(event.RunFinished{At: start.Add(time.Second), RunID: p.ID, Status: st.Status, Reason: name, Stats: st})
	w.Consume(event.CampaignFinished{At: s.Finished, Status: "done", Summary: s})
	if err := rec.Finish(s); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReplayWithoutCampaignStarted is issue 9 item 12: replay --no-tui
// panicked (nil map) on a stream without campaign_started, which tokex
// itself leaves after a disk-full failure and a resume.
func TestReplayWithoutCampaignStarted(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	p := event.PlannedRun{ID: "01-r1-10rps", TargetRPS: 10, Duration: time.Second}
	streams := map[string][]event.Event{
		"resource first": {event.Resource{At: at, Role: "engine", Name: "e", CPUMillicores: 5}},
		"a run":          {event.RunStarted{At: at, Run: p}, event.Window{At: at, RunID: p.ID, Phase: stats.Measured}, event.Resource{At: at, Role: "generator"}},
		"finished only":  {event.RunFinished{At: at, RunID: p.ID, Status: stats.StatusDone, Stats: &stats.Run{ID: p.ID}}, event.CampaignFinished{At: at, Status: "failed"}},
		"summary only":   {event.CampaignFinished{At: at, Status: "done", Summary: &summary.Summary{Stages: []*summary.Stage{{TargetRPS: 1, Runs: []*stats.Run{{ID: "x"}}}}}}},
	}
	for name, evs := range streams {
		t.Run(name, func(t *testing.T) {
			dir := folderOf(t, "t", false, evs...)
			code, out, errs := run(t, "replay", "--no-tui", "--speed", "0", dir)
			if code != ExitOK {
				t.Fatalf("exit %d\n%s\n%s", code, out, errs)
			}
		})
	}
}

// TestTerminalNeverGetsControlSequences is issue 9 item 17: replay --no-tui
// printed escape sequences from the evidence verbatim (window title, screen
// clear, colour spoofing). Every text that reaches the terminal is cleaned.
func TestTerminalNeverGetsControlSequences(t *testing.T) {
	attacks := map[string]string{
		"window title":  "\x1b]0;pwned\x07",
		"clear screen":  "\x1b[2J\x1b[3J\x1b[H",
		"colour":        "\x1b[32mPASSED\x1b[0m",
		"C1 CSI":        "\u009b2J",
		"RTL override":  "evil\u202efdp.exe",
		"carriage ret.": "x\rPASSED",
	}
	for name, a := range attacks {
		t.Run(name, func(t *testing.T) {
			at := time.Unix(1_800_000_000, 0)
			dir := folderOf(t, a, true,
				event.CampaignStarted{At: at, ID: "c" + a, Name: a, Driver: a, Target: a, Runs: []event.PlannedRun{{ID: "01-r1-10rps" + a}}},
				event.Log{At: at, Source: a, Level: "error", Message: "server says " + a},
				event.Log{At: at, Source: "k6", Level: "warn", Message: a})
			outputs := map[string][]string{
				"replay":  {"replay", "--no-tui", "--speed", "0", dir},
				"compare": {"compare", dir, dir},
				"json":    {"compare", "--json", dir, dir},
				"ls":      {"ls", filepath.Dir(dir)},
			}
			for cmd, args := range outputs {
				code, out, errs := run(t, args...)
				if code != ExitOK {
					t.Fatalf("%s: exit %d\n%s", cmd, code, errs)
				}
				for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e", "\r"} {
					if strings.Contains(out+errs, bad) {
						t.Errorf("%s prints %q:\n%q", cmd, bad, out+errs)
					}
				}
			}
			// An error that quotes the evidence is cleaned too.
			bad := filepath.Join(t.TempDir(), "bad")
			_ = os.Mkdir(bad, 0o755)
			_ = os.WriteFile(filepath.Join(bad, evidence.ManifestFile), []byte(`{"campaign_id":"`+strings.ReplaceAll(a, "\x1b", `\u001b`)+`"}`), 0o644)
			if _, out, errs := run(t, "report", bad); strings.ContainsAny(out+errs, "\x1b\x07") {
				t.Errorf("report error prints escapes: %q", errs)
			}
		})
	}
}

// tokex ls without a terminal prints a table of the campaigns; replay
// without a folder needs a terminal to pick one.
func TestLsAndReplayWithoutFolder(t *testing.T) {
	dir := folderOf(t, "article", true)
	code, out, errs := run(t, "ls", filepath.Dir(dir))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Campaign", "article", "2027-01-15 08:00", "done", "10/s", "1.00", "✓ passed", "1/1", dir} {
		if !strings.Contains(out, want) {
			t.Errorf("ls lacks %q:\n%s", want, out)
		}
	}
	if code, out, _ := run(t, "ls", t.TempDir()); code != ExitOK || !strings.Contains(out, "no campaigns in") {
		t.Errorf("empty folder: exit %d %q", code, out)
	}
	if code, _, _ := run(t, "ls", filepath.Join(t.TempDir(), "missing")); code != ExitCannotRun {
		t.Errorf("missing folder: exit %d", code)
	}
	if code, _, errs := run(t, "replay"); code != ExitCannotRun || !strings.Contains(errs, "tokex ls") {
		t.Errorf("replay without a folder: exit %d %q", code, errs)
	}
}

// TestReportNeverWritesThroughALink is issue 9 item 9: `tokex report DIR`
// overwrote whatever DIR/report.html pointed to.
func TestReportNeverWritesThroughALink(t *testing.T) {
	dir := folderOf(t, "t", true)
	base := t.TempDir()
	outside := filepath.Join(base, "precious.txt")
	_ = os.WriteFile(outside, []byte("precious"), 0o644)
	cases := map[string][]string{
		"DIR/report.html": {"report", dir},
		"-o link":         {"report", "-o", filepath.Join(base, "link.html"), dir},
	}
	_ = os.Symlink(outside, filepath.Join(dir, "report.html"))
	_ = os.Symlink(outside, filepath.Join(base, "link.html"))
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errs := run(t, args...)
			if b, _ := os.ReadFile(outside); string(b) != "precious" {
				t.Fatalf("written through the link (exit %d): %.80q", code, b)
			}
			if code != ExitCannotRun || !strings.Contains(errs, "refused: a symbolic link") {
				t.Errorf("exit %d\n%s\n%s", code, out, errs)
			}
		})
	}
	// A plain file is replaced as usual.
	_ = os.Remove(filepath.Join(dir, "report.html"))
	if code, _, errs := run(t, "report", dir); code != 0 {
		t.Fatal(errs)
	}
}

// TestPickerReportPathIsClean is issue 25 item 6: the picker's o printed
// the report's path as it was, so escape sequences in a folder's name
// reached the terminal (a window title, a screen clear). The path is
// cleaned like any other text from the evidence; so are the paths `tokex
// report` and `tokex ls` print.
func TestPickerReportPathIsClean(t *testing.T) {
	attack := "\x1b]0;pwned\x07\x1b[2J\u009b2J\u202e\r"
	dir := folderOf(t, "t", true)
	hostile := filepath.Join(filepath.Dir(dir), "c"+attack)
	if err := os.Rename(dir, hostile); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetOut(&out)
	if err := actOnChoice(cmd, tui.PickerChoice{Dir: hostile, Report: true}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(hostile, "report.html")); err != nil {
		t.Errorf("no report: %v", err)
	}
	printed := map[string]string{"picker o": out.String()}
	_, printed["report"], _ = run(t, "report", hostile)
	empty := filepath.Join(t.TempDir(), "e"+attack)
	_ = os.Mkdir(empty, 0o755)
	_, printed["ls (empty)"], _ = run(t, "ls", empty)
	_ = os.Mkdir(filepath.Join(empty, "not-evidence"), 0o755)
	_ = os.Rename(hostile, filepath.Join(empty, "c"))
	_, printed["ls"], _ = run(t, "ls", empty)
	for name, s := range printed {
		if !strings.Contains(s, "]0;pwned[2J") {
			t.Errorf("%s does not show the path: %q", name, s)
		}
		for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e", "\r"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s prints %q: %q", name, bad, s)
			}
		}
	}
}
