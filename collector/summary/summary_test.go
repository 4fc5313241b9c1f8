package summary

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

func TestMedianRunSelection(t *testing.T) {
	t.Parallel()
	mk := func(id string, round int, p95 float64, st stats.RunStatus) *stats.Run {
		return &stats.Run{ID: id, Round: round, Status: st, Requests: 10, LatencyMs: stats.Latency{P95: p95}, ThresholdsPassed: true}
	}
	failed := func(r *stats.Run) *stats.Run { r.ThresholdsPassed, r.SuccessRatio = false, 0; return r }
	cases := []struct {
		name string
		runs []*stats.Run
		want string
	}{
		{"three", []*stats.Run{mk("a", 1, 9.51, stats.StatusDone), mk("b", 2, 9.03, stats.StatusDone), mk("c", 3, 10.01, stats.StatusDone)}, "a"},
		{"aborted ignored, even takes the worse", []*stats.Run{mk("a", 1, 1, stats.StatusDone), mk("b", 2, 2, stats.StatusAborted), mk("c", 3, 3, stats.StatusDone)}, "c"},
		{"even takes the worse", []*stats.Run{mk("a", 1, 4, stats.StatusDone), mk("b", 2, 3, stats.StatusDone)}, "a"},
		{"tie by round", []*stats.Run{mk("a", 2, 5, stats.StatusDone), mk("b", 1, 5, stats.StatusDone), mk("c", 3, 5, stats.StatusDone)}, "a"},
		{"none", []*stats.Run{mk("a", 1, 1, stats.StatusFailed)}, ""},
		// A dead target answers fast: its run must not pull the median down.
		{"failed fast run ranks last", []*stats.Run{mk("a", 1, 9.5, stats.StatusDone), failed(mk("b", 2, 4.9, stats.StatusDone)), mk("c", 3, 9.8, stats.StatusDone)}, "c"},
		{"one of two failed", []*stats.Run{mk("a", 1, 9.5, stats.StatusDone), failed(mk("b", 2, 4.9, stats.StatusDone))}, "b"},
		{"most failed", []*stats.Run{mk("a", 1, 9.5, stats.StatusDone), failed(mk("b", 2, 4.9, stats.StatusDone)), failed(mk("c", 3, 4.8, stats.StatusDone))}, "c"},
		{"no exchange after failed", []*stats.Run{failed(mk("a", 1, 30, stats.StatusDone)), failed(&stats.Run{ID: "b", Round: 2, Status: stats.StatusDone}), mk("c", 3, 6, stats.StatusDone)}, "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := MedianRun(c.runs); got != c.want {
				t.Errorf("got %q want %q", got, c.want)
			}
		})
	}
}

// A stage with a failed run says so in the stage's fields and a coded
// warning (doc: in every table), and the reported run is never it when
// most runs passed.
func TestStageWithFailedRunSaysSo(t *testing.T) {
	t.Parallel()
	mk := func(id string, round int, p95 float64) *stats.Run {
		return &stats.Run{ID: id, TargetRPS: 100, Round: round, Status: stats.StatusDone, Requests: 1000, OK: 1000, SuccessRatio: 1, AchievedRatio: 1,
			LatencyMs: stats.Latency{P50: p95 / 2, P95: p95}, EngineCPU: &stats.CPU{AvgCores: 0.5, CPUMsPerExchange: 5}, ThresholdsPassed: true,
			Thresholds: []stats.ThresholdResult{{Name: "success_ratio >=", Limit: 0.99, Actual: 1, Passed: true}}}
	}
	dead := mk("02-r2-100rps", 2, 4.9)
	dead.OK, dead.SuccessRatio, dead.ThresholdsPassed = 0, 0, false
	dead.Thresholds = []stats.ThresholdResult{{Name: "success_ratio >=", Limit: 0.99, Actual: 0, Passed: false}}
	s := &Summary{Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}}
	BuildSummary(s, []*stats.Run{mk("01-r1-100rps", 1, 9.5), dead, mk("03-r3-100rps", 3, 9.8)}, true)
	st := s.Stages[0]
	if st.ReportedRun != "03-r3-100rps" {
		t.Errorf("reported %s, want the worse passing run 03-r3-100rps", st.ReportedRun)
	}
	if st.ThresholdsPassed || len(st.FailedRuns) != 1 || st.FailedRuns[0] != "02-r2-100rps" || s.ThresholdsPassed {
		t.Errorf("stage passed %v failed runs %v, campaign passed %v", st.ThresholdsPassed, st.FailedRuns, s.ThresholdsPassed)
	}
	var found bool
	for _, w := range s.Warnings {
		if w.Code == stats.WarnStageFailedRun && strings.Contains(w.Detail, "100/s: 1 of 3 runs failed: 02-r2-100rps (success_ratio >= 0.99 (was 0))") {
			found = true
		}
	}
	if !found {
		t.Errorf("warnings %v", s.Warnings)
	}
	b, _ := json.Marshal(s)
	if !strings.Contains(string(b), `"thresholds_passed":false,"failed_runs":["02-r2-100rps"]`) || !strings.Contains(string(b), `"reported_run_rule":`) {
		t.Errorf("summary.json: %s", b)
	}
	// Unknown thresholds (a summary recomputed without them) fail no stage.
	u := &Summary{}
	BuildSummary(u, []*stats.Run{mk("01-r1-100rps", 1, 9.5), dead}, false)
	if len(u.Stages[0].FailedRuns) != 0 || len(u.Warnings) != 0 {
		t.Errorf("unknown thresholds: failed %v warnings %v", u.Stages[0].FailedRuns, u.Warnings)
	}
}

func TestBuildSummary(t *testing.T) {
	t.Parallel()
	mk := func(id string, rps float64, round int, p95 float64) *stats.Run {
		return &stats.Run{ID: id, TargetRPS: rps, Round: round, Status: stats.StatusDone, Requests: 30008, OK: 30008,
			SuccessRatio: 1, AchievedRatio: 1, LatencyMs: stats.Latency{Avg: 5.4, P50: 5.1, P90: 6.9, P95: p95, P99: 9.7},
			EngineCPU: &stats.CPU{AvgCores: 0.56, PeakCores: 0.62, CPUMsPerExchange: 5.6}, ThresholdsPassed: true}
	}
	runs := []*stats.Run{{ID: "s", Sanity: true, Status: stats.StatusDone}, mk("a", 100, 1, 7.23), mk("b", 100, 2, 7.54), mk("c", 100, 3, 7.72)}
	s := &Summary{}
	BuildSummary(s, runs, true)
	if !s.ThresholdsPassed || s.Stages[0].ReportedRun != "b" || s.Sanity == nil || s.Totals.Exchanges != 3*30008 {
		t.Fatalf("%+v", s)
	}
	BuildSummary(s, runs, false)
	if s.ThresholdsPassed {
		t.Error("an incomplete campaign passed")
	}
}

// The runs' verified tokens add up in the totals and are said in
// summary.md (issue 23 item 6: the evidence did not say how many).
func TestVerifiedTokensAreCounted(t *testing.T) {
	t.Parallel()
	runs := []*stats.Run{
		{ID: "s", Sanity: true, Status: stats.StatusDone, Verification: &sample.Verification{Sample: 0.1, Checked: 99, Failed: 99}},
		{ID: "a", TargetRPS: 10, Status: stats.StatusDone, Requests: 100, OK: 98, Verification: &sample.Verification{Sample: 0.1, Checked: 11, Failed: 2}},
		{ID: "b", TargetRPS: 20, Status: stats.StatusDone, Requests: 200, OK: 200, Verification: &sample.Verification{Sample: 0.1, Checked: 19}},
		{ID: "c", TargetRPS: 30, Status: stats.StatusAborted, Verification: &sample.Verification{Sample: 0.1, Checked: 5, Failed: 5}},
	}
	s := &Summary{}
	BuildSummary(s, runs, false)
	if v := s.Totals.Verified; v == nil || v.Checked != 30 || v.Failed != 2 || v.Sample != 0.1 {
		t.Fatalf("totals %+v", s.Totals.Verified)
	}
	runs[1].Verification = nil
	BuildSummary(s, runs[1:2], true)
	if s.Totals.Verified != nil {
		t.Errorf("no verification, yet %+v", s.Totals.Verified)
	}
}

func TestSendLagDefinitionPerDriver(t *testing.T) {
	t.Parallel()
	for driver, want := range map[string]string{"local": "minted ahead", "kube (e2e/default)": "includes minting", "k6 import": "unknown"} {
		s := &Summary{Driver: driver}
		BuildSummary(s, nil, true)
		if !strings.Contains(s.SendLagDefinition, want) {
			t.Errorf("%s: %q", driver, s.SendLagDefinition)
		}
	}
}
