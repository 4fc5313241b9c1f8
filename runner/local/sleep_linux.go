package local

import (
	"context"
	"runtime"
	"syscall"
	"time"
)

// preciseSleeper is the scheduler's clock on Linux: nanosleep(2) for the
// last stretch to an arrival, so it is sent within the kernel's timer
// slack (50 µs) of its time rather than up to a millisecond late; a Go
// timer for all but the last millisecond of longer waits.
//
// A system call keeps its processor (P) while it sleeps, so a worker the
// scheduler has just readied there would wait for another core to steal
// it, which on a busy host is late. So after a hand-off the scheduler
// first yields: the worker runs on the scheduler's own processor (or the
// scheduler moves to another), then the scheduler sleeps. Yielding rather
// than waiting for the worker's signal spares a wake-up per request: 4 %
// less CPU at 2,000/s and half the sends over 1 ms late, in 8 interleaved
// runs of each.
type preciseSleeper struct {
	t       *time.Timer
	pending bool   // a job was handed to a worker since the last wait
	yield   func() // runtime.Gosched; counted in tests
}

// coarse: waits longer than this sleep on the Go timer until a millisecond
// is left.
const coarse = 2 * time.Millisecond

// preciseMinGap: with arrivals closer than this (above about 3,300/s) the
// Go timer is used. The process is then rarely idle long enough for the
// poller to oversleep (responses wake it), and a system call per arrival
// cost more than it saved: CPU per request +6 to +41 % at 5,000/s in
// interleaved runs of bench/lag.sh, lag no better; at 2,000/s +7 to +12 %
// for a median send lag of 0.15 instead of 0.8 ms.
const preciseMinGap = 300 * time.Microsecond

// newSleeper is the scheduler's clock for arrivals gap apart.
func newSleeper(gap time.Duration) sleeper {
	if gap < preciseMinGap {
		return newTimerSleeper()
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &preciseSleeper{t: t, yield: runtime.Gosched}
}

// dispatched tells the sleeper a job was just handed to a worker.
func (s *preciseSleeper) dispatched() { s.pending = true }

func (s *preciseSleeper) until(ctx context.Context, at time.Time) {
	if d := time.Until(at); d > coarse {
		s.t.Reset(time.Until(at.Add(-time.Millisecond)))
		select {
		case <-s.t.C:
		case <-ctx.Done():
			s.t.Stop()
		}
	} else if d > 0 && s.pending {
		s.yield()
	}
	s.pending = false
	for d := time.Until(at); d > 0 && ctx.Err() == nil; d = time.Until(at) {
		ts := syscall.NsecToTimespec(d.Nanoseconds())
		_ = syscall.Nanosleep(&ts, nil) // EINTR: the loop sleeps what is left
	}
}

func (s *preciseSleeper) close() { s.t.Stop() }
