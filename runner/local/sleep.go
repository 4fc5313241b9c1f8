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

// timerSleeper waits on a reused Go timer. Go's timers can wake up to a
// millisecond late when the process is otherwise idle (the runtime's
// poller sleeps in whole milliseconds): at 2,000 arrivals/s that is the
// whole gap between two arrivals. Linux has preciseSleeper.
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
