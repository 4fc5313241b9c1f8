package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/proc"
	"github.com/tokex-dev/tokex/runner"
)

// QuietShare is the share of the machine's cores other processes may use
// for it to count as quiet: above it, tokex's own load is likely to push
// the host past host_saturated's bound.
const QuietShare = 0.5

// DefaultHostCheck is how long the machine is sampled before the first run
// (tokex run --host-check).
const DefaultHostCheck = 2 * time.Second

// othersSampler measures what processes other than tokex and the engine
// used of the host's cores, on average, over d: the CPU time the host was
// busy less tokex's own and the engine's, over d.
type othersSampler func(ctx context.Context, d time.Duration) (others float64, cpus int, err error)

// procOthers is the othersSampler of this host (/proc), not counting the
// processes pids.
func procOthers(pids ...int) othersSampler {
	own := func() float64 {
		var sum float64
		for _, pid := range pids {
			if pid > 0 {
				v, _ := proc.ProcessCPU(pid)
				sum += v
			}
		}
		return sum
	}
	return func(ctx context.Context, d time.Duration) (float64, int, error) {
		b0, t0, cpus, err := proc.HostCPU()
		if err != nil {
			return 0, 0, err
		}
		o0 := own()
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(d):
		}
		b1, t1, _, err := proc.HostCPU()
		if err != nil {
			return 0, 0, err
		}
		if t1 <= t0 || cpus <= 0 {
			return 0, 0, errors.New("the host's CPU time did not advance")
		}
		wall := (t1 - t0) / float64(cpus)
		return max(0, (b1-b0)-(own()-o0)) / wall, cpus, nil
	}
}

// checkHost samples the machine before the first run and says at once
// when other processes already use most of its cores (a HostCheck event
// the dashboard, the terminal and the evidence take). With WaitQuiet it
// then waits, at most that long, until they use less, saying so each
// second; it runs anyway when the wait runs out. Only a cancelled context
// stops it.
func (d *Driver) checkHost(ctx context.Context, out runner.Output, sample othersSampler) error {
	if d.HostCheck <= 0 {
		return nil
	}
	others, cpus, err := sample(ctx, d.HostCheck)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		out.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "warn", Message: "host check: " + err.Error()})
		return nil
	}
	h := event.HostCheck{At: time.Now(), State: event.HostQuiet, CPUs: cpus, OthersCores: round2(others), Sampled: d.HostCheck,
		QuietBelow: QuietShare * float64(cpus), WaitLimit: d.WaitQuiet}
	if others < h.QuietBelow {
		out.Emit(h)
		return nil
	}
	if d.WaitQuiet <= 0 {
		h.State = event.HostBusy
		out.Emit(h)
		return nil
	}
	return d.waitQuiet(ctx, out, sample, h)
}

// waitQuiet samples a second at a time until the mean of the last
// HostCheck's worth of seconds is quiet or WaitQuiet has passed.
func (d *Driver) waitQuiet(ctx context.Context, out runner.Output, sample othersSampler, h event.HostCheck) error {
	keep := max(1, int(d.HostCheck/time.Second))
	recent := []float64{h.OthersCores}
	start := time.Now()
	h.State = event.HostWaiting
	out.Emit(h)
	for {
		others, _, err := sample(ctx, min(time.Second, d.HostCheck))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("waiting for a quiet machine: %w", err)
		}
		recent = append(recent, others)
		if len(recent) > keep {
			recent = recent[1:]
		}
		var sum float64
		for _, v := range recent {
			sum += v
		}
		h.At, h.OthersCores, h.Waited = time.Now(), round2(sum/float64(len(recent))), time.Since(start)
		switch {
		case h.OthersCores < h.QuietBelow:
			h.State = event.HostQuiet
		case h.Waited >= d.WaitQuiet:
			h.State = event.HostStillBusy
		}
		out.Emit(h)
		if h.State != event.HostWaiting {
			return nil
		}
	}
}

// ownPIDs are the processes a host check does not count as others: tokex
// and the embedded engine.
func (d *Driver) ownPIDs() []int {
	pids := []int{os.Getpid()}
	if d.emb != nil {
		pids = append(pids, d.emb.PID)
	}
	return pids
}
