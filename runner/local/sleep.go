package local

import (
	"context"
	"time"
)

// sleeper waits for the scheduler until an arrival's time on a reused Go
// timer. Alternatives measured at 2,000 arrivals/s on 2 cores (raw or
// blocking nanosleep with 1 ns timer slack on a locked thread) woke more
// precisely at the median but stalled the workers they had just readied,
// giving a worse p99; see bench/generator-accuracy.sh. Whatever lag remains
// is recorded per request and is part of latency_from_schedule_ms.
type sleeper struct{ t *time.Timer }

func newSleeper() *sleeper {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &sleeper{t: t}
}

func (s *sleeper) until(ctx context.Context, at time.Time) {
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
