package runner

import (
	"slices"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// windower turns request rows into per-second Window events (by completion
// time; dropped arrivals by scheduled time). Percentiles are exact: a second
// holds at most a few thousand values.
type windower struct {
	run      event.PlannedRun
	emit     func(event.Event)
	inFlight func() int64

	mu      sync.Mutex
	buckets map[bucketKey]*bucket
}

type bucketKey struct {
	sec   int64
	phase stats.Phase
}

type bucket struct {
	dur               []int64
	lag               []int64
	ok, errs, dropped int64
	sum               int64
}

func newWindower(run event.PlannedRun, emit func(event.Event), inFlight func() int64) *windower {
	return &windower{run: run, emit: emit, inFlight: inFlight, buckets: map[bucketKey]*bucket{}}
}

// Add files one row.
func (w *windower) Add(r *stats.Request) {
	if r.Outcome == "aborted" {
		return
	}
	end := r.ScheduledUS
	if !r.Dropped() {
		end += r.SendLagUS + r.DurationUS
	}
	k := bucketKey{sec: end / 1e6, phase: r.Phase}
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.buckets[k]
	if b == nil {
		b = &bucket{}
		w.buckets[k] = b
	}
	switch {
	case r.Dropped():
		b.dropped++
		return
	case r.OK():
		b.ok++
	default:
		b.errs++
	}
	b.dur = append(b.dur, r.DurationUS)
	b.lag = append(b.lag, r.SendLagUS)
	b.sum += r.DurationUS
}

// Flush emits every bucket whose second ended before cutoff (all if zero).
func (w *windower) Flush(cutoff time.Time) {
	w.mu.Lock()
	var keys []bucketKey
	for k := range w.buckets {
		if cutoff.IsZero() || k.sec < cutoff.Unix() {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b bucketKey) int {
		if a.sec != b.sec {
			return int(a.sec - b.sec)
		}
		if a.phase == b.phase {
			return 0
		}
		if a.phase == stats.Warmup {
			return -1
		}
		return 1
	})
	var out []event.Window
	for _, k := range keys {
		b := w.buckets[k]
		delete(w.buckets, k)
		lat := stats.Summarize(b.dur)
		lag := stats.Summarize(b.lag)
		out = append(out, event.Window{
			At: time.Unix(k.sec, 0).UTC(), RunID: w.run.ID, Phase: k.phase, TargetRPS: w.run.TargetRPS,
			Completed: int64(len(b.dur)), OK: b.ok, Errors: b.errs, Dropped: b.dropped,
			Latency:    event.Digest{Count: lat.Count, Mean: lat.Avg, P50: lat.P50, P90: lat.P90, P95: lat.P95, P99: lat.P99, Max: lat.Max},
			SendLagP99: lag.P99,
		})
	}
	w.mu.Unlock()
	var inflight int64
	if w.inFlight != nil {
		inflight = w.inFlight()
	}
	for i := range out {
		out[i].InFlight = inflight
		w.emit(out[i])
	}
}

// Windows buckets a finished run's rows into per-second windows at once, as
// the live windower would have emitted them (used by imports).
func Windows(run event.PlannedRun, rows []stats.Request) []event.Window {
	var out []event.Window
	w := newWindower(run, func(e event.Event) { out = append(out, e.(event.Window)) }, nil)
	for i := range rows {
		w.Add(&rows[i])
	}
	w.Flush(time.Time{})
	return out
}
