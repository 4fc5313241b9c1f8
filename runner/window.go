package runner

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// windower turns request rows into per-second Window events (by completion
// time; dropped arrivals by scheduled time). Percentiles are exact: a second
// holds at most a few thousand values.
//
// Once the driver says when the run's first arrival is scheduled
// (Schedule), windows are the seconds of each phase counted from the
// phase's start, so only a phase's last window can be partial and it
// carries its length; responses after the measured phase ends belong to its
// last window, which is held until the run ends. Without a schedule
// (drivers that cannot know it) windows are wall-clock seconds.
type windower struct {
	run      event.PlannedRun
	emit     func(event.Event)
	inFlight func() int64

	mu      sync.Mutex
	buckets map[bucketKey]*bucket
	// Phase bounds in unix µs; start 0 while unknown.
	start, measured, end int64
}

type bucketKey struct {
	at    int64 // window start, unix µs
	phase stats.Phase
}

type bucket struct {
	dur, lag                      stats.Samples
	ok, errs, noResponse, dropped int64
	kinds                         map[string]int64
	hist                          []int64 // by event.LatencyBoundsMs
}

func newWindower(run event.PlannedRun, emit func(event.Event), inFlight func() int64) *windower {
	return &windower{run: run, emit: emit, inFlight: inFlight, buckets: map[bucketKey]*bucket{}}
}

// Schedule implements Scheduler: the run's first arrival is at start.
func (w *windower) Schedule(start time.Time) {
	w.bounds(start, start.Add(w.run.Warmup), start.Add(w.run.Total()))
}

func (w *windower) bounds(start, measured, end time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.start, w.measured, w.end = start.UnixMicro(), measured.UnixMicro(), end.UnixMicro()
}

// Cut ends the measured phase at end when the run stopped early.
func (w *windower) Cut(end time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := end.UnixMicro(); w.start != 0 && e < w.end {
		w.end = max(e, w.measured)
	}
}

func (w *windower) phase(p stats.Phase) (from, to int64) {
	if p == stats.Warmup {
		return w.start, w.measured
	}
	return w.measured, w.end
}

// key places a completion time (µs) in its window.
func (w *windower) key(t int64, p stats.Phase) bucketKey {
	if w.start == 0 {
		return bucketKey{at: t / 1e6 * 1e6, phase: p}
	}
	from, to := w.phase(p)
	if p == stats.Measured && t >= to {
		t = to - 1 // a late response still answers the run's last second
	}
	t = max(t, from)
	return bucketKey{at: from + (t-from)/1e6*1e6, phase: p}
}

// seconds is how much of its window a phase covers; 0 when unknown.
func (w *windower) seconds(k bucketKey) float64 {
	if w.start == 0 {
		return 0
	}
	_, to := w.phase(k.phase)
	if s := min(k.at+1e6, to) - k.at; s > 0 {
		return float64(s) / 1e6
	}
	return 0
}

// held reports the measured phase's last window, which late responses
// still join until the run ends.
func (w *windower) held(k bucketKey) bool {
	return w.start != 0 && k.phase == stats.Measured && k.at+1e6 >= w.end
}

// Add files one row.
func (w *windower) Add(r *stats.Request) {
	if r.Aborted() {
		return
	}
	end := r.ScheduledUS
	if !r.Dropped() {
		end += r.SendLagUS + r.DurationUS
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	k := w.key(end, r.Phase)
	b := w.buckets[k]
	if b == nil {
		b = &bucket{}
		w.buckets[k] = b
	}
	switch {
	case r.Dropped():
		b.dropped += r.Arrivals()
		return
	case r.OK():
		b.ok++
	default:
		b.errs++
		if !r.Responded() {
			b.noResponse++
		}
		b.kind(r.ErrorKey())
	}
	b.dur.Add(r.DurationUS)
	if r.Hop <= 1 { // a chain's later hop waited for the one before, not the schedule
		b.lag.Add(r.SendLagUS)
	}
	if b.hist == nil {
		b.hist = make([]int64, len(event.LatencyBoundsMs)+1)
	}
	b.hist[event.LatencyBucket(r.DurationUS)]++
}

// kind counts one error by its key, the first MaxErrorKinds keys by name.
func (b *bucket) kind(key string) {
	if b.kinds == nil {
		b.kinds = map[string]int64{}
	}
	if _, ok := b.kinds[key]; !ok && len(b.kinds) >= event.MaxErrorKinds {
		key = event.OtherErrors
	}
	b.kinds[key]++
}

// Flush emits every window that ended before cutoff (all if zero).
func (w *windower) Flush(cutoff time.Time) {
	w.mu.Lock()
	var keys []bucketKey
	for k := range w.buckets {
		if cutoff.IsZero() || (k.at+1e6 <= cutoff.UnixMicro() && !w.held(k)) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b bucketKey) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
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
		lat := b.dur.Summarize()
		lag := b.lag.Summarize()
		out = append(out, event.Window{
			At: time.UnixMicro(k.at).UTC(), Seconds: w.seconds(k), RunID: w.run.ID, Phase: k.phase, TargetRPS: w.run.TargetRPS,
			Completed: int64(b.dur.Len()), OK: b.ok, Errors: b.errs, NoResponse: b.noResponse, Dropped: b.dropped,
			Latency:    lat,
			SendLagP99: lag.P99, ErrorKinds: b.kinds, LatencyBuckets: b.hist,
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

// WindowBuilder buckets a finished run's rows, streamed one at a time,
// into the windows the live windower would have emitted (used by imports).
// It keeps two compact durations per row until Windows.
type WindowBuilder struct {
	w   *windower
	out []event.Window
}

// NewWindowBuilder starts the windows of run; zero times leave the bounds
// unknown.
func NewWindowBuilder(run event.PlannedRun, start, measuredStart, measuredEnd time.Time) *WindowBuilder {
	b := &WindowBuilder{}
	b.w = newWindower(run, func(e event.Event) { b.out = append(b.out, e.(event.Window)) }, nil)
	if !start.IsZero() && !measuredStart.IsZero() && measuredEnd.After(measuredStart) {
		b.w.bounds(start, measuredStart, measuredEnd)
	}
	return b
}

// Add files one row.
func (b *WindowBuilder) Add(r *stats.Request) { b.w.Add(r) }

// Windows returns every window in time order.
func (b *WindowBuilder) Windows() []event.Window {
	b.w.Flush(time.Time{})
	return b.out
}
