// Package runner executes a campaign: the plan (a sanity run, then every
// stage × round), each run handed to a driver, the event stream, evidence,
// statistics and the summary.
package runner

import (
	"context"
	"errors"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// Output is where a driver sends what a run produces: events go to every
// consumer, request rows only to the evidence.
type Output interface {
	Emit(event.Event)
	Record(*stats.Request)
}

// Scheduler is implemented by the Output a run gets: a driver that knows
// when a run's first arrival is scheduled says so before the run starts, so
// that the live per-second windows count whole seconds of each phase.
type Scheduler interface {
	Schedule(start time.Time)
}

// Keeper is implemented by the Output a run gets: Keep records a row as
// evidence only, not in the live view. A driver uses it for rows it learns
// after they happened (the kube driver's copy of an agent's complete output,
// for the lines its log stream lost); the live windows of those seconds are
// already shown. Without it, a driver calls Record.
type Keeper interface {
	Keep(*stats.Request)
}

// Shower is implemented by the Output a run gets: Show puts a row in the
// live view only (the windows, the reachability watch), not the evidence. A
// driver uses it for rows whose final form it learns later (the kube
// driver: which arrival a k6 iteration served is known once the agent's
// drop count is) and records those with Keep then.
type Shower interface {
	Show(*stats.Request)
}

// Connector is implemented by the Output a run gets: a driver calls
// Connected as each new connection to the target is established. A target
// that accepts connections but answers slower than the request timeout is
// overloaded, not unreachable: its connections are the sign of life the
// unreachable_after watch needs while no response comes back.
type Connector interface {
	Connected(at time.Time)
}

// Late is implemented by a driver whose rows reach the runner up to
// ReportDelay after their requests were sent: a k6 agent prints a
// request's line when it completes, so a request held to the timeout, and
// the connection it was sent on, are known that much later. The
// unreachable_after watch waits that much longer before deciding.
type Late interface {
	ReportDelay() time.Duration
}

// RunResult is when a run's phases actually happened.
type RunResult struct {
	Started       time.Time
	MeasuredStart time.Time
	MeasuredEnd   time.Time
	// Warnings change what the run's numbers mean (incomplete evidence, …).
	Warnings []stats.Warning
	// SendLagParts splits the send lag when minting is part of it (k6 agents).
	SendLagParts *stats.SendLagParts
	// Verification counts the issued tokens verified (check.verify).
	Verification *sample.Verification
	// Connections: the agents' connections over the engines at the end
	// of the run (local engines sharing a port).
	Connections *sample.Connections
}

// Driver runs load somewhere: in-process (local) or in a cluster (kube).
type Driver interface {
	// Name is "local" or "kube (context/namespace)".
	Name() string
	// Start prepares the driver (starts the embedded server, samplers).
	Start(ctx context.Context, out Output) error
	// Target is the token endpoint under test (known after Start).
	Target() string
	// Run executes one run; it returns early when ctx ends.
	Run(ctx context.Context, p event.PlannedRun, out Output) (RunResult, error)
	// InFlight is the number of requests under way (for live windows).
	InFlight() int64
	// Close stops and removes everything the driver started or created.
	Close() error
}

// ErrEngineExited stops the run and the campaign: the engine process the
// driver samples exited (or its PID now names another process). Its run
// fails without a CPU figure; --resume continues once the server runs
// again (tokex run --resume DIR --pid NEW).
var ErrEngineExited = errors.New("the engine process is gone")

// EngineReporter is implemented by a driver that samples an engine process
// it found on this host (target.pid, target.pid_file, --pid): which one,
// and how it was found, recorded in the manifest at every start.
type EngineReporter interface {
	EngineProcess() *evidence.EngineProcess
}
