package local

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/proc"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/runner"
)

var _ runner.Scaler = (*Driver)(nil)

// cpuSets gives each engine of a campaign whose largest count is most its
// own CPUs: the CPUs tokex may use, split evenly (one each on a 2-core
// host with --engines 1,2), so an engine is the same size at every count.
// With fewer CPUs than engines nothing is pinned, and note says so.
func cpuSets(most int) (sets [][]int, note string) {
	cpus := allowedCPUs()
	switch k := len(cpus) / max(most, 1); {
	case len(cpus) == 0:
		return nil, "engines not pinned: this system does not tell tokex its CPUs (sched_getaffinity)"
	case k < 1:
		return nil, fmt.Sprintf("%d engines on %d cores: not pinned, the engines share cores (the efficiency measures the host)", most, len(cpus))
	default:
		for i := 0; i < most; i++ {
			sets = append(sets, cpus[i*k:(i+1)*k])
		}
		return sets, fmt.Sprintf("each engine pinned to its own %d CPU(s) of this host's %d; the load generator shares them", k, len(cpus))
	}
}

// startFleet takes a given Fleet as the target (Driver.Fleet).
func (d *Driver) startFleet(out runner.Output) (*tls.Config, []proc.Target, error) {
	d.fleet, d.target = d.Fleet, d.Fleet.TargetURL()
	tlsCfg := d.Fleet.ClientTLS()
	if tlsCfg == nil {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	out.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "info", Message: "engines: " + d.fleet.Describe()})
	return tlsCfg, fleetTargets(d.fleet.Engines()), nil
}

// fleetTargets samples each engine of a fleet under its own name.
func fleetTargets(engines []FleetEngine) []proc.Target {
	var out []proc.Target
	for _, e := range engines {
		out = append(out, proc.Target{Role: "engine", Source: proc.Process{PID: e.PID, Label: e.Label}})
	}
	return out
}

// sampleEngines (re)starts the engine sampler on targets.
func (d *Driver) sampleEngines(targets []proc.Target, out runner.Output) {
	d.stopEngineSampler()
	ctx, stop := context.WithCancel(context.Background())
	d.engStop = stop
	warn := func(msg string) { out.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "warn", Message: msg}) }
	d.engWG.Add(1)
	go func() {
		defer d.engWG.Done()
		proc.Sample(ctx, d.Cfg.Sampling, targets, func(e event.Event) {
			if r, ok := e.(event.Resource); ok && r.Role == "engine" {
				d.engineAt.Store(r.At.UnixMicro())
			}
			out.Emit(e)
		}, warn)
	}()
}

func (d *Driver) stopEngineSampler() {
	if d.engStop != nil {
		d.engStop()
		d.engWG.Wait()
		d.engStop = nil
	}
}

// Scale implements runner.Scaler: engines started (each on its own CPUs)
// or stopped until n share the port, all answering; then sampled under
// their own names, and the agents' idle connections closed so that new
// ones spread over the engines (SO_REUSEPORT spreads connections, not
// requests).
func (d *Driver) Scale(ctx context.Context, n int, out runner.Output) (summary.Scale, error) {
	if d.fleet == nil {
		return summary.Scale{}, errors.New("target.embedded.engines: the local driver starts engines for its embedded server only")
	}
	s := summary.Scale{At: time.Now(), Replicas: n, From: len(d.fleet.Engines()), Workload: d.fleet.Describe(), HostCPUs: hostCPUs()}
	if err := d.fleet.Scale(ctx, n, d.pins); err != nil {
		return s, err
	}
	s.ReadyMs = time.Since(s.At).Milliseconds()
	engines := d.fleet.Engines()
	s.Workload = d.fleet.Describe()
	d.sampleEngines(fleetTargets(engines), out)
	if d.gen != nil {
		d.gen.Close()
	}
	for _, e := range engines {
		s.Engines = append(s.Engines, fmt.Sprintf("%s (pid %d)", e.Label, e.PID))
		if d.pins != nil {
			s.CPUs = append(s.CPUs, affinityOf(e.PID))
		}
	}
	if d.pinNote != "" {
		s.Notes = append(s.Notes, d.pinNote)
	}
	return s, nil
}

// Restore implements runner.Scaler: the local engines end with the
// campaign (Close), nothing outlives it to restore.
func (d *Driver) Restore(context.Context, runner.Output) (summary.Scale, bool, error) {
	return summary.Scale{}, false, nil
}

// connections is how the agents' connections lie over the engines now
// (nil without a fleet).
func (d *Driver) connections() *sample.Connections {
	if d.fleet == nil || d.gen == nil {
		return nil
	}
	u, err := url.Parse(d.target)
	if err != nil {
		return nil
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return nil
	}
	return spread(d.fleet.Engines(), port, d.gen.Ports())
}

// hostCPUs is the CPUs tokex may use: the stated limit of a local
// scaling campaign.
func hostCPUs() int {
	if n := len(allowedCPUs()); n > 0 {
		return n
	}
	return runtime.NumCPU()
}
