package runner

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/runner/config"
)

// backlogDriver is a server still busy with an overloaded probe's backlog
// until drained is closed: its engine samples (every 50 ms, to the
// campaign's output) read busy cores, and a probe request waits behind
// the backlog; then it is at rest and answers in 2 ms.
type backlogDriver struct {
	fakeDriver
	busy    float64 // cores while draining
	drained chan struct{}
	pings   atomic.Int64
	stop    chan struct{}
	wg      sync.WaitGroup
}

func (d *backlogDriver) Start(_ context.Context, out Output) error {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-d.stop:
				return
			case now := <-t.C:
				cores := d.busy
				if d.isDrained() {
					cores = 0.01
				}
				out.Emit(event.Resource{At: now, Role: "engine", Name: "e", CPUMillicores: cores * 1000, Source: "proc"})
			}
		}
	}()
	return nil
}

func (d *backlogDriver) isDrained() bool {
	select {
	case <-d.drained:
		return true
	default:
		return false
	}
}

func (d *backlogDriver) Close() error { close(d.stop); d.wg.Wait(); return nil }

// Ping waits behind the backlog (at most timeout), then answers in 2 ms.
func (d *backlogDriver) Ping(ctx context.Context, timeout time.Duration) (time.Duration, bool) {
	d.pings.Add(1)
	start := time.Now()
	select {
	case <-d.drained:
	case <-time.After(timeout):
		return timeout, false
	case <-ctx.Done():
		return time.Since(start), false
	}
	time.Sleep(2 * time.Millisecond)
	return time.Since(start), true
}

// coolCampaign is a campaign on d, started so that its output watches
// the engine, with the engine at rest measured at 0.01 cores and an
// unloaded latency of 2 ms.
func coolCampaign(t *testing.T, d Driver, logs *[]event.Log) *Campaign {
	t.Helper()
	c := config.Article()
	c.Sampling = 50 * time.Millisecond
	c.Request.Timeout = 300 * time.Millisecond
	bus := &event.Bus{}
	var mu sync.Mutex
	bus.Subscribe(func(e event.Event) {
		if l, ok := e.(event.Log); ok {
			mu.Lock()
			*logs = append(*logs, l)
			mu.Unlock()
		}
	})
	camp := &Campaign{Cfg: c, Driver: d, Bus: bus, idle: &summary.Idle{Cores: 0.01}, unloaded: 2 * time.Millisecond}
	camp.idleOut = &output{bus: bus, idle: &idleMeter{}, rest: &restWatch{}}
	if err := d.Start(context.Background(), camp.idleOut); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if _, ok := d.(*backlogDriver); ok { // a campaign samples its engine long before a cool-down
		for i := 0; i < 1000 && !camp.idleOut.rest.seen(); i++ {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return camp
}

// TestCoolDownWaitsForTheBacklog (issue 23): after an overloaded probe a
// single-threaded server keeps serving the requests the probe abandoned;
// a fixed cool-down started every later, lower, probe into that backlog.
// The cool-down now lasts until the engine's CPU is back near rest and a
// probe request answers at its unloaded latency — never before the
// backlog drained — within its bound, and says what it saw.
func TestCoolDownWaitsForTheBacklog(t *testing.T) { synctest.Test(t, testCoolDownWaitsForTheBacklog) }

func testCoolDownWaitsForTheBacklog(t *testing.T) {
	d := &backlogDriver{busy: 0.95, drained: make(chan struct{}), stop: make(chan struct{})}
	var logs []event.Log
	camp := coolCampaign(t, d, &logs)
	prev := &stats.Run{EngineCPU: &stats.CPU{AvgCores: 0.95}}
	var drainedAt atomic.Int64
	time.AfterFunc(600*time.Millisecond, func() { drainedAt.Store(time.Now().UnixNano()); close(d.drained) })
	start := time.Now()
	cd := camp.settle(context.Background(), curve.Step{Rate: 50, Round: 1, CoolDown: time.Minute}, prev)
	end := time.Now()
	if at := drainedAt.Load(); at == 0 || end.UnixNano() < at {
		t.Fatalf("the cool-down ended %s in, before the backlog drained", end.Sub(start))
	}
	if !cd.Settled || cd.Probes < 1 || cd.EngineCores == nil || *cd.EngineCores > *cd.TargetCores || cd.ProbeMs == nil ||
		*cd.ProbeMs > *cd.MaxProbeMs || !strings.Contains(cd.Reason, "unloaded latency") || cd.Seconds <= 0 {
		t.Errorf("cool-down %+v", *cd)
	}
	if want := 0.01 + restShare*(0.95-0.01); *cd.TargetCores != want || *cd.RestCores != 0.01 {
		t.Errorf("target %v cores (rest %v), want %v", *cd.TargetCores, *cd.RestCores, want)
	}
	if !said(logs, "cooled down in") {
		t.Errorf("no progress said: %v", logs)
	}
}

// TestCoolDownIsBounded: a server that never drains is waited for the
// bound only, and the record and a warning say so.
func TestCoolDownIsBounded(t *testing.T) { synctest.Test(t, testCoolDownIsBounded) }

func testCoolDownIsBounded(t *testing.T) {
	d := &backlogDriver{busy: 0.95, drained: make(chan struct{}), stop: make(chan struct{})}
	var logs []event.Log
	camp := coolCampaign(t, d, &logs)
	cd := camp.settle(context.Background(), curve.Step{Rate: 50, Round: 1, CoolDown: 400 * time.Millisecond}, nil)
	if cd.Settled || !strings.Contains(cd.Reason, "bound") || cd.Seconds < 0.4 || d.pings.Load() != 0 {
		t.Errorf("cool-down %+v; %d probe requests to a busy engine", *cd, d.pings.Load())
	}
	if !said(logs, "cool-down bound reached") {
		t.Errorf("no warning: %v", logs)
	}
}

// TestCoolDownWithNothingToWatch: no engine samples and no probe request
// (a driver that cannot send one): the old fixed time, said as such.
func TestCoolDownWithNothingToWatch(t *testing.T) { synctest.Test(t, testCoolDownWithNothingToWatch) }

func testCoolDownWithNothingToWatch(t *testing.T) {
	var logs []event.Log
	camp := coolCampaign(t, &fakeDriver{}, &logs)
	camp.Cfg.Warmup = 0
	cd := camp.settle(context.Background(), curve.Step{Rate: 50, Round: 1, CoolDown: 100 * time.Millisecond}, nil)
	if cd.Settled || cd.Reason != "a fixed time: nothing to watch" || cd.TargetCores != nil || cd.UnloadedMs != nil {
		t.Errorf("cool-down %+v", *cd)
	}
}

func said(logs []event.Log, s string) bool {
	for _, l := range logs {
		if strings.Contains(l.Message, s) {
			return true
		}
	}
	return false
}
