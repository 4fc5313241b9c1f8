package doc

import (
	"fmt"
	"strings"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/table"
	"github.com/tokex-dev/tokex/collector/units"
)

// LatencyTable is the article's latency table (reported runs), with the
// reported run's success next to its latency and the stage's verdict.
func LatencyTable(s *summary.Summary) table.Table {
	t := table.New("Stage", "Target rate", "Requests", "Success", "avg", "median", "p90", "p95", "p99", "Runs")
	t.ID = "latency"
	for _, st := range s.Stages {
		r := st.Reported()
		if r == nil {
			t.Add(st.Label(), "no finished run", "", "", "", "", "", "", "", VerdictText(s, st))
			continue
		}
		l := r.LatencyMs
		row := []string{st.Label(), fmt.Sprintf("%.1f%% achieved", r.AchievedRatio*100),
			units.Thousands(r.Requests), fmt.Sprintf("%.2f%%", r.SuccessRatio*100)}
		t.Add(append(append(row, latencyCells(r, l)...), VerdictText(s, st))...)
	}
	return t
}

// latencyCells are avg, median, p90, p95 and p99, or dashes when no
// exchange completed.
func latencyCells(r *stats.Run, l stats.Latency) []string {
	if r.Requests == 0 {
		return []string{"—", "—", "—", "—", "—"}
	}
	return []string{ms(l.Avg), ms(l.P50), ms(l.P90), ms(l.P95), ms(l.P99)}
}

// ScheduleTable is the same from the scheduled time (coordinated-omission-free).
func ScheduleTable(s *summary.Summary) table.Table {
	t := table.New("Stage", "Dropped", "Success", "avg", "median", "p90", "p95", "p99", "Runs")
	t.ID = "schedule"
	for _, st := range s.Stages {
		r := st.Reported()
		if r == nil {
			t.Add(st.Label(), "no finished run", "", "", "", "", "", "", VerdictText(s, st))
			continue
		}
		row := []string{st.Label(), units.Thousands(r.Dropped), fmt.Sprintf("%.2f%%", r.SuccessRatio*100)}
		t.Add(append(append(row, latencyCells(r, r.LatencyFromSched)...), VerdictText(s, st))...)
	}
	return t
}

// ResourceTable is the article's resource table (reported runs).
func ResourceTable(s *summary.Summary) table.Table {
	t := table.New("Stage", "Engine CPU avg", "Engine CPU peak", "Engine CPU per exchange", "Engine memory", "Measured by", "Runs")
	t.ID = "resources"
	t.Columns[5].Align = table.Left
	for _, st := range s.Stages {
		r := st.Reported()
		if r == nil {
			t.Add(st.Label(), "no finished run", "", "", "", "", VerdictText(s, st))
			continue
		}
		if r.EngineCPU == nil {
			t.Add(st.Label(), "n/a", "n/a", "n/a", "n/a", "n/a", VerdictText(s, st))
			continue
		}
		c := r.EngineCPU
		perEx := "n/a"
		if r.Requests > 0 {
			perEx = fmt.Sprintf("%.2f CPU-ms", c.CPUMsPerExchange)
		}
		t.Add(st.Label(), fmt.Sprintf("%.2f cores", c.AvgCores),
			fmt.Sprintf("%.2f cores", c.PeakCores), perEx, units.BytesIEC(r.EngineMemoryBytes), SourceLabel(c), VerdictText(s, st))
	}
	return t
}

// ResultsTable is the dashboard's results: the article's two tables in one,
// the p95 of every round with the reported one in brackets, the reported
// run's success next to its latency, and the stage's verdict. flagged says
// which runs carry figures that are not the server's (marked ⚠).
func ResultsTable(s *summary.Summary, flagged func(runID string) bool) table.Table {
	t := table.New("Stage", "p95 per round (ms)", "Requests", "ok %", "p50", "p95", "p99", "cores", "CPU-ms/ex", "CPU by", "")
	t.Columns[1].Align, t.Columns[9].Align, t.Columns[10].Align = table.Left, table.Left, table.Left
	// The verdict must stay in view.
	t.Columns[9].Drop, t.Columns[7].Drop, t.Columns[4].Drop, t.Columns[2].Drop = 1, 2, 3, 4
	for _, st := range s.Stages {
		spread := Spread(st)
		for i, r := range st.Runs {
			if r.ID == st.ReportedRun {
				spread[i] = "[" + spread[i] + "]"
			}
		}
		row := append([]string{st.Label(), strings.Join(spread, " ")}, resultCells(st.Reported())...)
		mark, tone := resultMark(s, st)
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

// resultMark is the results table's verdict: in a capacity search the
// probe's, otherwise ✓ or how many runs failed.
func resultMark(s *summary.Summary, st *summary.Stage) (string, table.Tone) {
	switch {
	case s.Capacity != nil:
		return StageVerdict(s, st)
	case len(st.FailedRuns) > 0:
		return fmt.Sprintf("✗ %d failed", len(st.FailedRuns)), table.Bad
	case st.Reported() != nil:
		return "✓", table.Good
	}
	return "", table.Plain
}

// resultCells are the reported run's requests, ok %, p50, p95, p99, cores,
// CPU-ms per exchange and how the CPU was measured, blank without a
// reported run.
func resultCells(rep *stats.Run) []string {
	if rep == nil {
		return []string{"", "", "", "", "", "", "", ""}
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
	row := []string{units.Thousands(rep.Requests), fmt.Sprintf("%.1f", rep.SuccessRatio*100)}
	return append(append(row, lat...), cores, cpu, SourceLabel(rep.EngineCPU))
}

// SpreadTable is the per-run p95 of every stage (✗ marks a failed run),
// its reported run and its verdict (StageVerdict), coloured by it.
func SpreadTable(s *summary.Summary) table.Table {
	t := table.New("Stage", "p95 per run (ms; ✗ failed)", "reported run", "runs")
	t.ID, t.Columns[3].Toned = "spread", true
	for _, st := range s.Stages {
		v, tone := StageVerdict(s, st)
		t.AddTone(tone, st.Label(), strings.Join(Spread(st), " / "), st.ReportedRun, v)
	}
	return t
}

// RunTable is one run's figures in one row: counts, latency from send
// and from schedule, and the engine's CPU with how it was measured.
func RunTable(r *stats.Run) table.Table {
	t := table.New("requests", "achieved", "success", "dropped", "avg", "p50", "p90", "p95", "p99", "max",
		"p95 from schedule", "engine cores", "CPU-ms / exchange")
	t.Class = "runstats"
	l := r.LatencyMs
	cores, perEx := "n/a", "n/a"
	if c := r.EngineCPU; c != nil {
		cores, perEx = fmt.Sprintf("%.2f", c.AvgCores), fmt.Sprintf("%.2f (%s)", c.CPUMsPerExchange, c.Method)
	}
	t.Add(units.Thousands(r.Requests), pct2(r.AchievedRatio), pct2(r.SuccessRatio), units.Thousands(r.Dropped),
		ms2(l.Avg), ms2(l.P50), ms2(l.P90), ms2(l.P95), ms2(l.P99), ms2(l.Max), ms2(r.LatencyFromSched.P95), cores, perEx)
	return t
}

// ErrorsTable is the run's most common errors, each with what the server
// said about it (most common first, one line each), then the requests
// retried after a keep-alive race, which are not errors.
func ErrorsTable(r *stats.Run) table.Table {
	t := table.New("error", "count", "what the server said (most common first)")
	t.Class, t.Columns[2].Class = "errors", "desc"
	for _, e := range r.TopErrors {
		said := make([]string, len(e.Descriptions))
		for i, d := range e.Descriptions {
			said[i] = d.Text + " (" + units.Thousands(d.Count) + ")"
		}
		t.Add(e.Error, units.Thousands(e.Count), strings.Join(said, "\n"))
	}
	if r.Retried > 0 {
		t.Add(RetriedLabel, units.Thousands(r.Retried), RetriedMeaning)
	}
	return t
}

// ProbeTable is the capacity search's probes in the order they ran.
func ProbeTable(r *curve.Result) table.Table {
	t := table.New("#", "Rate", "Rounds", "p50", "p95", "p99", "Success", "Achieved", "Engine cores", "Verdict")
	t.ID = "probes"
	t.Columns[len(t.Columns)-1].Align = table.Left
	for i, p := range r.Probes {
		verdict := string(p.Verdict)
		switch {
		case len(p.Broken) > 0:
			verdict += ": " + strings.Join(p.Broken, "; ")
		case p.Reason != "":
			verdict += ": " + p.Reason
		}
		if p.Noise != "" {
			verdict += " (" + p.Noise + ")"
		}
		cores := "n/a"
		if p.EngineCores > 0 {
			cores = fmt.Sprintf("%.3f", p.EngineCores)
		}
		valid := len(p.Valid())
		rounds := fmt.Sprintf("%d", len(p.Rounds))
		if valid != len(p.Rounds) {
			rounds = fmt.Sprintf("%d (%d valid)", len(p.Rounds), valid)
		}
		row := []string{fmt.Sprint(i + 1), units.StageLabel(p.Rate), rounds, "", "", "", "", "", cores, verdict}
		if valid > 0 {
			row[3], row[4], row[5] = ms(p.P50Ms), ms(p.P95Ms), ms(p.P99Ms)
			row[6], row[7] = fmt.Sprintf("%.2f%%", p.SuccessRatio*100), fmt.Sprintf("%.1f/s", p.AchievedRPS)
		}
		tone := table.Plain
		switch p.Verdict {
		case curve.Pass:
			tone = table.Good
		case curve.Broken, curve.Hard:
			tone = table.Bad
		case curve.Invalid:
			tone = table.Warn
		}
		t.AddTone(tone, row...)
	}
	return t
}
