package stats

import (
	"container/heap"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tokex-dev/tokex/collector/sample"
)

// Bounds of what a run's sample files can make the tally keep (a folder may
// be hostile): beyond MaxMembers processes of one kind the kind's CPU is not
// computed (engine_cpu_unknown says so); sources past maxSources and host
// rules past maxRules are counted, not listed.
const (
	MaxMembers = 10_000
	maxSources = 16
)

// sampleTally takes a run's resource samples, then its host samples, one at
// a time (streamed from resources.csv and host.csv), and keeps what the
// run's CPU figures and host warnings need: per process, one entry per
// measured second and the counter readings around the window's edges;
// for the host rules, the generator's CPU at each instant and the engines'
// per second. Figures are those of sorting every sample by time, as
// samples of one process are written (in time order); a file whose
// counters go back in time is read again (Tally.NeedsResourcesAgain).
type sampleTally struct {
	start, end int64 // the measured window, µs
	engine     group
	generator  group
	gen        keyed // generator cores at each instant of the window, summed
	eng        keyed // engine cores in each second a host sample of the window falls in
	host       hostTally
	hostBegun  bool
}

func newSampleTally(start, end int64) sampleTally {
	return sampleTally{start: start, end: end,
		engine:    group{kind: "engine", counters: [2]int64{start, end}, tracked: true},
		generator: group{kind: "generator"}}
}

// AddResource files one resource sample. Every resource sample comes
// before the first host sample.
func (t *Tally) AddResource(s *sample.Resource) {
	st := &t.samples
	if st.hostBegun {
		panic("stats: a resource sample after host samples")
	}
	switch s.Kind {
	case "engine":
		st.engine.add(s, st.start, st.end)
		// The seconds a host sample of the window can fall in (AtUS/1e6 is
		// monotonic, so they are those between its ends').
		if sec := s.AtUS / 1e6; sec >= (st.start+1)/1e6 && sec <= st.end/1e6 {
			st.eng.add(sec, s.CPUMillicores/1000)
		}
	case "generator":
		st.generator.add(s, st.start, st.end)
		if s.AtUS > st.start && s.AtUS <= st.end {
			st.gen.add(s.AtUS, s.CPUMillicores/1000)
		}
	}
}

// NeedsResourcesAgain reports that an engine's cumulative counter readings
// were not in time order in the file: AddResourceAgain must then take the
// resource samples a second time (only those readings are kept, sorted).
func (t *Tally) NeedsResourcesAgain() bool {
	for i := range t.samples.engine.members {
		if t.samples.engine.members[i].counter.unordered {
			return true
		}
	}
	return false
}

// AddResourceAgain is the second reading of the resource samples, when
// NeedsResourcesAgain.
func (t *Tally) AddResourceAgain(s *sample.Resource) {
	g := &t.samples.engine
	if s.Kind != "engine" || s.CPUSecondsTotal <= 0 {
		return
	}
	if i, ok := g.index[s.Name]; ok && g.members[i].counter.unordered {
		m := &g.members[i]
		m.again = append(m.again, reading{s.AtUS, s.CPUSecondsTotal})
		m.readAgain = true
	}
}

// AddHost files one host sample; the resource samples must all be in.
func (t *Tally) AddHost(h *sample.Host) {
	st := &t.samples
	if !st.hostBegun {
		st.hostBegun = true
		st.gen.sort()
		st.eng.sort()
	}
	if h.AtUS <= st.start || h.AtUS > st.end {
		return
	}
	c, hasGen := st.gen.get(h.AtUS)
	eng, _ := st.eng.get(h.AtUS / 1e6)
	st.host.add(h, c, hasGen, eng)
}

// group is the processes of one kind (engine, generator).
type group struct {
	kind     string
	tracked  bool     // cumulative counters read (engine)
	counters [2]int64 // where they are read: the window's ends
	index    map[string]int
	members  []member
	sources  []string // sorted, at most maxSources
	moreSrc  bool
	overflow bool // more than MaxMembers processes
}

// member is one process: its seconds in the window and its counter.
type member struct {
	name     string
	ticks    []tick
	unsorted bool // ticks not in ascending seconds
	edges    [2]edge
	counter  counterRun
	// again holds the counter's readings when they came out of time order.
	again     []reading
	readAgain bool
}

// tick is a process's samples in one second of the window (the sampling
// interval may be shorter than a second).
type tick struct {
	sec   int64
	cpu   float64
	mem   int64
	count int64
}

type reading struct {
	at int64
	v  float64
}

func (g *group) add(s *sample.Resource, start, end int64) {
	g.addSource(s.Source)
	i, ok := g.index[s.Name]
	if !ok {
		if len(g.members) >= MaxMembers {
			g.overflow = true
			return
		}
		if g.index == nil {
			g.index = map[string]int{}
		}
		i = len(g.members)
		name := strings.Clone(s.Name)
		g.index[name] = i
		g.members = append(g.members, member{name: name, edges: [2]edge{{t: g.counters[0]}, {t: g.counters[1]}}})
	}
	m := &g.members[i]
	if g.tracked {
		m.edges[0].add(s.AtUS, s.CPUSecondsTotal)
		m.edges[1].add(s.AtUS, s.CPUSecondsTotal)
		m.counter.add(s.AtUS, s.CPUSecondsTotal)
	}
	// A sample at t describes the interval ending at t: the window takes
	// samples in (start, end].
	if s.AtUS <= start || s.AtUS > end {
		return
	}
	sec := s.AtUS / 1e6
	if n := len(m.ticks); n > 0 {
		if last := &m.ticks[n-1]; last.sec == sec {
			last.cpu += s.CPUMillicores
			last.mem += s.MemoryBytes
			last.count++
			return
		} else if sec < last.sec {
			m.unsorted = true
		}
	}
	m.ticks = append(m.ticks, tick{sec: sec, cpu: s.CPUMillicores, mem: s.MemoryBytes, count: 1})
}

func (g *group) addSource(src string) {
	if src == "" {
		return
	}
	i, found := slices.BinarySearch(g.sources, src)
	switch {
	case found:
	case len(g.sources) >= maxSources:
		g.moreSrc = true
	default:
		g.sources = slices.Insert(g.sources, i, strings.Clone(src))
	}
}

// source is what sampled the group: its sources, sorted.
func (g *group) source() string {
	s := strings.Join(g.sources, ", ")
	if g.moreSrc {
		s += ", …"
	}
	return s
}

// sorted returns the members by name, their ticks in ascending seconds.
func (g *group) sorted() []*member {
	ms := make([]*member, len(g.members))
	for i := range g.members {
		m := &g.members[i]
		if m.unsorted {
			m.ticks = mergeTicks(m.ticks)
			m.unsorted = false
		}
		ms[i] = m
	}
	slices.SortFunc(ms, func(a, b *member) int { return strings.Compare(a.name, b.name) })
	return ms
}

// mergeTicks sorts ticks by second (stably: a second's samples keep the
// order they came in) and merges each second's.
func mergeTicks(ts []tick) []tick {
	slices.SortStableFunc(ts, func(a, b tick) int { return cmpInt(a.sec, b.sec) })
	out := ts[:0]
	for _, t := range ts {
		if n := len(out); n > 0 && out[n-1].sec == t.sec {
			out[n-1].cpu += t.cpu
			out[n-1].mem += t.mem
			out[n-1].count += t.count
			continue
		}
		out = append(out, t)
	}
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cpu sums the group over the measured window: a sample at time t
// describes the interval ending at t, so the window takes samples in
// (start, end]. Memory is the sum of the members' averages. exchanges are
// the responses completed in the window (CPUDefinition).
func (g *group) cpu(start, end, exchanges int64) (*CPU, int64) {
	if g.overflow {
		return nil, 0
	}
	ms := g.sorted()
	secs, avg, peak, mem := sumMembers(ms)
	if secs == 0 {
		return nil, 0
	}
	c := &CPU{Samples: secs, Method: "rate", Exchanges: exchanges, Source: g.source()}
	c.AvgCores, c.PeakCores = round3(avg/1000), round3(peak/1000)
	if exchanges == 0 {
		return c, mem
	}
	if cpuSeconds, exact := cumulativeCPU(ms); exact {
		c.Method = "cumulative"
		c.CPUMsPerExchange = round3(cpuSeconds * 1000 / float64(exchanges))
		return c, mem
	}
	seconds := float64(end-start) / 1e6
	c.CPUMsPerExchange = round3(c.AvgCores * 1000 * seconds / float64(exchanges))
	return c, mem
}

// sumMembers is the group's seconds with a sample, its average and peak
// millicores and its average memory. Members are sampled independently
// (metrics-server stamps each Pod's sample with its own time), so a second
// rarely holds every member: the average is the sum of each member's own
// average, and the peak sums, at each second, each member's latest sample
// so far.
func sumMembers(ms []*member) (secs int, avg, peak float64, mem int64) {
	for _, m := range ms {
		if len(m.ticks) == 0 {
			continue
		}
		var cpu float64
		var b int64
		for _, t := range m.ticks {
			cpu += t.cpu / float64(t.count)
			b += t.mem / t.count
		}
		avg += cpu / float64(len(m.ticks))
		mem += b / int64(len(m.ticks))
	}
	// The seconds of all members in ascending order (a merge of their
	// ticks); the total of the members' latest figures kept in a sum tree,
	// so a second costs log(members), not members.
	var next tickHeap
	for i, m := range ms {
		if len(m.ticks) > 0 {
			next = append(next, cursor{member: i, ticks: m.ticks})
		}
	}
	heap.Init(&next)
	latest := newSumTree(len(ms))
	for len(next) > 0 {
		sec := next[0].ticks[0].sec
		for len(next) > 0 && next[0].ticks[0].sec == sec {
			c := &next[0]
			t := c.ticks[0]
			latest.set(c.member, t.cpu/float64(t.count))
			if c.ticks = c.ticks[1:]; len(c.ticks) == 0 {
				heap.Pop(&next)
			} else {
				heap.Fix(&next, 0)
			}
		}
		secs++
		peak = math.Max(peak, latest.total())
	}
	return secs, avg, peak, mem
}

// cursor is a member's ticks not yet merged.
type cursor struct {
	member int
	ticks  []tick
}

type tickHeap []cursor

func (h tickHeap) Len() int { return len(h) }
func (h tickHeap) Less(i, j int) bool {
	a, b := h[i].ticks[0].sec, h[j].ticks[0].sec
	return a < b || a == b && h[i].member < h[j].member
}
func (h tickHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *tickHeap) Push(x any)   { *h = append(*h, x.(cursor)) }
func (h *tickHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// sumTree keeps the sum of n figures as a fixed tree of pairwise sums: a
// figure's change costs log n and the total is the same whatever the
// order of the changes.
type sumTree struct {
	size int
	node []float64
}

func newSumTree(n int) *sumTree {
	size := 1
	for size < n {
		size *= 2
	}
	return &sumTree{size: size, node: make([]float64, 2*size)}
}

func (t *sumTree) set(i int, v float64) {
	i += t.size
	t.node[i] = v
	for i > 1 {
		i /= 2
		t.node[i] = t.node[2*i] + t.node[2*i+1]
	}
}

func (t *sumTree) total() float64 { return t.node[1] }

// cumulativeCPU is the CPU seconds the members' cumulative counters
// advanced between the window's ends; exact is false unless every member
// has a counter that never went back, read around both ends.
func cumulativeCPU(ms []*member) (cpuSeconds float64, exact bool) {
	for _, m := range ms {
		a, okA := m.edges[0].read()
		b, okB := m.edges[1].read()
		if !okA || !okB || m.fault() != "" {
			return 0, false
		}
		cpuSeconds += b - a
	}
	return cpuSeconds, true
}

// edge reads a cumulative counter at t from the samples around it: the one
// at t, else the last before and the first after (interpolated).
type edge struct {
	t                               int64
	exact, below, above             reading
	haveExact, haveBelow, haveAbove bool
}

func (e *edge) add(at int64, v float64) {
	switch {
	case at == e.t:
		if !e.haveExact {
			e.exact, e.haveExact = reading{at, v}, true
		}
	case at < e.t:
		if !e.haveBelow || at >= e.below.at {
			e.below, e.haveBelow = reading{at, v}, true
		}
	default:
		if !e.haveAbove || at < e.above.at {
			e.above, e.haveAbove = reading{at, v}, true
		}
	}
}

func (e *edge) read() (float64, bool) {
	if e.haveExact {
		return e.exact.v, e.exact.v > 0
	}
	if !e.haveBelow || !e.haveAbove {
		return 0, false
	}
	a, b := e.below, e.above
	if a.v <= 0 || b.v <= 0 {
		return 0, false
	}
	f := float64(e.t-a.at) / float64(b.at-a.at)
	return a.v + f*(b.v-a.v), true
}

// counterRun checks a counter's readings as they come, in time order
// (counterStep); readings out of time order are checked again sorted.
type counterRun struct {
	prev      reading
	seen      bool
	why       string
	unordered bool
}

func (c *counterRun) add(at int64, v float64) {
	if v <= 0 || c.unordered {
		return // no counter in this sample
	}
	if c.seen && at < c.prev.at {
		c.unordered = true
		return
	}
	if c.why == "" {
		c.why = counterStep(c.prev, c.seen, reading{at, v})
	}
	c.prev, c.seen = reading{at, v}, true
}

// fault is why the member's counter is not one ("" when it is).
func (m *member) fault() string {
	if !m.counter.unordered {
		return m.counter.why
	}
	if !m.readAgain {
		return "came out of time order and was not read again"
	}
	sort.SliceStable(m.again, func(i, j int) bool { return m.again[i].at < m.again[j].at })
	var c counterRun
	for _, r := range m.again {
		c.add(r.at, r.v)
	}
	m.counter, m.again = c, nil
	return c.why
}

// keyed sums figures by key (an instant, a second) as they come, for
// lookups once all are in (sort).
type keyed struct {
	keys     []int64
	vals     []float64
	unsorted bool
}

func (k *keyed) add(key int64, v float64) {
	if n := len(k.keys); n > 0 {
		if k.keys[n-1] == key {
			k.vals[n-1] += v
			return
		}
		k.unsorted = k.unsorted || key < k.keys[n-1]
	}
	k.keys = append(k.keys, key)
	k.vals = append(k.vals, v)
}

// sort orders the keys (stably: a key's figures are summed in the order
// they came) and merges equal ones.
func (k *keyed) sort() {
	if !k.unsorted {
		return
	}
	idx := make([]int, len(k.keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return k.keys[idx[a]] < k.keys[idx[b]] })
	keys, vals := make([]int64, 0, len(idx)), make([]float64, 0, len(idx))
	for _, i := range idx {
		if n := len(keys); n > 0 && keys[n-1] == k.keys[i] {
			vals[n-1] += k.vals[i]
			continue
		}
		keys = append(keys, k.keys[i])
		vals = append(vals, k.vals[i])
	}
	k.keys, k.vals, k.unsorted = keys, vals, false
}

func (k *keyed) get(key int64) (float64, bool) {
	i, ok := slices.BinarySearch(k.keys, key)
	if !ok {
		return 0, false
	}
	return k.vals[i], true
}
