package local

import (
	"context"
	"testing"
	"time"
)

// After a hand-off the precise sleeper waits for a worker's start signal
// before its system call; a signal left from an earlier hand-off is not
// taken for this one's.
func TestPreciseSleeperWaitsForTheWorkerItReadied(t *testing.T) {
	started := make(chan struct{}, 1)
	s := newSleeper(started, time.Millisecond).(*preciseSleeper)
	defer s.close()
	started <- struct{}{} // stale: from a job handed out before
	s.dispatched()
	if len(started) != 0 || !s.pending {
		t.Fatalf("after a hand-off: %d signals queued, pending %v", len(started), s.pending)
	}
	go func() { started <- struct{}{} }() // the worker starts
	at := time.Now().Add(time.Millisecond)
	s.until(context.Background(), at)
	if time.Now().Before(at) {
		t.Error("woke before the arrival's time")
	}
	if s.pending {
		t.Error("still pending after the wait")
	}
	// No hand-off since: a wait does not read started.
	select {
	case <-started: // the worker's signal, had it come after the deadline
	default:
	}
	started <- struct{}{}
	s.until(context.Background(), time.Now().Add(100*time.Microsecond))
	if len(started) != 1 {
		t.Error("a wait without a hand-off consumed a start signal")
	}
}

func TestPreciseSleeperOnlyForSparseArrivals(t *testing.T) {
	for _, c := range []struct {
		rate    float64
		precise bool
	}{{100, true}, {2000, true}, {3000, true}, {5000, false}, {50000, false}} {
		s := newSleeper(nil, time.Duration(float64(time.Second)/c.rate))
		if _, ok := s.(*preciseSleeper); ok != c.precise {
			t.Errorf("%v/s: precise %v, want %v", c.rate, ok, c.precise)
		}
		s.close()
	}
}
