package stats

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/table"
)

// VerdictText is StageVerdict without its tone.
func (s *Summary) VerdictText(st *Stage) string { v, _ := s.StageVerdict(st); return v }

// StageVerdict is the stage's verdict in every table, with its tone. In a
// capacity search (Capacity set) a stage is a probe, and its verdict is the
// search's: "✓ pass", "✗ broken: p99 72.8 ms vs 50 ms", "? invalid: …",
// "! hard: …", "… judging" until the probe is judged; the run thresholds
// do not judge a probe. Otherwise it is how the stage's runs fared against
// the thresholds (Stage.Verdict).
func (s *Summary) StageVerdict(st *Stage) (string, table.Tone) {
	if s.Capacity == nil {
		tone := table.Good
		if len(st.FailedRuns) > 0 {
			tone = table.Bad
		}
		return st.Verdict(), tone
	}
	var p *curve.Probe
	for i := range s.Capacity.Probes {
		if x := &s.Capacity.Probes[i]; x.Rate == st.TargetRPS {
			p = x // the search's last word on the rate
		}
	}
	if p == nil || p.Verdict == "" {
		return "… judging", table.Plain // rounds still to run
	}
	return ProbeVerdict(p)
}

// ProbeVerdict is a judged probe's verdict with what broke or why it did
// not count: "✗ broken: p99 72.8 ms vs 50 ms", with its tone.
func ProbeVerdict(p *curve.Probe) (string, table.Tone) {
	mark, tone := ProbeMark(p.Verdict)
	v := mark + " " + string(p.Verdict)
	switch {
	case len(p.Broken) > 0:
		v += ": " + strings.Join(p.Broken, "; ")
	case p.Reason != "":
		v += ": " + p.Reason
	}
	return v, tone
}

// LatencyTable is the article's "Latency by stage" (reported runs), with
// the reported run's success next to its latency and the stage's verdict.
func (s *Summary) LatencyTable() table.Table {
	t := table.New("Stage", "Target rate", "Requests", "Success", "avg", "median", "p90", "p95", "p99", "Runs")
	t.ID = "latency"
	for _, st := range s.Stages {
		r := st.Reported()
		if r == nil {
			t.Add(StageLabel(st.TargetRPS), "no finished run", "", "", "", "", "", "", "", s.VerdictText(st))
			continue
		}
		l := r.LatencyMs
		row := []string{StageLabel(st.TargetRPS), fmt.Sprintf("%.1f%% achieved", r.AchievedRatio*100),
			Thousands(r.Requests), fmt.Sprintf("%.2f%%", r.SuccessRatio*100)}
		t.Add(append(append(row, latencyCells(r, l)...), s.VerdictText(st))...)
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
			t.Add(StageLabel(st.TargetRPS), "no finished run", "", "", "", "", "", "", s.VerdictText(st))
			continue
		}
		row := []string{StageLabel(st.TargetRPS), Thousands(r.Dropped), fmt.Sprintf("%.2f%%", r.SuccessRatio*100)}
		t.Add(append(append(row, latencyCells(r, r.LatencyFromSched)...), s.VerdictText(st))...)
	}
	return t
}

// ResourceTable is the article's "Resource consumption" (reported runs).
func (s *Summary) ResourceTable() table.Table {
	t := table.New("Stage", "Engine CPU avg", "Engine CPU peak", "Engine CPU per exchange", "Engine memory", "Measured by", "Runs")
	t.ID = "resources"
	t.Columns[5].Align = table.Left
	for _, st := range s.Stages {
		r := st.Reported()
		if r == nil {
			t.Add(StageLabel(st.TargetRPS), "no finished run", "", "", "", "", s.VerdictText(st))
			continue
		}
		if r.EngineCPU == nil {
			t.Add(StageLabel(st.TargetRPS), "n/a", "n/a", "n/a", "n/a", "n/a", s.VerdictText(st))
			continue
		}
		c := r.EngineCPU
		perEx := "n/a"
		if r.Requests > 0 {
			perEx = fmt.Sprintf("%.2f CPU-ms", c.CPUMsPerExchange)
		}
		t.Add(StageLabel(st.TargetRPS), fmt.Sprintf("%.2f cores", c.AvgCores),
			fmt.Sprintf("%.2f cores", c.PeakCores), perEx, BytesIEC(r.EngineMemoryBytes), c.SourceLabel(), s.VerdictText(st))
	}
	return t
}

// cpuSources name, in one short label each, the sources resource samples
// carry (collector/proc's kinds, the kube driver's, the k6 import's).
var cpuSources = []struct{ source, label string }{
	{"proc-tree", "pid tree"}, {"proc", "pid"}, {"cgroup", "cgroup"}, {"prometheus", "prometheus"},
	{"metrics-server", "metrics-server"}, {"kubelet", "kubelet"}, {"monitor-csv", "monitor CSV"},
}

// SourceLabel says how the engine CPU was measured in one short label:
// "pid tree", "cgroup", "prometheus", "metrics-server"…; several sources
// joined by "+", "other" for one this tokex does not know (evidence is not
// trusted to name itself), "n/a" when the evidence does not say.
func (c *CPU) SourceLabel() string {
	if c == nil || c.Source == "" {
		return "n/a"
	}
	var labels []string
	for _, part := range strings.Split(c.Source, ", ") {
		label := "other"
		for _, k := range cpuSources {
			if part == k.source || strings.HasPrefix(part, k.source+" ") {
				label = k.label
				break
			}
		}
		if !slices.Contains(labels, label) {
			labels = append(labels, label)
		}
	}
	return strings.Join(labels, "+")
}

// ResultsTable is the dashboard's results: the article's two tables in one,
// the p95 of every round with the reported one in brackets, the reported
// run's success next to its latency, and the stage's verdict. flagged says
// which runs carry figures that are not the server's (marked ⚠).
func (s *Summary) ResultsTable(flagged func(runID string) bool) table.Table {
	t := table.New("Stage", "p95 per round (ms)", "Requests", "ok %", "p50", "p95", "p99", "cores", "CPU-ms/ex", "CPU by", "")
	t.Columns[1].Align, t.Columns[9].Align, t.Columns[10].Align = table.Left, table.Left, table.Left
	// The verdict must stay in view.
	t.Columns[9].Drop, t.Columns[7].Drop, t.Columns[4].Drop, t.Columns[2].Drop = 1, 2, 3, 4
	for _, st := range s.Stages {
		spread := st.Spread()
		for i, r := range st.Runs {
			if r.ID == st.ReportedRun {
				spread[i] = "[" + spread[i] + "]"
			}
		}
		row := append([]string{StageLabel(st.TargetRPS), strings.Join(spread, " ")}, resultCells(st.Reported())...)
		mark, tone := s.resultMark(st)
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

// ProbeMark is a probe verdict's mark and tone: ✓ pass, ✗ broken,
// ? invalid, ! hard failure, … not judged yet.
func ProbeMark(v curve.Verdict) (string, table.Tone) {
	switch v {
	case curve.Pass:
		return "✓", table.Good
	case curve.Broken:
		return "✗", table.Bad
	case curve.Invalid:
		return "?", table.Warn
	case curve.Hard:
		return "!", table.Bad
	}
	return "…", table.Plain
}

// resultMark is the results table's verdict: in a capacity search the
// probe's, otherwise ✓ or how many runs failed.
func (s *Summary) resultMark(st *Stage) (string, table.Tone) {
	switch {
	case s.Capacity != nil:
		return s.StageVerdict(st)
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
func resultCells(rep *Run) []string {
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
	row := []string{Thousands(rep.Requests), fmt.Sprintf("%.1f", rep.SuccessRatio*100)}
	return append(append(row, lat...), cores, cpu, rep.EngineCPU.SourceLabel())
}

// SpreadTable is the per-run p95 of every stage (✗ marks a failed run),
// its reported run and its verdict (StageVerdict), coloured by it.
func (s *Summary) SpreadTable() table.Table {
	t := table.New("Stage", "p95 per run (ms; ✗ failed)", "reported run", "runs")
	t.ID, t.Columns[3].Toned = "spread", true
	for _, st := range s.Stages {
		v, tone := s.StageVerdict(st)
		t.AddTone(tone, StageLabel(st.TargetRPS), strings.Join(st.Spread(), " / "), st.ReportedRun, v)
	}
	return t
}

// StatsTable is one run's figures in one row: counts, latency from send
// and from schedule, and the engine's CPU with how it was measured.
func (r *Run) StatsTable() table.Table {
	t := table.New("requests", "achieved", "success", "dropped", "avg", "p50", "p90", "p95", "p99", "max",
		"p95 from schedule", "engine cores", "CPU-ms / exchange")
	t.Class = "runstats"
	l := r.LatencyMs
	cores, perEx := "n/a", "n/a"
	if c := r.EngineCPU; c != nil {
		cores, perEx = fmt.Sprintf("%.2f", c.AvgCores), fmt.Sprintf("%.2f (%s)", c.CPUMsPerExchange, c.Method)
	}
	t.Add(Thousands(r.Requests), pct2(r.AchievedRatio), pct2(r.SuccessRatio), Thousands(r.Dropped),
		ms2(l.Avg), ms2(l.P50), ms2(l.P90), ms2(l.P95), ms2(l.P99), ms2(l.Max), ms2(r.LatencyFromSched.P95), cores, perEx)
	return t
}

// ErrorsTable is the run's most common errors, each with what the server
// said about it (most common first, one line each), then the requests
// retried after a keep-alive race, which are not errors.
func (r *Run) ErrorsTable() table.Table {
	t := table.New("error", "count", "what the server said (most common first)")
	t.Class, t.Columns[2].Class = "errors", "desc"
	for _, e := range r.TopErrors {
		said := make([]string, len(e.Descriptions))
		for i, d := range e.Descriptions {
			said[i] = d.Text + " (" + Thousands(d.Count) + ")"
		}
		t.Add(e.Error, Thousands(e.Count), strings.Join(said, "\n"))
	}
	if r.Retried > 0 {
		t.Add(RetriedLabel, Thousands(r.Retried), RetriedMeaning)
	}
	return t
}

// RetriedLabel and RetriedMeaning name and explain Run.Retried wherever
// error counts are shown.
const (
	RetriedLabel   = "retried (not an error)"
	RetriedMeaning = "sent again on a new connection: the kept-alive one it went out on was closed by the server before any answer (a keep-alive race)"
)

// RetriedLine is a run's retried count in a sentence; "" when none.
func (r *Run) RetriedLine() string {
	if r.Retried == 0 {
		return ""
	}
	return fmt.Sprintf("%s× %s: %s", Thousands(r.Retried), RetriedLabel, RetriedMeaning)
}

// RetriedNote is ", N retried after a keep-alive race (not errors)" for
// a campaign's totals; "" when none.
func (t Totals) RetriedNote() string {
	if t.Retried == 0 {
		return ""
	}
	return fmt.Sprintf(", %s retried after a keep-alive race (not errors)", Thousands(t.Retried))
}

// pct2 and ms2 are the run tables' two-decimal ratio and milliseconds.
func pct2(v float64) string { return fmt.Sprintf("%.2f%%", v*100) }
func ms2(v float64) string  { return fmt.Sprintf("%.2f ms", v) }
