package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// Scaler is implemented by a driver that can set how many engines serve:
// the kube driver scales the engines' Deployment or StatefulSet, the
// local one starts engine processes sharing a port. A campaign over engine
// counts (kube.engines.replicas, --engines) scales to each count before its
// runs and restores the original count at its end, whatever ended it.
type Scaler interface {
	// Scale sets the engines to n and returns once n are ready to serve
	// (and settled), saying what it did.
	Scale(ctx context.Context, n int, out Output) (summary.Scale, error)
	// Restore puts the engines back as they were before the first Scale;
	// nothing to do returns ok false. Safe to call more than once.
	Restore(ctx context.Context, out Output) (s summary.Scale, ok bool, err error)
}

// RestoreTimeout bounds the restore at a campaign's end; an API server
// that stays unreachable that long leaves the workload scaled, said loudly.
const RestoreTimeout = 2 * time.Minute

// runCounts runs the plan of each engine count in turn (a capacity search
// per count when the campaign searches), scaling the engines to it first,
// and restores the original count at the end, interrupted or failed too.
func (c *Campaign) runCounts(ctx context.Context, plan []event.PlannedRun, runs []*stats.Run, out *output) ([]*stats.Run, map[int]*curve.Result, error) {
	sc, ok := c.Driver.(Scaler)
	if !ok {
		return runs, nil, fmt.Errorf("%s: the %s driver cannot set the engine count", c.Cfg.ReplicaField(), c.Driver.Name())
	}
	defer c.restore(sc, out)
	results := map[int]*curve.Result{}
	for _, n := range c.Cfg.ReplicaCounts() {
		if ctx.Err() != nil {
			break
		}
		mine := ofCount(plan, n)
		if !c.Search && c.allDone(mine) {
			continue // a resumed campaign measured this count before
		}
		s, err := sc.Scale(ctx, n, out)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "error", Message: fmt.Sprintf("scaling the engines to %d: %v", n, err)})
			return runs, results, fmt.Errorf("scale the engines to %d: %w", n, err)
		}
		c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "info", Message: s.String()})
		if err := c.Evidence.AddScale(s); err != nil {
			return runs, results, err
		}
		if runs, err = c.runPlan(ctx, mine, runs); err != nil {
			return runs, results, err
		}
		if c.Search && ctx.Err() == nil {
			var r *curve.Result
			plan, runs, r, err = c.runSearch(ctx, plan, runs, n)
			results[n] = r
			if err != nil {
				return runs, results, err
			}
		}
	}
	return runs, results, nil
}

// allDone reports planned runs that all finished before a resume.
func (c *Campaign) allDone(plan []event.PlannedRun) bool {
	for _, p := range plan {
		if c.Done[p.ID] == nil {
			return false
		}
	}
	return len(plan) > 0
}

// restore puts the engines back, with a context of its own: the campaign's
// may be cancelled (Ctrl-C) or the run may have failed.
func (c *Campaign) restore(sc Scaler, out *output) {
	ctx, cancel := context.WithTimeout(context.Background(), RestoreTimeout)
	defer cancel()
	s, ok, err := sc.Restore(ctx, out)
	if err != nil {
		c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "error", Message: "restoring the engines: " + err.Error()})
		return
	}
	if !ok {
		return
	}
	c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "info", Message: s.String()})
	_ = c.Evidence.AddScale(s)
}
