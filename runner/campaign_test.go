package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/config"
)

// steadyDriver records a row every millisecond until its run's context
// ends (or, as a safety net, a minute passes).
type steadyDriver struct{ cancelled, timedOut atomic.Int32 }

func (d *steadyDriver) Name() string                        { return "steady" }
func (d *steadyDriver) Start(context.Context, Output) error { return nil }
func (d *steadyDriver) Target() string                      { return "http://127.0.0.1:1/token" }
func (d *steadyDriver) InFlight() int64                     { return 0 }
func (d *steadyDriver) Close() error                        { return nil }
func (d *steadyDriver) Run(ctx context.Context, p event.PlannedRun, out Output) (RunResult, error) {
	start := time.Now()
	safety := time.After(time.Minute)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for i := int64(0); ; i++ {
		select {
		case <-ctx.Done():
			d.cancelled.Add(1)
			return RunResult{Started: start, MeasuredStart: start, MeasuredEnd: time.Now()}, nil
		case <-safety:
			d.timedOut.Add(1)
			return RunResult{Started: start, MeasuredStart: start, MeasuredEnd: time.Now()}, nil
		case now := <-tick.C:
			out.Record(&stats.Request{Seq: i, Phase: stats.Measured, ScheduledUS: now.UnixMicro(), DurationUS: 1000 + i%97, Status: 200, Outcome: "ok"})
		}
	}
}

// TestRunStopsAtTheFirstFailedEvidenceWrite is issue 9 item 18: on a full
// disk the run kept loading the target for ~9 s after the first failed
// write while rows were dropped silently. The run stops at once, and the
// campaign fails with the reason in the manifest.
// The run is an hour of 1000/s in the bubble's time (testing/synctest):
// the write fails after about 3 s of it, at no wall time.
func TestRunStopsAtTheFirstFailedEvidenceWrite(t *testing.T) {
	synctest.Test(t, runStopsAtTheFirstFailedEvidenceWrite)
}

func runStopsAtTheFirstFailedEvidenceWrite(t *testing.T) {
	c := config.Article()
	c.Stages, c.Rounds, c.Sanity.Enabled, c.Idle = []float64{1000}, 1, false, 0
	c.Duration, c.Warmup, c.Pause, c.Sampling = time.Hour, 0, 0, time.Second
	var budget atomic.Int64
	budget.Store(20 << 10)
	full := func(name string, w io.Writer) io.Writer {
		if !strings.HasSuffix(name, evidence.RequestsFile) {
			return w
		}
		return writerFunc(func(p []byte) (int, error) {
			if budget.Add(-int64(len(p))) < 0 {
				return 0, &os.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
			}
			return w.Write(p)
		})
	}
	dir := filepath.Join(t.TempDir(), "c")
	w, err := evidence.Create(dir, []byte("name: t\n"), evidence.Manifest{CampaignID: "c"}, evidence.WrapFiles(full))
	if err != nil {
		t.Fatal(err)
	}
	drv := &steadyDriver{}
	bus := &event.Bus{}
	bus.Subscribe(w.Consume)
	var finished []event.RunFinished
	bus.Subscribe(func(e event.Event) {
		if f, ok := e.(event.RunFinished); ok {
			finished = append(finished, f)
		}
	})
	camp := &Campaign{Cfg: c, ID: "c", Driver: drv, Bus: bus, Evidence: w, Tool: "test"}
	_, err = camp.Run(context.Background())
	if !errors.Is(err, evidence.ErrWrite) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("campaign error %v", err)
	}
	if drv.cancelled.Load() != 1 || drv.timedOut.Load() != 0 {
		t.Fatalf("the run was not stopped by the write error (cancelled %d, ran to the safety net %d)", drv.cancelled.Load(), drv.timedOut.Load())
	}
	if len(finished) != 1 || finished[0].Status != stats.StatusFailed || !strings.Contains(finished[0].Reason, "evidence cannot be written") {
		t.Errorf("run finished: %+v", finished)
	}
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := f.Manifest
	if m.Status != "failed" || !strings.Contains(m.Reason, "evidence cannot be written") || m.Runs[0].Status != "failed" {
		t.Errorf("manifest: status %q reason %q run %q", m.Status, m.Reason, m.Runs[0].Status)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
