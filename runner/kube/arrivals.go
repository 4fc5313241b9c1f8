package kube

import (
	"cmp"
	"math"
	"slices"
	"sync/atomic"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/k6"
)

// Which arrival a k6 iteration served. The agent script prints the slot of
// the time k6 began the iteration (Line.Seq): the latest arrival it can
// serve, and the right one while k6 begins iterations on time. A stalled k6
// fires its backlog late, in a burst (lib/executor/constant_arrival_rate.go),
// so an iteration may serve an earlier arrival; and k6 numbers only the
// iterations it begins (Line.Began), so the n-th one served arrival n plus
// the arrivals dropped before it. Within an agent's phase:
//
//	Began ≤ arrival ≤ Seq, and arrivals grow with Began.
//
// A line with Began = Seq is exact and recorded as it comes. Any other is
// held (shown in the live view meanwhile) until the agent's summary gives
// k6's drop count D: with D = 0 its arrival is Began, exactly; else it is
// the latest arrival consistent with the bounds and the other lines, and
// its start lag and latency from schedule are lower bounds (said, with how
// many). The slots no line claimed are the dropped arrivals.

// heldLine is one held request line, in 24 bytes.
type heldLine struct {
	slot, began     int32 // the begin-time slot; iterations begun before it (-1: not printed, tokex2)
	beganMS, sentMS int32 // when k6 began it and sent the request, ms after the phase's base
	durUS           uint32
	status          uint16
	outcome, detail uint8 // indexes in heldOutcomes and the agent's detail table
}

// maxHeld bounds the lines a run holds (≈ 100 MB); past it, lines are
// recorded with their begin-time slot and counted as lower bounds.
const maxHeld = 1 << 22

var heldOutcomes = []exchange.Outcome{exchange.OutcomeOK, exchange.OutcomeOAuthError, exchange.OutcomeHTTPError,
	exchange.OutcomeBadResponse, exchange.OutcomeTimeout, exchange.OutcomeConnError}

// hold keeps line l of the agent's phase sl for settling, or returns false
// when it cannot (the run's bound, a value that does not fit, a tokex1 line
// without begin time). ps.mu is held.
func (sl *phaseSlots) hold(ps *podState, l *k6.Line, n *atomic.Int64) bool {
	began, ok := l.BeganUS()
	q := &l.Request
	o := slices.Index(heldOutcomes, q.Outcome)
	if !ok || o < 0 || q.Seq > math.MaxInt32 || l.Began > math.MaxInt32 || q.DurationUS < 0 || q.DurationUS > math.MaxUint32 ||
		q.Status < 0 || q.Status > math.MaxUint16 {
		return false
	}
	if sl.held == nil {
		sl.baseMS = began/1000 - 1000
	}
	b, s := roundMS(began)-sl.baseMS, roundMS(q.ScheduledUS+q.SendLagUS)-sl.baseMS
	d := slices.Index(ps.details, q.Detail)
	if d < 0 && len(ps.details) < math.MaxUint8 {
		d = len(ps.details)
		ps.details = append(ps.details, q.Detail)
	}
	if d < 0 || b < 0 || b > math.MaxInt32 || s < 0 || s > math.MaxInt32 || n.Add(1) > maxHeld {
		return false
	}
	sl.held = append(sl.held, heldLine{slot: int32(q.Seq), began: int32(l.Began), beganMS: int32(b), sentMS: int32(s),
		durUS: uint32(q.DurationUS), status: uint16(q.Status), outcome: uint8(o), detail: uint8(d)})
	return true
}

func roundMS(us int64) int64 { return int64(math.Round(float64(us) / 1000)) }

// markExact notes that the iteration k6 began n-th was on its slot n.
func (sl *phaseSlots) markExact(n int64) {
	if n >= 0 && n < int64(len(sl.sent)) {
		if sl.exact == nil {
			sl.exact = make([]uint64, len(sl.sent)/64+1)
		}
		sl.exact[n/64] |= 1 << (n % 64)
	}
}

func (sl *phaseSlots) isExact(n int64) bool {
	return n >= 0 && n/64 < int64(len(sl.exact)) && sl.exact[n/64]&(1<<(n%64)) != 0
}

// settled is what settling one agent's phase found.
type settled struct {
	lowerBound   int     // lines whose arrival may be earlier than the one given
	moved        int     // lines given an arrival before their begin-time slot (k6 began them late)
	inconsistent int     // lines whose bounds contradict each other (clocks)
	drops        []int64 // the slots no line claimed, below the arrivals k6 fired
	uncertain    int     // drops next to a moved line: each may be off by one arrival
}

// settle gives every held line of the phase its arrival and records it;
// dropped and sent are k6's counts (-1: unknown).
func (sl *phaseSlots) settle(ps *podState, ph stats.Phase, period float64, dropped, sent int64, keep func(q *stats.Request, startLagUS, mintUS int64)) settled {
	var st settled
	h := sl.held
	derived := len(h) > 0 && slices.ContainsFunc(h, func(x heldLine) bool { return x.began < 0 })
	if derived { // tokex2: k6's numbering is the order of the begin times
		slices.SortStableFunc(h, func(a, b heldLine) int { return cmp.Or(cmp.Compare(a.beganMS, b.beganMS), cmp.Compare(a.slot, b.slot)) })
		for i := range h {
			h[i].began = int32(i)
		}
	} else {
		slices.SortFunc(h, func(a, b heldLine) int { return cmp.Compare(a.began, b.began) })
	}
	slack := int64(math.MaxInt32) // how many arrivals before a line may have gone unseen
	if dropped >= 0 {
		slack = dropped
		if derived && sent > int64(len(h)) {
			slack += sent - int64(len(h)) // lines the log lost shift the derived numbering
		}
	}
	next := int64(math.MaxInt32) // the arrival of the line begun next
	if dropped >= 0 && sent >= 0 {
		next = dropped + sent
	}
	arr := make([]int64, len(h))
	scan := min(next, int64(len(sl.sent))) - 1 // exact lines above, walking down
	for i := len(h) - 1; i >= 0; i-- {
		n := int64(h[i].began)
		for ; scan > n; scan-- {
			if sl.isExact(scan) {
				next = min(next, scan)
			}
		}
		a := min(int64(h[i].slot), n+slack, next-1)
		if a < n {
			a = n
			st.inconsistent++
		}
		arr[i], next = a, a
		if a > n {
			st.lowerBound++
		}
		if a < int64(h[i].slot) {
			st.moved++
		}
	}
	for i, x := range h {
		q := sl.request(ps, ph, x, arr[i], period)
		keep(q, (sl.baseMS+int64(x.beganMS))*1000-q.ScheduledUS, int64(x.sentMS-x.beganMS)*1000)
	}
	if fired := dropped + sent; dropped > 0 && sent >= 0 && fired <= int64(len(sl.sent)) { // a summary cannot make tokex hold more than the plan
		st.drops, st.uncertain = sl.unclaimed(h, arr, fired)
	}
	sl.held = nil
	return st
}

// request rebuilds a held line as a row served at arrival a.
func (sl *phaseSlots) request(ps *podState, ph stats.Phase, x heldLine, a int64, period float64) *stats.Request {
	sched := roundMS(sl.startUS)*1000 + int64(math.Round(float64(a)*period)) // the scenario starts on a whole ms
	q := &stats.Request{Agent: ps.index, Seq: a, Phase: ph, ScheduledUS: sched, SendLagUS: (sl.baseMS+int64(x.sentMS))*1000 - sched,
		DurationUS: int64(x.durUS), Status: int(x.status), Outcome: heldOutcomes[x.outcome], Detail: ps.details[x.detail]}
	q.Description = errorText(q)
	return q
}

// unclaimed lists the slots below fired that no line claimed, and how many
// of them lie next to a line k6 began late.
func (sl *phaseSlots) unclaimed(h []heldLine, arr []int64, fired int64) ([]int64, int) {
	claimed := make([]bool, fired)
	moved := make([]bool, fired)
	for n := int64(0); n < fired; n++ {
		claimed[n] = sl.isExact(n)
	}
	for i, a := range arr {
		if a >= 0 && a < fired {
			claimed[a] = true
			moved[a] = a < int64(h[i].slot)
		}
	}
	var out []int64
	uncertain := 0
	for k := int64(0); k < fired; k++ {
		if claimed[k] {
			continue
		}
		out = append(out, k)
		if k > 0 && moved[k-1] || k+1 < fired && moved[k+1] {
			uncertain++
		}
	}
	return out, uncertain
}

// errorText is what a row's k6 error code says, in words.
func errorText(q *stats.Request) string {
	if q.Outcome == exchange.OutcomeConnError || q.Outcome == exchange.OutcomeTimeout {
		return k6.ErrorText(q.Detail)
	}
	return ""
}

// keeper records rows as evidence only when the output can.
func keeper(out runner.Output) func(*stats.Request) {
	if k, ok := out.(runner.Keeper); ok {
		return k.Keep
	}
	return out.Record
}
