package kube

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/collector/stats"
)

// agentCPU keeps the agents' PodMetrics CPU samples (millicores by Pod).
type agentCPU struct {
	mu      sync.Mutex
	samples map[string][]cpuSample
}

type cpuSample struct {
	at    time.Time
	milli int64
}

// maxAgentSamples bounds the samples kept per Pod (one per 10–15 s window).
const maxAgentSamples = 4096

func (a *agentCPU) note(pod string, at time.Time, milli int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.samples == nil {
		a.samples = map[string][]cpuSample{}
	}
	s := a.samples[pod]
	if n := len(s); n >= maxAgentSamples || n > 0 && !at.After(s[n-1].at) {
		return
	}
	a.samples[pod] = append(s, cpuSample{at, milli})
}

// within returns a Pod's samples in (from, to].
func (a *agentCPU) within(pod string, from, to time.Time) []cpuSample {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []cpuSample
	for _, s := range a.samples[pod] {
		if s.at.After(from) && !s.at.After(to) {
			out = append(out, s)
		}
	}
	return out
}

// throttled applies the local generator's CPU rule to an agent Pod: a
// sample at StarvedCPUShare of its CPU limit or more means k6 waited for
// CPU; the Pod is starved when BadShare of its measured samples do.
func throttled(samples []cpuSample, limitMilli int64) (n int, peak int64) {
	if limitMilli <= 0 {
		return 0, 0
	}
	for _, s := range samples {
		peak = max(peak, s.milli)
		if float64(s.milli) >= stats.StarvedCPUShare*float64(limitMilli) {
			n++
		}
	}
	if n == 0 || float64(n) < stats.BadShare*float64(len(samples)) {
		return 0, peak
	}
	return n, peak
}

// span is one measured iteration of an agent as its line tells it: from k6
// beginning it to the response's end (µs).
type span struct{ from, to int64 }

// spanLog keeps an agent's measured iterations for the starvation rule in 8
// bytes each, exactly: the µs after the first one's start and the duration,
// both uint32; one that does not fit (it began before the first, 71 minutes
// after it, or lasted longer) is kept whole.
type spanLog struct {
	base      int64
	from, dur []uint32
	wide      []span
}

func (l *spanLog) add(s span) {
	if len(l.from) == 0 && len(l.wide) == 0 {
		l.base = s.from
	}
	off, d := s.from-l.base, s.to-s.from
	if off < 0 || off > math.MaxUint32 || d < 0 || d > math.MaxUint32 {
		l.wide = append(l.wide, s)
		return
	}
	l.from, l.dur = append(l.from, uint32(off)), append(l.dur, uint32(d))
}

func (l *spanLog) len() int { return len(l.from) + len(l.wide) }

// peakInFlight is the most iterations in flight at once.
func (l *spanLog) peakInFlight() int {
	type edge struct {
		at    int64
		delta int
	}
	edges := make([]edge, 0, 2*l.len())
	for i, f := range l.from {
		from := l.base + int64(f)
		edges = append(edges, edge{from, 1}, edge{from + int64(l.dur[i]), -1})
	}
	for _, s := range l.wide {
		edges = append(edges, edge{s.from, 1}, edge{s.to, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return a.delta - b.delta // an end before a start at the same µs
	})
	n, peak := 0, 0
	for _, e := range edges {
		n += e.delta
		peak = max(peak, n)
	}
	return peak
}

// starved applies the starvation rules to one agent after its run: its
// PodMetrics near its CPU limit, or k6 dropping arrivals although its lines
// show VUs to spare (k6 drops only when every VU is busy: with VUs idle it
// could not start iterations on time).
func (r *kubeRun) starved(ps *podState, from, to time.Time, dropped float64) []stats.Warning {
	var out []stats.Warning
	c := r.job.Spec.Template.Spec.Containers[0]
	limit := c.Resources.Limits.Cpu().MilliValue()
	samples := r.d.agentCPU.within(ps.name, from, to)
	if n, peak := throttled(samples, limit); n > 0 {
		out = append(out, stats.Warn(stats.WarnGeneratorStarved, "", fmt.Sprintf("k6 agent %d (%s) at its CPU limit in %d of %d PodMetrics samples (peak %dm of %dm): "+
			"k6 was throttled, so latency includes its own waiting", ps.index, ps.name, n, len(samples), peak, limit)))
	}
	vus := r.d.Cfg.Agents.MaxInFlight
	ps.mu.Lock()
	peak := ps.spans.peakInFlight()
	ps.mu.Unlock()
	if dropped > 0 && peak <= vus*4/5 {
		out = append(out, stats.Warn(stats.WarnGeneratorStarved, "", fmt.Sprintf("k6 agent %d (%s) dropped %.0f measured arrivals while at most %d of its %d VUs were in an iteration: "+
			"k6 could not start iterations on time (CPU-starved?)", ps.index, ps.name, dropped, peak, vus)))
	}
	return out
}
