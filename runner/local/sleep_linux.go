package local

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// spinMargin is how long before the target the sleeper stops sleeping and
// polls the clock. nanosleep with 1 ns timer slack already wakes within tens
// of µs (p99 ≈ 0.15 ms on a busy 2-core machine), well inside the 1 ms
// budget, and spinning would cost the generator CPU at every arrival.
const spinMargin = 0

// sleeper waits until an absolute time with µs precision. It must run on a
// locked OS thread: the timer slack is per thread.
type sleeper struct{}

func newSleeper() sleeper {
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	return sleeper{}
}

func (sleeper) until(ctx context.Context, at time.Time) {
	for {
		d := time.Until(at)
		if d <= spinMargin {
			break
		}
		// Sleep in slices of at most 50 ms to notice cancellation.
		d = min(d-spinMargin, 50*time.Millisecond)
		ts := unix.NsecToTimespec(int64(d))
		_ = unix.Nanosleep(&ts, nil)
		if ctx.Err() != nil {
			return
		}
	}
	for time.Now().Before(at) {
	}
}
