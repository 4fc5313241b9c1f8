package stats

import (
	"fmt"
	"strings"

	"github.com/tokex-dev/tokex/collector/table"
)

// LatencyTable is the article's "Latency by stage" (reported runs), with
// the reported run's success next to its latency and the stage's verdict.
func (s *Summary) LatencyTable() table.Table {
	t := table.New("Stage", "Target rate", "Requests", "Success", "avg", "median", "p90", "p95", "p99", "Runs")
	t.ID = "latency"
	for _, st := range s.Stages {
		r := st.Reported()
		if r == nil {
			t.Add(StageLabel(st.TargetRPS), "no finished run", "", "", "", "", "", "", "", st.Verdict())
			continue
		}
		l := r.LatencyMs
		row := []string{StageLabel(st.TargetRPS), fmt.Sprintf("%.1f%% achieved", r.AchievedRatio*100),
			Thousands(r.Requests), fmt.Sprintf("%.2f%%", r.SuccessRatio*100)}
		t.Add(append(append(row, latencyCells(r, l)...), st.Verdict())...)
	}
	return t
}

// latencyCells are avg, median, p90, p95 and p99, or dashes when no
// exchange completed.
func latencyCells(r *Run, l Latency) []string {
	if r.Requests == 0 {
		return []string{"—", "—", "—", "—", "—"}
	}
	return []string{ms(l.Avg), ms(l.P50), ms(l.P90), ms(l.P95), ms(l.P99)}
}

// ScheduleTable is the same from the scheduled time (coordinated-omission-free).
func (s *Summary) ScheduleTable() table.Table {
	t := table.New("Stage", "Dropped", "Success", "avg", "median", "p90", "p95", "p99", "Runs")
	t.ID = "schedule"
	for _, st := range s.Stages {
		r := st.Reported()
		if r == nil {
			t.Add(StageLabel(st.TargetRPS), "no finished run", "", "", "", "", "", "", st.Verdict())
			continue
		}
		row := []string{StageLabel(st.TargetRPS), Thousands(r.Dropped), fmt.Sprintf("%.2f%%", r.SuccessRatio*100)}
		t.Add(append(append(row, latencyCells(r, r.LatencyFromSched)...), st.Verdict())...)
	}
	return t
}

// ResourceTable is the article's "Resource consumption" (reported runs).
func (s *Summary) ResourceTable() table.Table {
	t := table.New("Stage", "Engine CPU avg", "Engine CPU peak", "Engine CPU per exchange", "Engine memory", "Runs")
	t.ID = "resources"
	for _, st := range s.Stages {
		r := st.Reported()
		if r == nil {
			t.Add(StageLabel(st.TargetRPS), "no finished run", "", "", "", st.Verdict())
			continue
		}
		if r.EngineCPU == nil {
			t.Add(StageLabel(st.TargetRPS), "n/a", "n/a", "n/a", "n/a", st.Verdict())
			continue
		}
		c := r.EngineCPU
		perEx := "n/a"
		if r.Requests > 0 {
			perEx = fmt.Sprintf("%.2f CPU-ms", c.CPUMsPerExchange)
		}
		t.Add(StageLabel(st.TargetRPS), fmt.Sprintf("%.2f cores", c.AvgCores),
			fmt.Sprintf("%.2f cores", c.PeakCores), perEx, BytesIEC(r.EngineMemoryBytes), st.Verdict())
	}
	return t
}

// ResultsTable is the dashboard's results: the article's two tables in one,
// the p95 of every round with the reported one in brackets, the reported
// run's success next to its latency, and the stage's verdict. flagged says
// which runs carry figures that are not the server's (marked ⚠).
func (s *Summary) ResultsTable(flagged func(runID string) bool) table.Table {
	t := table.New("Stage", "p95 per round (ms)", "Requests", "ok %", "p50", "p95", "p99", "cores", "CPU-ms/ex", "")
	t.Columns[1].Align, t.Columns[9].Align = table.Left, table.Left
	t.Columns[7].Drop, t.Columns[4].Drop, t.Columns[2].Drop = 1, 2, 3 // the verdict must stay in view
	for _, st := range s.Stages {
		spread := st.Spread()
		for i, r := range st.Runs {
			if r.ID == st.ReportedRun {
				spread[i] = "[" + spread[i] + "]"
			}
		}
		row := append([]string{StageLabel(st.TargetRPS), strings.Join(spread, " ")}, resultCells(st.Reported())...)
		mark, tone := "", table.Plain
		if st.Reported() != nil {
			mark, tone = "✓", table.Good
		}
		if n := len(st.FailedRuns); n > 0 {
			mark, tone = fmt.Sprintf("✗ %d failed", n), table.Bad
		}
		for _, r := range st.Runs {
			if flagged(r.ID) {
				mark += " ⚠"
				break
			}
		}
		t.AddTone(tone, append(row, mark)...)
	}
	return t
}

// resultCells are the reported run's requests, ok %, p50, p95, p99, cores
// and CPU-ms per exchange, blank without a reported run.
func resultCells(rep *Run) []string {
	if rep == nil {
		return []string{"", "", "", "", "", "", ""}
	}
	l := rep.LatencyMs
	cores, cpu := "n/a", "n/a"
	if rep.EngineCPU != nil {
		cores, cpu = fmt.Sprintf("%.2f", rep.EngineCPU.AvgCores), fmt.Sprintf("%.2f", rep.EngineCPU.CPUMsPerExchange)
	}
	lat := []string{fmt.Sprintf("%.1f", l.P50), fmt.Sprintf("%.1f", l.P95), fmt.Sprintf("%.1f", l.P99)}
	if rep.Requests == 0 {
		lat, cpu = []string{"—", "—", "—"}, "n/a"
	}
	row := []string{Thousands(rep.Requests), fmt.Sprintf("%.1f", rep.SuccessRatio*100)}
	return append(append(row, lat...), cores, cpu)
}
