package stats

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/tokex-dev/tokex/collector/sample"
)

// counterFault says how a member's cumulative CPU counter is not one: it
// went back, advanced faster than sample.MaxPlausibleCores, or is past
// sample.MaxCPUCounterSeconds; "" when it is fine. ss is sorted by time; samples
// without a counter (0) are skipped.
func counterFault(ss []sample.Resource) string {
	var prev *sample.Resource
	for i := range ss {
		s := &ss[i]
		if s.CPUSecondsTotal <= 0 {
			continue
		}
		if s.CPUSecondsTotal > sample.MaxCPUCounterSeconds {
			return fmt.Sprintf("reads %.4g s, more than any CPU counter (an overflow)", s.CPUSecondsTotal)
		}
		if prev != nil {
			d := s.CPUSecondsTotal - prev.CPUSecondsTotal
			dt := max(float64(s.AtUS-prev.AtUS)/1e6, 0.001)
			switch {
			case d < 0:
				return fmt.Sprintf("went back from %.6g s to %.6g s", prev.CPUSecondsTotal, s.CPUSecondsTotal)
			case d > dt*sample.MaxPlausibleCores:
				return fmt.Sprintf("advanced %.4g s in %.3g s (%.3g cores)", d, dt, d/dt)
			}
		}
		prev = s
	}
	return ""
}

// cpuCounterWarning is the coded warning of a group whose cumulative
// counter is not a CPU counter; its CPU is then taken from the sampled
// rates (groupCPU), never from the counter.
func cpuCounterWarning(res []sample.Resource, kind, run string) (Warning, bool) {
	byName := map[string][]sample.Resource{}
	for _, s := range res {
		if s.Kind == kind && s.CPUSecondsTotal != 0 {
			byName[s.Name] = append(byName[s.Name], s)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		ss := byName[name]
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].AtUS < ss[j].AtUS })
		if why := counterFault(ss); why != "" {
			if len(name) > 64 {
				name = name[:64] + "…"
			}
			return Warn(WarnCPUCounterInvalid, run, fmt.Sprintf("the %s CPU counter of %s %s: not a CPU counter, so CPU per exchange comes from the sampled rates", kind, name, why)), true
		}
	}
	return Warning{}, false
}
