package runner

import (
	"context"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/config"
)

// fakeDriver is the internal tests' driver that records nothing, to embed
// (runnertest.Driver is the full fake, for tests outside the package: it
// imports runner).
type fakeDriver struct{}

func (fakeDriver) Name() string                        { return "fake" }
func (fakeDriver) Target() string                      { return "http://127.0.0.1:1/token" }
func (fakeDriver) InFlight() int64                     { return 0 }
func (fakeDriver) Close() error                        { return nil }
func (fakeDriver) Start(context.Context, Output) error { return nil }
func (fakeDriver) Run(_ context.Context, p event.PlannedRun, _ Output) (RunResult, error) {
	now := time.Now()
	return RunResult{Started: now, MeasuredStart: now, MeasuredEnd: now}, nil
}

// fakeCampaign is runnertest.Campaign's: stages 10/s and 20/s × 2 rounds
// after a sanity run, sampled every 10 ms.
func fakeCampaign() config.Campaign {
	c := config.Article()
	c.Name = "fake"
	c.Stages, c.Rounds = []float64{10, 20}, 2
	c.Duration, c.Warmup, c.Pause, c.Idle, c.Sampling = time.Second, 0, 0, 0, 10*time.Millisecond
	c.Sanity.Enabled, c.Sanity.Rate, c.Sanity.Duration = true, 5, time.Second
	c.Thresholds.AllowWarnings = stats.InvalidatingCodes
	return c
}
