package stats

import (
	"fmt"

	"github.com/tokex-dev/tokex/collector/sample"
)

// counterStep says how a counter reading s, following prev (seen: there
// is one) in time, shows the counter is not one: it went back, advanced
// faster than sample.MaxPlausibleCores, or is past
// sample.MaxCPUCounterSeconds; "" when it is fine. Readings without a counter (0) are never steps.
func counterStep(prev reading, seen bool, s reading) string {
	if s.v > sample.MaxCPUCounterSeconds {
		return fmt.Sprintf("reads %.4g s, more than any CPU counter (an overflow)", s.v)
	}
	if seen {
		d := s.v - prev.v
		dt := max(float64(s.at-prev.at)/1e6, 0.001)
		switch {
		case d < 0:
			return fmt.Sprintf("went back from %.6g s to %.6g s", prev.v, s.v)
		case d > dt*sample.MaxPlausibleCores:
			return fmt.Sprintf("advanced %.4g s in %.3g s (%.3g cores)", d, dt, d/dt)
		}
	}
	return ""
}

// counterWarning is the coded warning of a group whose cumulative counter
// is not a CPU counter; its CPU is then taken from the sampled rates
// (group.cpu), never from the counter.
func (g *group) counterWarning(run string) (Warning, bool) {
	if g.overflow {
		return Warning{}, false
	}
	for _, m := range g.sorted() {
		if why := m.fault(); why != "" {
			name := m.name
			if len(name) > 64 {
				name = name[:64] + "…"
			}
			return Warn(WarnCPUCounterInvalid, run, fmt.Sprintf("the %s CPU counter of %s %s: not a CPU counter, so CPU per exchange comes from the sampled rates", g.kind, name, why)), true
		}
	}
	return Warning{}, false
}
