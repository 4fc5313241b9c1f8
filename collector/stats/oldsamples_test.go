package stats

// The implementation of the run's CPU figures and host warnings before they
// streamed over the samples (main at 631f5d5, verbatim but for the names
// and the types collector/sample took since): the reference the streaming
// tally must agree with (samples_test.go).

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tokex-dev/tokex/collector/sample"
)

// oldGroupCPU sums the samples of one kind over the measured window. A sample
// at time t describes the interval ending at t, so the window takes samples
// in (start, end]. Memory is the sum of the members' averages. exchanges
// are the responses completed in the window (CPUDefinition).
func oldGroupCPU(res []sample.Resource, kind string, m RunMeta, exchanges int64) (*CPU, int64) {
	start, end := m.MeasuredStart.UnixMicro(), m.MeasuredEnd.UnixMicro()
	names := map[string][]sample.Resource{}
	sources := map[string]bool{}
	for _, s := range res {
		if s.Kind != kind {
			continue
		}
		names[s.Name] = append(names[s.Name], s)
		if s.Source != "" {
			sources[s.Source] = true
		}
	}
	t := oldTickMembers(names, start, end)
	if len(t.secs) == 0 {
		return nil, 0
	}
	c := &CPU{Samples: len(t.secs), Method: "rate", Exchanges: exchanges, Source: strings.Join(slices.Sorted(maps.Keys(sources)), ", ")}
	avg, peak, mem := t.sum()
	c.AvgCores, c.PeakCores = Round3(avg/1000), Round3(peak/1000)
	if exchanges == 0 {
		return c, mem
	}
	if cpuSeconds, exact := oldCumulativeCPU(names, start, end); exact {
		c.Method = "cumulative"
		c.CPUMsPerExchange = Round3(cpuSeconds * 1000 / float64(exchanges))
		return c, mem
	}
	seconds := float64(end-start) / 1e6
	c.CPUMsPerExchange = Round3(c.AvgCores * 1000 * seconds / float64(exchanges))
	return c, mem
}

// oldMemberTick is one member's samples in one second, averaged (the sampling
// interval may be shorter than a second).
type oldMemberTick struct {
	cpu   float64
	mem   int64
	count int
}

// oldTicks holds each member's per-second averages in the measured window.
type oldTicks struct {
	secs    []int64                             // the seconds any member has a sample in, ascending
	members map[string]map[int64]*oldMemberTick // name -> second -> average
}

func oldTickMembers(names map[string][]sample.Resource, start, end int64) oldTicks {
	t := oldTicks{members: map[string]map[int64]*oldMemberTick{}}
	seen := map[int64]bool{}
	for name, samples := range names {
		for _, s := range samples {
			if s.AtUS <= start || s.AtUS > end {
				continue
			}
			sec := s.AtUS / 1e6
			byS := t.members[name]
			if byS == nil {
				byS = map[int64]*oldMemberTick{}
				t.members[name] = byS
			}
			mt := byS[sec]
			if mt == nil {
				mt = &oldMemberTick{}
				byS[sec] = mt
			}
			mt.cpu += s.CPUMillicores
			mt.mem += s.MemoryBytes
			mt.count++
			if !seen[sec] {
				seen[sec] = true
				t.secs = append(t.secs, sec)
			}
		}
	}
	slices.Sort(t.secs)
	return t
}

// sum is the group's average and peak millicores and its average memory.
// Members are sampled independently (metrics-server stamps each Pod's
// sample with its own time), so a second rarely holds every member: the
// average is the sum of each member's own average, and the peak sums, at
// each second, each member's latest sample so far.
func (t oldTicks) sum() (avg, peak float64, mem int64) {
	for _, byS := range t.members {
		var cpu float64
		var m int64
		for _, mt := range byS {
			cpu += mt.cpu / float64(mt.count)
			m += mt.mem / int64(mt.count)
		}
		avg += cpu / float64(len(byS))
		mem += m / int64(len(byS))
	}
	latest := map[string]float64{}
	for _, sec := range t.secs {
		var total float64
		for name, byS := range t.members {
			if mt := byS[sec]; mt != nil {
				latest[name] = mt.cpu / float64(mt.count)
			}
			total += latest[name]
		}
		peak = math.Max(peak, total)
	}
	return avg, peak, mem
}

// oldCumulativeCPU is the CPU seconds the members' cumulative counters
// advanced between start and end; exact is false unless every member has
// a counter that never went back, read around both ends.
func oldCumulativeCPU(members map[string][]sample.Resource, start, end int64) (cpuSeconds float64, exact bool) {
	for _, ss := range members {
		sort.Slice(ss, func(i, j int) bool { return ss[i].AtUS < ss[j].AtUS })
		a, okA := oldInterpolate(ss, start)
		b, okB := oldInterpolate(ss, end)
		if !okA || !okB || oldCounterFault(ss) != "" {
			return 0, false
		}
		cpuSeconds += b - a
	}
	return cpuSeconds, true
}

// oldInterpolate reads a cumulative CPU counter at t (µs) between the samples
// around it; ss is sorted by time.
func oldInterpolate(ss []sample.Resource, t int64) (float64, bool) {
	i := sort.Search(len(ss), func(i int) bool { return ss[i].AtUS >= t })
	switch {
	case i < len(ss) && ss[i].AtUS == t:
		return ss[i].CPUSecondsTotal, ss[i].CPUSecondsTotal > 0
	case i == 0 || i == len(ss):
		return 0, false
	}
	a, b := ss[i-1], ss[i]
	if a.CPUSecondsTotal <= 0 || b.CPUSecondsTotal <= 0 {
		return 0, false
	}
	f := float64(t-a.AtUS) / float64(b.AtUS-a.AtUS)
	return a.CPUSecondsTotal + f*(b.CPUSecondsTotal-a.CPUSecondsTotal), true
}

// hostWarnings applies the per-sample rules to the measured window: the
// host's saturation and the starvation of tokex's generator (whose CPU
// comes from the generator resource row taken at the same instant).
func oldHostWarnings(r *Run, m RunMeta, host []sample.Host, res []sample.Resource) []Warning {
	start, end := m.MeasuredStart.UnixMicro(), m.MeasuredEnd.UnixMicro()
	gen, eng := map[int64]float64{}, map[int64]float64{}
	for _, s := range res {
		switch s.Kind {
		case "generator":
			gen[s.AtUS] += s.CPUMillicores / 1000
		case "engine":
			eng[s.AtUS/1e6] += s.CPUMillicores / 1000
		}
	}
	var n int
	var sat, starve tally
	var others []float64
	for i := range host {
		h := &host[i]
		if h.AtUS <= start || h.AtUS > end {
			continue
		}
		n++
		c, hasGen := gen[h.AtUS]
		if sat.add(saturation(&h.HostMetrics), h) && hasGen {
			others = append(others, max(0, h.BusyCores-c-eng[h.AtUS/1e6]))
		}
		if hasGen {
			starve.add(starvation(&h.HostMetrics, c), h)
		}
	}
	var out []Warning
	if Flags(sat.n, n) {
		d := fmt.Sprintf("host saturated in %d of %d measured seconds (%s; up to %d runnable threads on %d CPUs",
			sat.n, n, sat.reasons(), sat.maxRunnable, sat.cpus)
		if len(others) > 0 {
			d += fmt.Sprintf("; processes other than the generator and the engine used %.2f cores on average", oldMean(others))
		}
		d += "): latency and CPU per exchange include queueing for the machine, not only the server"
		out = append(out, Warn(WarnHostSaturated, r.ID, d))
	}
	if Flags(starve.n, n) {
		out = append(out, Warn(WarnGeneratorStarved, r.ID, fmt.Sprintf("tokex generator starved of CPU in %d of %d measured seconds (%s): "+
			"latency includes the time it waited to send and to read responses", starve.n, n, starve.reasons())))
	}
	return out
}

// oldCounterFault says how a member's cumulative CPU counter is not one: it
// went back, advanced faster than sample.MaxPlausibleCores, or is past
// sample.MaxCPUCounterSeconds; "" when it is fine. ss is sorted by time; samples
// without a counter (0) are skipped.
func oldCounterFault(ss []sample.Resource) string {
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

// oldCPUCounterWarning is the coded warning of a group whose cumulative
// counter is not a CPU counter; its CPU is then taken from the sampled
// rates (oldGroupCPU), never from the counter.
func oldCPUCounterWarning(res []sample.Resource, kind, run string) (Warning, bool) {
	byName := map[string][]sample.Resource{}
	for _, s := range res {
		if s.Kind == kind && s.CPUSecondsTotal != 0 {
			byName[s.Name] = append(byName[s.Name], s)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		ss := byName[name]
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].AtUS < ss[j].AtUS })
		if why := oldCounterFault(ss); why != "" {
			if len(name) > 64 {
				name = name[:64] + "…"
			}
			return Warn(WarnCPUCounterInvalid, run, fmt.Sprintf("the %s CPU counter of %s %s: not a CPU counter, so CPU per exchange comes from the sampled rates", kind, name, why)), true
		}
	}
	return Warning{}, false
}

func oldMean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
