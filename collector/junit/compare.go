package junit

import (
	"fmt"
	"time"

	"github.com/tokex-dev/tokex/collector/compare"
	"github.com/tokex-dev/tokex/collector/units"
)

// FromCompare is a comparison's verdicts: a suite per stage, a case per
// compared figure — failed when a gated figure (p95, p99, CPU-ms per
// exchange) got worse beyond noise, skipped when it cannot be judged.
func FromCompare(r *compare.Result, at time.Time) *Suites {
	const pkg = "tokex.compare"
	d := &Suites{}
	props := []Property{Prop("a", r.A), Prop("b", r.B), Prop("noise rule", "a difference no larger than the largest spread between rounds of the stage, in A or B, is within noise"),
		Prop("gated", fmt.Sprint(compare.Gated))}
	for _, st := range r.Stages {
		suite := NewSuite(pkg, "stage "+units.StageLabel(st.TargetRPS)+units.EnginesLabel(st.Replicas), len(d.Suites), at, props...)
		if st.Only != "" {
			suite.Add("stage in both", Skip, "only in "+st.Only, 0)
			d.Suites = append(d.Suites, suite)
			continue
		}
		for _, m := range st.Metrics {
			name := m.Name + " at " + units.StageLabel(st.TargetRPS) + units.EnginesLabel(st.Replicas)
			msg := fmt.Sprintf("%s: A %.3f %s, B %.3f %s, B − A %+.3f (%+.1f %%), noise ±%.3f (%d/%d rounds): %s",
				name, m.A, m.Unit, m.B, m.Unit, m.Diff, m.DiffPct, m.Noise, m.Rounds[0], m.Rounds[1], m.Verdict)
			switch {
			case m.Missing:
				suite.Add(name, Skip, name+": "+m.Verdict, 0)
			case m.Regressed():
				suite.Add(name, Fail, "regression: "+msg, 0)
			case compare.IsGated(m.Name) && m.Rounds[0] < 2 && m.Rounds[1] < 2:
				suite.Add(name, Skip, msg, 0)
			default:
				suite.Add(name, Pass, msg, 0)
			}
		}
		d.Suites = append(d.Suites, suite)
	}
	if len(d.Suites) == 0 {
		suite := NewSuite(pkg, "comparison", 0, at, props...)
		suite.Add("stages compared", Skip, "no stage in either campaign", 0)
		d.Suites = append(d.Suites, suite)
	}
	return d
}
