package stats

import (
	"fmt"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/usage"
)

// sampleTally takes a run's resource samples, then its host samples, one at
// a time (streamed from resources.csv and host.csv), and keeps what the
// run's CPU figures and host warnings need (collector/usage): never the
// samples. For the host rules it keeps the generator's cores at each
// instant of the window and the engines' in each second.
type sampleTally struct {
	start, end int64 // the measured window, µs
	engine     usage.Group
	generator  usage.Group
	gen, eng   usage.Sums
	host       hostTally
	hostBegun  bool
}

func newSampleTally(start, end int64) sampleTally {
	return sampleTally{start: start, end: end, engine: usage.NewGroup(start, end, true), generator: usage.NewGroup(start, end, false)}
}

// AddResource files one resource sample; all come before the host samples.
func (t *Tally) AddResource(s *sample.Resource) {
	st := &t.samples
	switch s.Kind {
	case "engine":
		st.engine.Add(s)
		// The seconds a host sample of the window can fall in (AtUS/1e6 is
		// monotonic, so they are those between its ends').
		if sec := s.AtUS / 1e6; sec >= (st.start+1)/1e6 && sec <= st.end/1e6 {
			st.eng.Add(sec, s.CPUMillicores/1000)
		}
	case "generator":
		st.generator.Add(s)
		if s.AtUS > st.start && s.AtUS <= st.end {
			st.gen.Add(s.AtUS, s.CPUMillicores/1000)
		}
	}
}

// NeedsResourcesAgain reports that an engine's cumulative counter readings
// were not in time order in the file: AddResourceAgain must then take the
// resource samples a second time.
func (t *Tally) NeedsResourcesAgain() bool { return t.samples.engine.Unordered() }

// AddResourceAgain is the second reading of the resource samples, when
// NeedsResourcesAgain.
func (t *Tally) AddResourceAgain(s *sample.Resource) {
	if s.Kind == "engine" {
		t.samples.engine.AddAgain(s)
	}
}

// AddHost files one host sample, after every resource sample.
func (t *Tally) AddHost(h *sample.Host) {
	st := &t.samples
	if !st.hostBegun {
		st.hostBegun = true
		st.gen.Sort()
		st.eng.Sort()
	}
	if h.AtUS <= st.start || h.AtUS > st.end {
		return
	}
	c, hasGen := st.gen.Get(h.AtUS)
	eng, _ := st.eng.Get(h.AtUS / 1e6)
	st.host.add(h, c, hasGen, eng)
}

// groupCPU is a group's CPU over the measured window and its memory.
// exchanges are the responses completed in the window (CPUDefinition).
func groupCPU(g *usage.Group, start, end, exchanges int64) (*CPU, int64) {
	f, ok := g.Sum()
	if !ok {
		return nil, 0
	}
	c := &CPU{Samples: f.Seconds, Method: "rate", Exchanges: exchanges, Source: f.Source}
	c.AvgCores, c.PeakCores = Round3(f.AvgMillicores/1000), Round3(f.PeakMillicores/1000)
	switch {
	case exchanges == 0:
	case f.Cumulative:
		c.Method = "cumulative"
		c.CPUMsPerExchange = Round3(f.CPUSeconds * 1000 / float64(exchanges))
	default:
		seconds := float64(end-start) / 1e6
		c.CPUMsPerExchange = Round3(c.AvgCores * 1000 * seconds / float64(exchanges))
	}
	return c, f.MemoryBytes
}

// counterWarning is the coded warning of a group whose cumulative counter
// is not a CPU counter; its CPU is then taken from the sampled rates,
// never from the counter.
func counterWarning(g *usage.Group, kind, run string) (Warning, bool) {
	name, why := g.CounterFault()
	if why == "" {
		return Warning{}, false
	}
	if len(name) > 64 {
		name = name[:64] + "…"
	}
	return Warn(WarnCPUCounterInvalid, run, fmt.Sprintf("the %s CPU counter of %s %s: not a CPU counter, so CPU per exchange comes from the sampled rates", kind, name, why)), true
}
