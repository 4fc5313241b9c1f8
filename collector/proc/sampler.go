package proc

import (
	"context"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
)

// Target is one source sampled under a role (engine, generator).
type Target struct {
	Role   string
	Source Source
}

// Sample reads every target each interval and emits Resource events until
// ctx ends. A target that cannot be read (the process exited) is reported
// once through warn and then skipped.
func Sample(ctx context.Context, interval time.Duration, targets []Target, emit func(event.Event), warn func(string)) {
	prev := make([]Reading, len(targets))
	dead := make([]bool, len(targets))
	for i, t := range targets {
		r, err := t.Source.Read()
		if err != nil {
			dead[i] = true
			warn("cannot sample " + t.Source.Name() + ": " + err.Error())
			continue
		}
		prev[i] = r
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for i, t := range targets {
			if dead[i] {
				continue
			}
			r, err := t.Source.Read()
			if err != nil {
				dead[i] = true
				if ctx.Err() == nil {
					warn("stopped sampling " + t.Source.Name() + ": " + err.Error())
				}
				continue
			}
			emit(event.Resource{
				At: r.At, Role: t.Role, Name: t.Source.Name(), CPUMillicores: Rate(prev[i], r),
				MemoryBytes: r.MemoryBytes, CPUSecondsTotal: r.CPUSeconds, Source: "proc",
			})
			prev[i] = r
		}
	}
}
