package stats

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tokex-dev/tokex/exchange"
)

// HopStats are one hop's figures in a run of delegation chains: every
// chain's hop k, measured phase.
type HopStats struct {
	Hop          int              `json:"hop"`
	Requests     int64            `json:"requests"`
	OK           int64            `json:"ok"`
	SuccessRatio float64          `json:"success_ratio"`
	Errors       map[string]int64 `json:"errors,omitempty"`
	// LatencyMs is the hop's own request, sent → response read.
	LatencyMs Latency `json:"latency_ms"`
	// GapMs is tokex's own time before the hop was sent: from the previous
	// hop's response read (hop 1: from the chain's scheduled time, its
	// send lag).
	GapMs Latency `json:"gap_ms"`
	// TokenBytes are the sizes of the tokens the hop was issued.
	TokenBytes Sizes `json:"token_bytes"`
}

// Sizes summarize byte counts.
type Sizes struct {
	Count int64   `json:"count"`
	Min   int64   `json:"min"`
	Avg   float64 `json:"avg"`
	P50   float64 `json:"p50"`
	Max   int64   `json:"max"`
}

// ChainStats are a run's delegation chains as wholes: an arrival is one
// chain, its hops one after another as fast as tokex can send them.
type ChainStats struct {
	Length int `json:"length"`
	// Started chains sent their first hop (measured phase); Completed
	// ones had every hop succeed; Aborted were cut short by the campaign
	// stopping.
	Started   int64 `json:"started"`
	Completed int64 `json:"completed"`
	Aborted   int64 `json:"aborted,omitempty"`
	// Broken says where chains broke and why: the hop whose request
	// failed and its error (the hops after it were not sent).
	Broken []ChainBreak `json:"broken,omitempty"`
	// Unlinked counts hop rows whose chain could not be followed (a hop
	// without its predecessor: evidence cut, or more chains open at once
	// than MaxOpenChains); they count in the hops' figures, not here.
	// Unfinished chains had no row for their next hop when the rows ended.
	Unlinked   int64 `json:"unlinked,omitempty"`
	Unfinished int64 `json:"unfinished,omitempty"`
	// LatencyMs is a completed chain's latency, hop 1 sent → the last
	// hop's response read: exactly HopsMs plus TokexMs, chain by chain.
	LatencyMs Latency `json:"latency_ms"`
	// HopsMs is the sum of the chain's hops' latencies (the server's part
	// and the network's), TokexMs tokex's own time between the hops.
	HopsMs  Latency `json:"hops_ms"`
	TokexMs Latency `json:"tokex_ms"`
}

// ChainBreak counts the chains that broke at one hop with one error.
type ChainBreak struct {
	Hop   int    `json:"hop"`
	Error string `json:"error"` // a key of Run.Errors
	Count int64  `json:"count"`
}

// KindStats are one grant's figures in a run whose arrivals draw their
// grant from a mix (workload.mix).
type KindStats struct {
	Kind         exchange.Grant   `json:"kind"`
	Requests     int64            `json:"requests"`
	OK           int64            `json:"ok"`
	SuccessRatio float64          `json:"success_ratio"`
	Errors       map[string]int64 `json:"errors,omitempty"`
	LatencyMs    Latency          `json:"latency_ms"`
	TokenBytes   Sizes            `json:"token_bytes"`
	// Arrivals are the measured arrivals drawn for the grant (dropped
	// ones included): against the mix's weights, how the draw fell.
	Arrivals int64 `json:"arrivals"`
}

// MaxOpenChains bounds the chains a tally follows at once: a run's chains
// in flight are at most its workers (agents × max_in_flight ≤ 100,000).
const MaxOpenChains = 1 << 17

// MaxBreaks bounds Run.Chains.Broken.
const MaxBreaks = 8

// agenticTally is the part of a Tally for chains and mixes, made at the
// first row with a hop or a kind.
type agenticTally struct {
	length   int // the run's chain length (RunMeta.Chain), 0: the largest hop seen
	hops     [MaxChain + 1]*groupTally
	kinds    map[exchange.Grant]*groupTally
	open     map[chainKey]*openChain
	chains   ChainStats
	breaks   map[ChainBreak]int64 // Count left 0 in the key
	latency  Samples
	hopsSum  Samples
	tokexSum Samples
	maxHop   int
}

// groupTally tallies the measured rows of one hop or one grant.
type groupTally struct {
	requests, ok, arrivals int64
	errors                 map[string]int64
	dur, gap               Samples
	bytes                  []int32
}

type chainKey struct {
	agent int
	seq   int64
}

// openChain is a chain whose last hop has not been read yet.
type openChain struct {
	hop            int
	sentUS         int64 // hop 1 sent
	hopsUS, tokexU int64
}

func newAgenticTally(length int) *agenticTally {
	return &agenticTally{length: length, kinds: map[exchange.Grant]*groupTally{}, open: map[chainKey]*openChain{},
		breaks: map[ChainBreak]int64{}}
}

// add files one measured row (dropped and aborted ones included).
func (a *agenticTally) add(q *Request) {
	k := a.kinds[q.Grant()]
	if k == nil {
		k = &groupTally{}
		a.kinds[q.Grant()] = k
	}
	if q.Hop <= 1 {
		k.arrivals += q.Arrivals()
	}
	k.add(q)
	if q.Hop < 1 || q.Hop > MaxChain {
		return
	}
	a.maxHop = max(a.maxHop, q.Hop)
	h := a.hops[q.Hop]
	if h == nil {
		h = &groupTally{}
		a.hops[q.Hop] = h
	}
	h.add(q)
	if a.length > 0 { // the chain's length unknown (an import): its hops' figures only
		a.follow(q)
	}
}

func (g *groupTally) add(q *Request) {
	if q.Dropped() || q.Aborted() {
		return
	}
	g.requests++
	if q.OK() {
		g.ok++
		if q.TokenBytes > 0 {
			g.bytes = append(g.bytes, int32(min(q.TokenBytes, MaxTokenBytes)))
		}
	} else {
		if g.errors == nil {
			g.errors = map[string]int64{}
		}
		g.errors[q.ErrorKey()]++
	}
	g.dur.Add(q.DurationUS)
	g.gap.Add(q.SendLagUS)
}

// follow links a hop row to its chain: hop 1 opens it, hop k continues
// the chain whose hop k−1 was read last, and the chain ends at its last
// hop, a failure or an abort.
func (a *agenticTally) follow(q *Request) {
	if q.Dropped() {
		return
	}
	key := chainKey{q.Agent, q.Seq}
	c := a.open[key]
	switch {
	case q.Hop == 1:
		if c != nil { // a chain that never ended: its row is the evidence's problem
			a.chains.Unlinked += int64(c.hop)
		}
		if q.Aborted() {
			delete(a.open, key)
			return
		}
		if len(a.open) >= MaxOpenChains {
			a.chains.Unlinked++
			return
		}
		a.chains.Started++
		c = &openChain{sentUS: q.ScheduledUS + q.SendLagUS}
		a.open[key] = c
	case c == nil || c.hop != q.Hop-1:
		a.chains.Unlinked++
		return
	default:
		c.tokexU += q.SendLagUS
	}
	c.hop = q.Hop
	c.hopsUS += q.DurationUS
	switch {
	case q.Aborted():
		a.chains.Aborted++
		delete(a.open, key)
	case !q.OK():
		a.breaks[ChainBreak{Hop: q.Hop, Error: q.ErrorKey()}]++
		delete(a.open, key)
	case a.length > 0 && q.Hop >= a.length:
		a.chains.Completed++
		a.latency.Add(q.ScheduledUS + q.SendLagUS + q.DurationUS - c.sentUS)
		a.hopsSum.Add(c.hopsUS)
		a.tokexSum.Add(c.tokexU)
		delete(a.open, key)
	}
}

// hopStats are the hops seen, in order.
func (a *agenticTally) hopStats() []HopStats {
	var out []HopStats
	for k, h := range a.hops {
		if h == nil {
			continue
		}
		out = append(out, HopStats{Hop: k, Requests: h.requests, OK: h.ok, SuccessRatio: ratio(h.ok, h.requests),
			Errors: h.errors, LatencyMs: h.dur.Summarize(), GapMs: h.gap.Summarize(), TokenBytes: sizes(h.bytes)})
	}
	return out
}

// kindStats are the grants seen, in exchange.Grants order.
func (a *agenticTally) kindStats() []KindStats {
	var out []KindStats
	for _, g := range exchange.Grants {
		k := a.kinds[g]
		if k == nil {
			continue
		}
		out = append(out, KindStats{Kind: g, Requests: k.requests, OK: k.ok, SuccessRatio: ratio(k.ok, k.requests),
			Errors: k.errors, LatencyMs: k.dur.Summarize(), TokenBytes: sizes(k.bytes), Arrivals: k.arrivals})
	}
	return out
}

// chainStats are the run's chains; nil without hops.
func (a *agenticTally) chainStats() *ChainStats {
	if a.maxHop == 0 || a.length == 0 {
		return nil
	}
	c := a.chains
	c.Length = a.length
	c.Unfinished = int64(len(a.open))
	c.LatencyMs, c.HopsMs, c.TokexMs = a.latency.Summarize(), a.hopsSum.Summarize(), a.tokexSum.Summarize()
	for b, n := range a.breaks {
		b.Count = n
		c.Broken = append(c.Broken, b)
	}
	SortBreaks(c.Broken)
	c.Broken = c.Broken[:min(len(c.Broken), MaxBreaks)]
	return &c
}

func sizes(b []int32) Sizes {
	if len(b) == 0 {
		return Sizes{}
	}
	slices.Sort(b)
	var sum float64
	for _, v := range b {
		sum += float64(v)
	}
	return Sizes{Count: int64(len(b)), Min: int64(b[0]), Max: int64(b[len(b)-1]),
		Avg: Round3(sum / float64(len(b))), P50: Round3(Percentile(b, 0.5))}
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return Round4(float64(a) / float64(b))
}

// agenticFigures puts the chains' and the grants' figures in r.
func (t *Tally) agenticFigures(r *Run) {
	a := t.agentic
	if a == nil {
		return
	}
	r.Hops, r.Chains = a.hopStats(), a.chainStats()
	if kinds := a.kindStats(); r.Mix != nil || len(kinds) > 1 {
		r.Kinds = kinds
	}
}

// SortBreaks orders breaks by count, then hop and error.
func SortBreaks(bs []ChainBreak) {
	slices.SortFunc(bs, func(x, y ChainBreak) int {
		if x.Count != y.Count {
			return cmp.Compare(y.Count, x.Count)
		}
		if x.Hop != y.Hop {
			return cmp.Compare(x.Hop, y.Hop)
		}
		return strings.Compare(x.Error, y.Error)
	})
}
