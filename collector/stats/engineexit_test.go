package stats

import (
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/sample"
)

// TestNoCPUFigureFromAnEngineThatExited (issue 23): a server killed 30 %
// into the window leaves samples only for that part; averaged over the
// whole window and divided by its few responses, it read 10.29 CPU-ms per
// exchange against ~3.2, and was reported. A run whose engine exited (the
// driver's engine_exited warning) has no engine CPU figure.
func TestNoCPUFigureFromAnEngineThatExited(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	m := RunMeta{ID: "01-r1-100rps", TargetRPS: 100, Status: StatusFailed, Reason: "the engine process is gone",
		Started: start, MeasuredStart: start, MeasuredEnd: start.Add(10 * time.Second)}
	died := start.Add(3 * time.Second)
	var reqs []Request
	for at := start; at.Before(m.MeasuredEnd); at = at.Add(10 * time.Millisecond) {
		r := Request{ScheduledUS: at.UnixMicro(), SendLagUS: 50, DurationUS: 1000, Status: 200, Outcome: "ok", Phase: Measured}
		if !at.Before(died) {
			r = Request{ScheduledUS: at.UnixMicro(), SendLagUS: 50, DurationUS: 100, Outcome: "conn_error", Phase: Measured}
		}
		reqs = append(reqs, r)
	}
	var res []sample.Resource // 3.2 ms per exchange at 100/s: 320 millicores, until it died
	for at := start.Add(-time.Second); at.Before(died); at = at.Add(time.Second) {
		res = append(res, sample.Resource{AtUS: at.UnixMicro(), Kind: "engine", Name: "e", CPUMillicores: 320,
			CPUSecondsTotal: 1 + 0.32*at.Sub(start).Seconds(), Source: "proc-tree"})
	}
	th := Thresholds{P95Ms: 500, SuccessRatio: 0.99}
	if c := ComputeRun(m, reqs, res, th).EngineCPU; c == nil || c.CPUMsPerExchange < 2*3.2 {
		t.Fatalf("without the warning the extrapolated figure is the bug this test is about: %+v", c)
	}
	m.Warnings = []Warning{Warn(WarnEngineExited, "", "the engine process is gone: process 1234 exited")}
	r := ComputeRun(m, reqs, res, th)
	if r.EngineCPU != nil {
		t.Errorf("engine CPU %+v reported for an engine that exited", *r.EngineCPU)
	}
	var said bool
	for _, w := range r.Warnings {
		said = said || (w.Code == WarnEngineCPUUnknown && strings.Contains(w.Detail, "exited"))
	}
	if !said || r.ThresholdsPassed {
		t.Errorf("warnings %v, passed %v", r.Warnings, r.ThresholdsPassed)
	}
}
