// Package usage sums a group of processes' CPU and memory (the engines of
// a run, its generator) over the run's measured window from their samples,
// taken one at a time as resources.csv is read: per process, one entry per
// measured second with a sample and the counter readings around the
// window's two edges, never the samples, so that what it holds is bounded
// by processes × seconds whatever a file holds. The figures are those of
// sorting every sample by time (samples of one process are written in
// time order); a process whose counter readings are not is read again
// (Group.Unordered, AddAgain).
package usage

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tokex-dev/tokex/collector/sample"
)

// Bounds of what a run's sample files can make a group keep (a folder may
// be hostile): beyond MaxMembers processes the group's figures are not
// computed (Overflow); sources past maxSources are counted, not listed.
const (
	MaxMembers = 10_000
	maxSources = 16
)

// Group is the processes of one kind over the window (start, end], µs: a
// sample at t describes the interval ending at t.
type Group struct {
	start, end int64
	counters   bool // cumulative counters read (engine)
	index      map[string]int
	members    []member
	sources    []string // sorted, at most maxSources
	moreSrc    bool
	overflow   bool // more than MaxMembers processes
}

// NewGroup starts a group over the window (start, end]; counters: check
// and read the members' cumulative CPU counters too.
func NewGroup(start, end int64, counters bool) Group {
	return Group{start: start, end: end, counters: counters}
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

// Overflow reports more than MaxMembers processes: no figures.
func (g *Group) Overflow() bool { return g.overflow }

// Unordered reports that a member's counter readings were not in time
// order: AddAgain must then take the group's samples a second time.
func (g *Group) Unordered() bool {
	return slices.ContainsFunc(g.members, func(m member) bool { return m.counter.unordered })
}

// AddAgain is the second reading of the samples, when Unordered: only the
// counter readings of the members that need them are kept, to be sorted.
func (g *Group) AddAgain(s *sample.Resource) {
	if s.CPUSecondsTotal <= 0 {
		return
	}
	if i, ok := g.index[s.Name]; ok && g.members[i].counter.unordered {
		m := &g.members[i]
		m.again = append(m.again, reading{s.AtUS, s.CPUSecondsTotal})
		m.readAgain = true
	}
}

// Figures are a group's over the window.
type Figures struct {
	Seconds int // with a sample of any member
	// AvgMillicores sums the members' averages; PeakMillicores is the
	// highest sum, at a second, of each member's latest figure.
	AvgMillicores, PeakMillicores float64
	MemoryBytes                   int64 // the sum of the members' averages

	Source string // what sampled them, sorted
	// CPUSeconds is what the members' cumulative counters advanced between
	// the window's ends; Cumulative is false unless every member has a
	// counter that is one, read around both ends.
	CPUSeconds float64
	Cumulative bool
}

// Sum is the group's figures; false when it has no sample in the window
// or too many members.
func (g *Group) Sum() (Figures, bool) {
	if g.overflow {
		return Figures{}, false
	}
	ms := g.sorted()
	var f Figures
	f.Seconds, f.AvgMillicores, f.PeakMillicores, f.MemoryBytes = sumMembers(ms)
	if f.Seconds == 0 {
		return Figures{}, false
	}
	f.Source = g.source()
	if g.counters {
		f.CPUSeconds, f.Cumulative = cumulativeCPU(ms)
	}
	return f, true
}

// Member is one process's figures over the window.
type Member struct {
	Name          string
	Seconds       int     // with a sample
	AvgMillicores float64 // the average of its seconds
	// CPUSeconds is what its cumulative counter advanced between the
	// window's ends; Cumulative is false unless it is a CPU counter read
	// around both ends.
	CPUSeconds float64
	Cumulative bool
}

// Members are each member's figures, by name (nil with too many members):
// the engines of a campaign over engine counts, one by one.
func (g *Group) Members() []Member {
	if g.overflow {
		return nil
	}
	var out []Member
	for _, m := range g.sorted() {
		f := Member{Name: m.name, Seconds: len(m.ticks)}
		if len(m.ticks) > 0 {
			var cpu float64
			for _, t := range m.ticks {
				cpu += t.cpu / float64(t.count)
			}
			f.AvgMillicores = cpu / float64(len(m.ticks))
		}
		if g.counters {
			f.CPUSeconds, f.Cumulative = cumulativeCPU([]*member{m})
		}
		out = append(out, f)
	}
	return out
}

// CounterFault is the first member, by name, whose cumulative counter is
// not a CPU counter, and why ("" when every one is, or without figures).
func (g *Group) CounterFault() (name, why string) {
	if g.overflow {
		return "", ""
	}
	for _, m := range g.sorted() {
		if why := m.fault(); why != "" {
			return m.name, why
		}
	}
	return "", ""
}

// Add files one sample of the group.
func (g *Group) Add(s *sample.Resource) {
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
		g.members = append(g.members, member{name: name, edges: [2]edge{{t: g.start}, {t: g.end}}})
	}
	m := &g.members[i]
	if g.counters {
		m.edges[0].add(s.AtUS, s.CPUSecondsTotal)
		m.edges[1].add(s.AtUS, s.CPUSecondsTotal)
		m.counter.add(s.AtUS, s.CPUSecondsTotal)
	}
	// A sample at t describes the interval ending at t: the window takes
	// samples in (start, end].
	if s.AtUS <= g.start || s.AtUS > g.end {
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

func (g *Group) addSource(src string) {
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
func (g *Group) source() string {
	s := strings.Join(g.sources, ", ")
	if g.moreSrc {
		s += ", …"
	}
	return s
}

// sorted returns the members by name, their ticks in ascending seconds.
func (g *Group) sorted() []*member {
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
	slices.SortStableFunc(ts, func(a, b tick) int { return cmp.Compare(a.sec, b.sec) })
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

// Sums sums figures by key (an instant, a second) as they come, for
// lookups once all are in (Sort).
type Sums struct {
	keys     []int64
	vals     []float64
	unsorted bool
}

// Add adds v to key's figure.
func (k *Sums) Add(key int64, v float64) {
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

// Sort orders the keys (stably: a key's figures are summed in the order
// they came) and merges equal ones.
func (k *Sums) Sort() {
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

// Get is key's figure, if any.
func (k *Sums) Get(key int64) (float64, bool) {
	i, ok := slices.BinarySearch(k.keys, key)
	if !ok {
		return 0, false
	}
	return k.vals[i], true
}
