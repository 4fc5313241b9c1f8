// Package runnertest is a fake runner.Driver for the tests of what drives
// campaigns (runner, the command line): no server and no load, each run
// answered with rows of the fake's making, and what the campaign asked of
// it recorded. Exit codes, flags and output are tested with it in
// milliseconds; runner/local's tests drive real campaigns.
package runnertest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
)

// Driver answers every run at once with N measured exchanges spaced a
// millisecond apart, ending just before Run returns; or, with Pace, one
// exchange every Pace in real time until the run's planned length has
// passed or it is stopped (the runner's watches then see them as they
// come). Its zero value is a driver whose runs record nothing.
type Driver struct {
	N int
	// Pace, when set, makes each run last its planned length in real time.
	Pace time.Duration
	// Status is the HTTP status of a run's exchanges (default 200; 0: no
	// response, a conn_error).
	Status func(p event.PlannedRun) int
	// StartErr fails Start; RunErr fails the run of that ID after its rows.
	StartErr error
	RunErr   map[string]error
	// During, when set, is called in the middle of each run.
	During func(p event.PlannedRun)

	mu      sync.Mutex
	starts  int
	closed  int
	runs    []string
	targets []float64
}

// Name implements runner.Driver.
func (d *Driver) Name() string { return "fake" }

// Target implements runner.Driver: a port nothing listens on.
func (d *Driver) Target() string { return "http://127.0.0.1:1/token" }

// InFlight implements runner.Driver.
func (d *Driver) InFlight() int64 { return 0 }

// Start implements runner.Driver.
func (d *Driver) Start(context.Context, runner.Output) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.starts++
	return d.StartErr
}

// Close implements runner.Driver.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed++
	return nil
}

// Starts is how many times the driver was started, Closes closed.
func (d *Driver) Starts() int { d.mu.Lock(); defer d.mu.Unlock(); return d.starts }

// Closes is how many times the driver was closed.
func (d *Driver) Closes() int { d.mu.Lock(); defer d.mu.Unlock(); return d.closed }

// Runs are the IDs of the runs the campaign gave the driver, in order.
func (d *Driver) Runs() []string { d.mu.Lock(); defer d.mu.Unlock(); return slices.Clone(d.runs) }

// Rates are the runs' target rates, in order.
func (d *Driver) Rates() []float64 { d.mu.Lock(); defer d.mu.Unlock(); return slices.Clone(d.targets) }

// Run implements runner.Driver.
func (d *Driver) Run(ctx context.Context, p event.PlannedRun, out runner.Output) (runner.RunResult, error) {
	d.mu.Lock()
	d.runs = append(d.runs, p.ID)
	d.targets = append(d.targets, p.TargetRPS)
	d.mu.Unlock()
	status := 200
	if d.Status != nil {
		status = d.Status(p)
	}
	if d.Pace > 0 {
		return d.paced(ctx, p, out, status)
	}
	start := time.Now().Add(-time.Duration(d.N+1) * time.Millisecond)
	if s, ok := out.(runner.Scheduler); ok {
		s.Schedule(start)
	}
	for i := 0; i < d.N; i++ {
		if i == d.N/2 && d.During != nil {
			d.During(p)
		}
		out.Record(row(i, start.Add(time.Duration(i)*time.Millisecond), status))
	}
	end := start.Add(time.Duration(d.N) * time.Millisecond)
	return runner.RunResult{Started: start, MeasuredStart: start, MeasuredEnd: end}, d.RunErr[p.ID]
}

// paced records an exchange every Pace until the run's planned length has
// passed or ctx ends.
func (d *Driver) paced(ctx context.Context, p event.PlannedRun, out runner.Output, status int) (runner.RunResult, error) {
	start := time.Now()
	if s, ok := out.(runner.Scheduler); ok {
		s.Schedule(start)
	}
	tick := time.NewTicker(d.Pace)
	defer tick.Stop()
	n := int(p.Total() / d.Pace)
	for i := 0; i < n; i++ {
		if i == n/2 && d.During != nil {
			d.During(p)
		}
		select {
		case <-ctx.Done():
			return runner.RunResult{Started: start, MeasuredStart: start.Add(p.Warmup), MeasuredEnd: time.Now()}, ctx.Err()
		case at := <-tick.C:
			r := row(i, at, status)
			r.DurationUS = 500
			if at.Sub(start) < p.Warmup {
				r.Phase = stats.Warmup
			}
			out.Record(r)
		}
	}
	return runner.RunResult{Started: start, MeasuredStart: start.Add(p.Warmup), MeasuredEnd: start.Add(p.Total())}, d.RunErr[p.ID]
}

// row is exchange i, scheduled at, answered with status (0: none).
func row(i int, at time.Time, status int) *stats.Request {
	r := &stats.Request{Seq: int64(i), Phase: stats.Measured, ScheduledUS: at.UnixMicro(), DurationUS: int64(1000 + i), Status: status, Outcome: "ok"}
	switch {
	case status == 0:
		r.Outcome, r.Description = "conn_error", "connect: connection refused"
	case status != 200:
		r.Outcome, r.Detail = "http_error", fmt.Sprint(status)
	}
	return r
}

// Campaign is stages 10/s and 20/s × 2 rounds of a second after a sanity
// run at 5/s, sampled every 10 ms (each run waits one sample past its
// end), its invalidating warnings allowed (the fake's rows are not load).
func Campaign() config.Campaign {
	c := config.Article()
	c.Name = "fake"
	c.Stages, c.Rounds = []float64{10, 20}, 2
	c.Duration, c.Warmup, c.Pause, c.Idle, c.Sampling = time.Second, 0, 0, 0, 10*time.Millisecond
	c.Sanity.Enabled, c.Sanity.Rate, c.Sanity.Duration = true, 5, time.Second
	c.Thresholds.AllowWarnings = stats.InvalidatingCodes
	return c
}
