package search

import (
	"testing"

	"github.com/tokex-dev/tokex/collector/stats"
)

// TestRound: a run that could not finish is a hard failure with its
// reason, a run with an invalidating warning the thresholds do not allow
// is invalid (the engine CPU's own warning aside), and a clean run is
// neither. (runner's search tests replay whole campaigns.)
func TestRound(t *testing.T) {
	t.Parallel()
	th := stats.Thresholds{P95Ms: 10, SuccessRatio: 0.99, AllowWarnings: []stats.WarningCode{stats.WarnHostSaturated}}
	warn := func(c stats.WarningCode) []stats.Warning { return []stats.Warning{stats.Warn(c, "r", "d")} }
	cases := []struct {
		name          string
		run           stats.Run
		hard, invalid string
	}{
		{"clean", stats.Run{Status: stats.StatusDone}, "", ""},
		{"failed", stats.Run{Status: stats.StatusFailed, Reason: "target unreachable"}, "failed: target unreachable", ""},
		{"aborted", stats.Run{Status: stats.StatusAborted}, "aborted", ""},
		{"late generator", stats.Run{Status: stats.StatusDone, Warnings: warn(stats.WarnGeneratorLate)}, "", "generator_late: d"},
		{"allowed", stats.Run{Status: stats.StatusDone, Warnings: warn(stats.WarnHostSaturated)}, "", ""},
		{"engine CPU implausible", stats.Run{Status: stats.StatusDone, Warnings: warn(stats.WarnEngineCPUImplausible)}, "", ""},
		{"not invalidating", stats.Run{Status: stats.StatusDone, Warnings: warn(stats.WarnDropped)}, "", ""},
	}
	for _, c := range cases {
		c.run.ID, c.run.LatencyMs.P95 = "r", 4
		rd := Round(&c.run, th)
		if rd.Hard != c.hard || rd.Invalid != c.invalid || rd.RunID != "r" || rd.P95Ms != 4 {
			t.Errorf("%s: %+v", c.name, rd)
		}
	}
}
