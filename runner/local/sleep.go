package local

import (
	"context"
	"time"
)

// sleeper is the scheduler's clock, made and closed on its goroutine.
type sleeper interface {
	waiter
	close()
}

// newSleeper is the scheduler's clock: a reused Go timer. Go's timers can
// wake up to a millisecond late when the process is otherwise idle (the
// runtime's poller sleeps in whole milliseconds). Alternatives measured at
// 2,000 arrivals/s on 2 cores (raw or blocking nanosleep with 1 ns timer
// slack on a locked thread) woke more precisely at the median but left the
// worker they had just readied waiting on a processor held in the system
// call, which another core must steal; on a busy host that was a worse
// tail. Whatever lag remains is recorded per request.
func newSleeper() sleeper { return newTimerSleeper() }

type timerSleeper struct{ t *time.Timer }

func newTimerSleeper() *timerSleeper {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &timerSleeper{t: t}
}

func (s *timerSleeper) until(ctx context.Context, at time.Time) {
	d := time.Until(at)
	if d <= 0 {
		return
	}
	s.t.Reset(d)
	select {
	case <-s.t.C:
	case <-ctx.Done():
		s.t.Stop()
	}
}

func (s *timerSleeper) close() { s.t.Stop() }
