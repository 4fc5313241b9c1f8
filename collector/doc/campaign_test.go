package doc

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/table"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/gosrc"
)

// A stage with a failed run says so in every table, the spread line and
// summary.md, and a stage whose only run could not run still has a row.
func TestStageWithFailedRunInEveryTable(t *testing.T) {
	t.Parallel()
	mk := func(id string, round int, p95 float64) *stats.Run {
		return &stats.Run{ID: id, TargetRPS: 100, Round: round, Status: stats.StatusDone, Requests: 1000, OK: 1000, SuccessRatio: 1, AchievedRatio: 1,
			LatencyMs: stats.Latency{P50: p95 / 2, P95: p95}, EngineCPU: &stats.CPU{AvgCores: 0.5, CPUMsPerExchange: 5}, ThresholdsPassed: true,
			Thresholds: []stats.ThresholdResult{{Name: "success_ratio >=", Limit: 0.99, Actual: 1, Passed: true}}}
	}
	dead := mk("02-r2-100rps", 2, 4.9)
	dead.OK, dead.SuccessRatio, dead.ThresholdsPassed = 0, 0, false
	dead.Thresholds = []stats.ThresholdResult{{Name: "success_ratio >=", Limit: 0.99, Actual: 0, Passed: false}}
	s := &summary.Summary{Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}}
	summary.BuildSummary(s, []*stats.Run{mk("01-r1-100rps", 1, 9.5), dead, mk("03-r3-100rps", 3, 9.8)}, true)
	for name, tb := range map[string]table.Table{"latency": LatencyTable(s), "schedule": ScheduleTable(s), "resources": ResourceTable(s)} {
		if row := tb.Rows[0].Cells; row[len(row)-1] != "✗ 1/3 failed" {
			t.Errorf("%s table row %v", name, row)
		}
	}
	if got := SpreadLine(s); got != "100/s: 9.50 ms / 4.90 ms ✗ / 9.80 ms" {
		t.Errorf("spread %q", got)
	}
	md := Campaign(s, nil).Markdown()
	for _, want := range []string{"| 100/s | 100.0% achieved | 1,000 | 100.00% |", "| ✗ 1/3 failed |", "**stage_has_failed_run** in 1 of 1 stages", "  - 100/s: 1 of 3 runs failed: 02-r2-100rps (success_ratio >= 0.99 (was 0))"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	// An interrupted run shows its status, not "aborted ms".
	cut := &summary.Summary{Thresholds: stats.Thresholds{P95Ms: 500}}
	summary.BuildSummary(cut, []*stats.Run{mk("01-r1-100rps", 1, 7.23), {ID: "02-r2-100rps", TargetRPS: 100, Round: 2, Status: stats.StatusAborted}}, false)
	if got := SpreadLine(cut); got != "100/s: 7.23 ms / aborted" {
		t.Errorf("spread with an aborted run: %q", got)
	}
	gone := &summary.Summary{Thresholds: stats.Thresholds{P95Ms: 500}}
	summary.BuildSummary(gone, []*stats.Run{{ID: "01-r1-5rps", TargetRPS: 5, Round: 1, Status: stats.StatusFailed, Reason: "target unreachable: …"}}, false)
	for name, tb := range map[string]table.Table{"latency": LatencyTable(gone), "schedule": ScheduleTable(gone), "resources": ResourceTable(gone)} {
		if len(tb.Rows) != 1 || tb.Rows[0].Cells[1] != "no finished run" || tb.Rows[0].Cells[len(tb.Rows[0].Cells)-1] != "✗ 1/1 failed" {
			t.Errorf("%s table of a stage without a finished run: %v", name, tb.Rows)
		}
	}
}

// The reported run's row: counts with thousands, latency to one decimal,
// the stage's verdict; the spread of its rounds in one line.
func TestLatencyRowAndSpread(t *testing.T) {
	t.Parallel()
	mk := func(id string, round int, p95 float64) *stats.Run {
		return &stats.Run{ID: id, TargetRPS: 100, Round: round, Status: stats.StatusDone, Requests: 30008, OK: 30008,
			SuccessRatio: 1, AchievedRatio: 1, LatencyMs: stats.Latency{Avg: 5.4, P50: 5.1, P90: 6.9, P95: p95, P99: 9.7},
			EngineCPU: &stats.CPU{AvgCores: 0.56, PeakCores: 0.62, CPUMsPerExchange: 5.6}, ThresholdsPassed: true}
	}
	s := &summary.Summary{}
	summary.BuildSummary(s, []*stats.Run{{ID: "s", Sanity: true, Status: stats.StatusDone}, mk("a", 1, 7.23), mk("b", 2, 7.54), mk("c", 3, 7.72)}, true)
	if got := SpreadLine(s); got != "100/s: 7.23/7.54/7.72 ms" {
		t.Errorf("spread = %q", got)
	}
	row := LatencyTable(s).Rows[0].Cells
	if row[2] != "30,008" || row[3] != "100.00%" || row[7] != "7.5 ms" || row[9] != "✓ 3/3 passed" {
		t.Errorf("row = %v", row)
	}
	// A target that refused every connection achieved nothing.
	start := time.Unix(1_700_000_000, 0)
	var rows []stats.Request
	for k := range 400 {
		rows = append(rows, stats.Request{Seq: int64(k), Phase: stats.Measured, ScheduledUS: start.Add(time.Duration(k) * time.Second / 40).UnixMicro(),
			DurationUS: 300, Outcome: exchange.OutcomeConnError})
	}
	dead := stats.ComputeRun(stats.RunMeta{ID: "dead", TargetRPS: 40, Status: stats.StatusDone, Started: start, MeasuredStart: start,
		MeasuredEnd: start.Add(10 * time.Second)}, rows, nil, stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99})
	ds := &summary.Summary{Stages: []*summary.Stage{{TargetRPS: 40, ReportedRun: "dead", Runs: []*stats.Run{dead}}}}
	if got := LatencyTable(ds).Rows[0].Cells; got[1] != "0.0% achieved" || got[3] != "0.00%" {
		t.Errorf("latency row %v", got)
	}
}

// Verified tokens are counted in summary.md's header, the terminal's last
// lines and the report's tiles; a campaign that verified none says nothing.
func TestVerifiedTokensInEveryMedium(t *testing.T) {
	t.Parallel()
	runs := []*stats.Run{
		{ID: "a", TargetRPS: 10, Status: stats.StatusDone, Requests: 100, OK: 98, Verification: &sample.Verification{Sample: 0.1, Checked: 11, Failed: 2}},
		{ID: "b", TargetRPS: 20, Status: stats.StatusDone, Requests: 200, OK: 200, Verification: &sample.Verification{Sample: 0.1, Checked: 19}},
	}
	s := &summary.Summary{}
	summary.BuildSummary(s, runs, true)
	d := Campaign(s, &Page{})
	var h bytes.Buffer
	if err := d.HTML(&h); err != nil {
		t.Fatal(err)
	}
	for medium, c := range map[string]struct{ got, want string }{
		"summary.md": {d.Markdown(), "- issued tokens verified: 30 (10 % of the successes, picked at random), 2 failed\n"},
		"terminal":   {d.Text(), "\nIssued tokens verified: 30 (10 % of the successes, picked at random), 2 failed\n"},
		"report":     {h.String(), `<div class="label">tokens verified (10 % at random)</div><div class="value bad">30 · 2 failed</div>`},
	} {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("%s lacks %q:\n%s", medium, c.want, c.got)
		}
	}
	runs[0].Verification, runs[1].Verification = nil, nil
	summary.BuildSummary(s, runs, true)
	d = Campaign(s, &Page{})
	h.Reset()
	if err := d.HTML(&h); err != nil {
		t.Fatal(err)
	}
	if all := d.Markdown() + d.Text() + h.String(); strings.Contains(all, "verified") {
		t.Errorf("no token verified, yet:\n%s", all)
	}
}

// summary.md ends with what latency and send lag mean for its driver.
func TestDefinitionsCloseSummaryMD(t *testing.T) {
	t.Parallel()
	for _, driver := range []string{"local", "kube (e2e/default)", "k6 import"} {
		s := &summary.Summary{Driver: driver}
		summary.BuildSummary(s, nil, true)
		want := "\n---\n" + summary.LatencyDefinition + "\n\n" + s.SendLagDefinition + "\n"
		if md := Campaign(s, nil).Markdown(); !strings.HasSuffix(md, want) {
			t.Errorf("%s: summary.md ends\n%s", driver, md[max(0, len(md)-400):])
		}
	}
}

// TestTitlesWrittenOnce: the document is composed in one place. Every
// section title of more than one word appears once in the module's code
// and templates (tests, docs and testdata aside): a renderer or a command
// that composed its own copy of the document would write it again.
func TestTitlesWrittenOnce(t *testing.T) {
	t.Parallel()
	root, err := gosrc.Root("../..")
	if err != nil {
		t.Fatal(err)
	}
	var code strings.Builder
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, "_test.go") || !strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".tmpl") {
			return nil
		}
		b, err := os.ReadFile(path)
		code.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &summary.Summary{}
	titles := 0
	for _, sec := range Campaign(s, nil).Sections {
		if !strings.Contains(sec.Title, " ") {
			continue
		}
		titles++
		if n := strings.Count(code.String(), sec.Title); n != 1 {
			t.Errorf("%q is written %d times", sec.Title, n)
		}
	}
	if titles < 7 {
		t.Errorf("only %d titles checked", titles)
	}
}
