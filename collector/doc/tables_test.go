package doc

import (
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/table"
)

// The dashboard's results table: every round's p95 with the reported run
// in brackets, the reported run's figures, the verdict, its tone, and the
// ⚠ of a stage with a flagged run.
func TestResultsTable(t *testing.T) {
	t.Parallel()
	mk := func(id string, rps float64, round int, p95 float64, passed bool) *stats.Run {
		return &stats.Run{ID: id, TargetRPS: rps, Round: round, Status: stats.StatusDone, Requests: 1500, OK: 1500, SuccessRatio: 1,
			LatencyMs: stats.Latency{P50: p95 / 2, P95: p95, P99: p95 * 2}, EngineCPU: &stats.CPU{AvgCores: 0.5, CPUMsPerExchange: 5, Source: "proc-tree"}, ThresholdsPassed: passed}
	}
	s := &summary.Summary{Thresholds: stats.Thresholds{P95Ms: 500}}
	summary.BuildSummary(s, []*stats.Run{mk("a", 100, 1, 7, true), mk("b", 100, 2, 9, true), mk("c", 100, 3, 8, true),
		mk("d", 250, 1, 600, false), {ID: "e", TargetRPS: 500, Round: 1, Status: stats.StatusAborted}}, false)
	tb := ResultsTable(s, func(id string) bool { return id == "b" })
	want := []struct {
		cells string
		tone  table.Tone
	}{
		{"100/s|7.00 9.00 [8.00]|1,500|100.0|4.0|8.0|16.0|0.50|5.00|pid tree|✓ ⚠", table.Good},
		{"250/s|[600.00 ✗]|1,500|100.0|300.0|600.0|1200.0|0.50|5.00|pid tree|✗ 1 failed", table.Bad},
		{"500/s|aborted|||||||||", table.Plain},
	}
	if len(tb.Rows) != len(want) {
		t.Fatalf("rows %v", tb.Rows)
	}
	for i, w := range want {
		if got := strings.Join(tb.Rows[i].Cells, "|"); got != w.cells || tb.Rows[i].Tone != w.tone {
			t.Errorf("row %d = %q tone %d, want %q tone %d", i, got, tb.Rows[i].Tone, w.cells, w.tone)
		}
	}
	if len(tb.Columns) != len(tb.Rows[0].Cells) || tb.Columns[len(tb.Columns)-1].Align != table.Left {
		t.Errorf("columns %+v", tb.Columns)
	}
}

// TestCPUSourceLabel: how the engine CPU was measured, in one short label,
// for every source tokex writes; a source it does not know is "other" (an
// evidence file does not get to print what it likes).
func TestCPUSourceLabel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ source, want string }{
		{"proc", "pid"},
		{"proc-tree", "pid tree"},
		{"cgroup", "cgroup"},
		{"prometheus", "prometheus"},
		{"promql", "promql"},
		{"metrics-server (15s window)", "metrics-server"},
		{"kubelet /metrics/resource", "kubelet"},
		{"kubelet /metrics/resource, metrics-server (15s window)", "kubelet+metrics-server"},
		{"monitor-csv", "monitor CSV"},
		{"proc, proc-tree", "pid+pid tree"},
		{"", "n/a"},
		{"processes", "other"},
		{"<script>, proc", "other+pid"},
	} {
		if got := SourceLabel(&stats.CPU{Source: c.source}); got != c.want {
			t.Errorf("SourceLabel(%q) = %q, want %q", c.source, got, c.want)
		}
	}
	if got := SourceLabel(nil); got != "n/a" {
		t.Errorf("nil CPU: %q", got)
	}
}

// TestResourceTableSaysHowCPUWasMeasured: summary.md's and the report's
// resource table name the engine CPU's source per stage.
func TestResourceTableSaysHowCPUWasMeasured(t *testing.T) {
	t.Parallel()
	s := &summary.Summary{}
	summary.BuildSummary(s, []*stats.Run{{ID: "a", TargetRPS: 100, Round: 1, Status: stats.StatusDone, Requests: 10, OK: 10, SuccessRatio: 1,
		EngineCPU: &stats.CPU{AvgCores: 0.5, PeakCores: 0.7, CPUMsPerExchange: 5, Source: "cgroup"}, ThresholdsPassed: true}}, false)
	md := ResourceTable(s).Markdown()
	if !strings.Contains(md, "| Engine memory | Measured by | Runs |") || !strings.Contains(md, "| cgroup | ✓ 1/1 passed |") {
		t.Errorf("resource table:\n%s", md)
	}
}

// In a capacity search every table gives a probe the search's verdict, not
// the run thresholds': a probe broken by p99 whose runs passed their
// thresholds (they have no p99) is ✗ broken, never ✓; an invalid or hard
// probe says so, and a probe still running its rounds is not judged yet.
func TestSearchVerdictInEveryTable(t *testing.T) {
	t.Parallel()
	mk := func(id string, rps, p99 float64) *stats.Run {
		return &stats.Run{ID: id, TargetRPS: rps, Round: 1, Status: stats.StatusDone, Requests: 300, OK: 300, SuccessRatio: 1,
			LatencyMs: stats.Latency{P50: 3, P95: 9, P99: p99}, ThresholdsPassed: true}
	}
	s := &summary.Summary{Thresholds: stats.Thresholds{P95Ms: 50}}
	summary.BuildSummary(s, []*stats.Run{mk("p1", 50, 20), mk("p2", 75, 72.8), mk("p3", 60, 30), mk("p4", 62, 30), mk("p5", 61, 30)}, false)
	s.Capacity = &curve.Result{Status: curve.StatusRunning, Objective: curve.Objective{P95Ms: 50, P99Ms: 50, SuccessRatio: 0.99},
		Probes: []curve.Probe{{Rate: 50, Verdict: curve.Pass}, {Rate: 75, Verdict: curve.Broken, Broken: []string{"p99 72.8 ms vs 50 ms"}},
			{Rate: 60, Verdict: curve.Invalid, Reason: "generator_starved: 40 %"}, {Rate: 62, Verdict: curve.Hard, Reason: "no exchange succeeded"},
			{Rate: 61}}}
	want := map[string]struct {
		verdict string
		tone    table.Tone
	}{
		"50/s": {"✓ pass", table.Good},
		"60/s": {"? invalid: generator_starved: 40 %", table.Warn},
		"61/s": {"… judging", table.Plain},
		"62/s": {"! hard: no exchange succeeded", table.Bad},
		"75/s": {"✗ broken: p99 72.8 ms vs 50 ms", table.Bad},
	}
	tables := map[string]table.Table{"results": ResultsTable(s, func(string) bool { return false }), "latency": LatencyTable(s),
		"schedule": ScheduleTable(s), "resources": ResourceTable(s), "spread": SpreadTable(s)}
	for name, tb := range tables {
		if len(tb.Rows) != len(want) {
			t.Fatalf("%s: rows %v", name, tb.Rows)
		}
		for _, r := range tb.Rows {
			w, got := want[r.Cells[0]], r.Cells[len(r.Cells)-1]
			if got != w.verdict {
				t.Errorf("%s %s: verdict %q, want %q", name, r.Cells[0], got, w.verdict)
			}
			if (name == "results" || name == "spread") && r.Tone != w.tone {
				t.Errorf("%s %s: tone %d, want %d", name, r.Cells[0], r.Tone, w.tone)
			}
		}
	}
	if v, _ := StageVerdict(s, s.Stages[0]); strings.Contains(LatencyTable(s).Markdown(), "| ✓ 1/1 passed") || v != "✓ pass" {
		t.Errorf("summary.md still judges probes by the thresholds: %s", LatencyTable(s).Markdown())
	}
}

// Requests retried after a keep-alive race are shown with the errors, as
// not errors, also in a run that has none.
func TestErrorsTableShowsRetried(t *testing.T) {
	t.Parallel()
	r := &stats.Run{Retried: 7}
	tb := ErrorsTable(r)
	if len(tb.Rows) != 1 || tb.Rows[0].Cells[0] != RetriedLabel || tb.Rows[0].Cells[1] != "7" {
		t.Fatalf("rows %q", tb.Rows)
	}
	r.TopErrors = []stats.ErrorKind{{Error: "timeout", Count: 3}}
	if tb := ErrorsTable(r); len(tb.Rows) != 2 || tb.Rows[0].Cells[0] != "timeout" || tb.Rows[1].Cells[0] != RetriedLabel {
		t.Errorf("rows %q", tb.Rows)
	}
	if r.Retried = 0; len(ErrorsTable(r).Rows) != 1 || RetriedLine(r) != "" || RetriedNote(summary.Totals{}) != "" {
		t.Error("retried shown when there was none")
	}
}
