package proc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
)

// Target is one source sampled under a role (engine, generator).
type Target struct {
	Role   string
	Source Source
	// Exited, when set, is told once that the source's process is gone
	// (a reading failed with ErrExited); sampling it then stops.
	Exited func(error)
}

// exited tells t.Exited when err says the process is gone.
func (t Target) exited(err error) {
	if t.Exited != nil && errors.Is(err, ErrExited) {
		t.Exited(err)
	}
}

// Sample reads every target each interval and emits Resource events until
// ctx ends; each target has its own loop, so a slow scrape delays no other.
// A target that cannot be read at the start (or stops being readable, the
// process exited) is reported once through warn and then skipped; a
// failing scrape of a remote endpoint is reported once and retried.
func Sample(ctx context.Context, interval time.Duration, targets []Target, emit func(event.Event), warn func(string)) {
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sampleOne(ctx, interval, t, emit, warn)
		}()
	}
	wg.Wait()
}

func sampleOne(ctx context.Context, interval time.Duration, t Target, emit func(event.Event), warn func(string)) {
	_, remote := t.Source.(*Prometheus)
	prev, err := t.Source.Read()
	if err != nil && !remote {
		warn("cannot sample " + t.Source.Name() + ": " + err.Error())
		t.exited(err)
		return
	}
	ok, failing := err == nil, err != nil
	if failing {
		warn("cannot sample " + t.Source.Name() + ": " + err.Error() + " (retrying)")
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r, err := t.Source.Read()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !remote {
				warn("stopped sampling " + t.Source.Name() + ": " + err.Error())
				t.exited(err)
				return
			}
			if !failing {
				warn("sampling " + t.Source.Name() + " failed: " + err.Error() + " (retrying)")
				failing = true
			}
			continue
		}
		if failing {
			warn("sampling " + t.Source.Name() + " works again")
			failing = false
		}
		switch {
		case !ok: // the first reading after failures: nothing to compare with yet
		case r.CPUSeconds < prev.CPUSeconds:
			warn("CPU counter of " + t.Source.Name() + " went back (the process restarted?): sample dropped")
		case jumped(prev, r):
			warn(fmt.Sprintf("CPU counter of %s advanced %.4g s in %s, faster than %d cores: not a CPU counter (an overflow?), sample dropped",
				t.Source.Name(), r.CPUSeconds-prev.CPUSeconds, r.At.Sub(prev.At).Round(time.Millisecond), sample.MaxPlausibleCores))
		default:
			emit(event.Resource{
				At: r.At, Role: t.Role, Name: t.Source.Name(), CPUMillicores: Rate(prev, r),
				MemoryBytes: r.MemoryBytes, CPUSecondsTotal: r.CPUSeconds, Source: t.Source.Kind(),
			})
		}
		prev, ok = r, true
	}
}

// jumped reports a counter that advanced faster than any server can
// (sample.MaxPlausibleCores): an overflow or a hostile endpoint, never CPU.
// Such a reading gives no sample; the evidence then shows the jump between
// the samples around it, which the run's statistics warn about
// (stats.WarnCPUCounterInvalid) and take no CPU figure from.
func jumped(prev, r Reading) bool {
	dt := max(r.At.Sub(prev.At).Seconds(), 0.001)
	return r.CPUSeconds-prev.CPUSeconds > dt*sample.MaxPlausibleCores
}
