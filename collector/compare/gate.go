package compare

import (
	"fmt"
	"slices"

	"github.com/tokex-dev/tokex/collector/units"
)

// Gated are the figures a CI gate judges (tokex compare
// --fail-on-regression): for each, higher is worse.
var Gated = []string{"p95", "p99", "cpu_ms_per_exchange"}

// Finding is a gated figure of a stage: got worse beyond noise
// (Regression), or could not be judged.
type Finding struct {
	TargetRPS float64 `json:"target_rps"`
	Replicas  int     `json:"replicas,omitempty"` // the stage's engine count (campaigns over engine counts)
	Metric    Metric  `json:"metric"`
}

// String says which figure, by how much, against what noise:
// "100/s p95: 12.30 → 15.10 ms (+2.80 ms, +22.8 %), beyond the round-to-round noise of ±0.40 ms".
func (f Finding) String() string {
	m := f.Metric
	return fmt.Sprintf("%s %s: %.2f → %.2f %s (%+.2f %s, %+.1f %%), beyond the round-to-round noise of ±%.2f %s (%d/%d rounds)",
		units.StageLabel(f.TargetRPS)+units.EnginesLabel(f.Replicas), m.Name, m.A, m.B, m.Unit, m.Diff, m.Unit, m.DiffPct, m.Noise, m.Unit, m.Rounds[0], m.Rounds[1])
}

// IsGated reports whether a figure is one the gate judges.
func IsGated(name string) bool { return slices.Contains(Gated, name) }

// Regressed reports a gated figure that B made worse beyond noise: higher
// by more than the largest spread between rounds of the stage in A or B
// (compare's noise rule).
func (m Metric) Regressed() bool { return IsGated(m.Name) && !m.Missing && m.Verdict == "B higher" }

// Regressions are the gated figures B made worse beyond noise.
func (r *Result) Regressions() []Finding {
	var out []Finding
	for _, st := range r.Stages {
		for _, m := range st.Metrics {
			if m.Regressed() {
				out = append(out, Finding{TargetRPS: st.TargetRPS, Replicas: st.Replicas, Metric: m})
			}
		}
	}
	return out
}

// Unjudged are the gated figures the gate cannot judge: not measured in
// both, or a single round each (no noise to judge against), and the stages
// only one campaign ran.
func (r *Result) Unjudged() []string {
	var out []string
	for _, st := range r.Stages {
		if st.Only != "" {
			out = append(out, fmt.Sprintf("%s: only in %s", units.StageLabel(st.TargetRPS), st.Only))
			continue
		}
		for _, m := range st.Metrics {
			if IsGated(m.Name) && (m.Missing || m.Rounds[0] < 2 && m.Rounds[1] < 2) {
				out = append(out, fmt.Sprintf("%s %s: %s", units.StageLabel(st.TargetRPS), m.Name, m.Verdict))
			}
		}
	}
	return out
}
