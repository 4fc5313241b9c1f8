package stats

import (
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/table"
)

// The dashboard's results table: every round's p95 with the reported run
// in brackets, the reported run's figures, the verdict, its tone, and the
// ⚠ of a stage with a flagged run.
func TestResultsTable(t *testing.T) {
	mk := func(id string, rps float64, round int, p95 float64, passed bool) *Run {
		return &Run{ID: id, TargetRPS: rps, Round: round, Status: StatusDone, Requests: 1500, OK: 1500, SuccessRatio: 1,
			LatencyMs: Latency{P50: p95 / 2, P95: p95, P99: p95 * 2}, EngineCPU: &CPU{AvgCores: 0.5, CPUMsPerExchange: 5}, ThresholdsPassed: passed}
	}
	s := &Summary{Thresholds: Thresholds{P95Ms: 500}}
	BuildSummary(s, []*Run{mk("a", 100, 1, 7, true), mk("b", 100, 2, 9, true), mk("c", 100, 3, 8, true),
		mk("d", 250, 1, 600, false), {ID: "e", TargetRPS: 500, Round: 1, Status: StatusAborted}}, false)
	tb := s.ResultsTable(func(id string) bool { return id == "b" })
	want := []struct {
		cells string
		tone  table.Tone
	}{
		{"100/s|7.00 9.00 [8.00]|1,500|100.0|4.0|8.0|16.0|0.50|5.00|✓ ⚠", table.Good},
		{"250/s|[600.00 ✗]|1,500|100.0|300.0|600.0|1200.0|0.50|5.00|✗ 1 failed", table.Bad},
		{"500/s|aborted||||||||", table.Plain},
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
