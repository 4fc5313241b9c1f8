package local

import (
	"context"
	"testing"
	"time"
)

// After a hand-off the precise sleeper yields once before its system call,
// so the worker it readied runs first; without one, or for a wait long
// enough to block on the Go timer, it does not.
func TestPreciseSleeperYieldsAfterAHandOff(t *testing.T) {
	for _, c := range []struct {
		name    string
		handOff bool
		wait    time.Duration
		yields  int
	}{
		{"hand-off, short wait", true, 300 * time.Microsecond, 1},
		{"hand-off, arrival already due", true, -time.Millisecond, 0},
		{"hand-off, long wait on the Go timer", true, 3 * time.Millisecond, 0},
		{"no hand-off", false, 300 * time.Microsecond, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSleeper(time.Millisecond).(*preciseSleeper)
			defer s.close()
			n := 0
			s.yield = func() { n++ }
			if c.handOff {
				s.dispatched()
			}
			at := time.Now().Add(c.wait)
			s.until(context.Background(), at)
			if time.Now().Before(at) {
				t.Error("woke before the arrival's time")
			}
			if n != c.yields {
				t.Errorf("yielded %d times, want %d", n, c.yields)
			}
			if s.pending {
				t.Error("still pending after the wait")
			}
			s.until(context.Background(), time.Now().Add(100*time.Microsecond))
			if n != c.yields {
				t.Error("a second wait without a hand-off yielded")
			}
		})
	}
}

func TestPreciseSleeperOnlyForSparseArrivals(t *testing.T) {
	for _, c := range []struct {
		rate    float64
		precise bool
	}{{100, true}, {2000, true}, {3000, true}, {5000, false}, {50000, false}} {
		s := newSleeper(time.Duration(float64(time.Second) / c.rate))
		if _, ok := s.(*preciseSleeper); ok != c.precise {
			t.Errorf("%v/s: precise %v, want %v", c.rate, ok, c.precise)
		}
		s.close()
	}
}
