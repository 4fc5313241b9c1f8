package runner

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/search"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/runner/config"
)

// idleMeter keeps the engine samples a driver emits while the campaign
// measures the engine at rest.
type idleMeter struct {
	mu      sync.Mutex
	on      bool
	samples []sample.Resource
}

func (m *idleMeter) observe(e event.Event) {
	r, ok := e.(event.Resource)
	if !ok || r.Role != "engine" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.on && len(m.samples) < 100000 {
		m.samples = append(m.samples, sample.Resource{AtUS: r.At.UnixMicro(), Kind: r.Role, Name: r.Name,
			CPUMillicores: r.CPUMillicores, MemoryBytes: r.MemoryBytes, CPUSecondsTotal: r.CPUSecondsTotal, Source: r.Source})
	}
}

func (m *idleMeter) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.samples)
}

func (m *idleMeter) set(on bool) {
	m.mu.Lock()
	m.on = on
	m.mu.Unlock()
}

// rest measures the engine at rest once, before the first stage (after
// the sanity run, which warms the server up and proves it answers), unless
// the campaign measured it before a resume.
func (c *Campaign) rest(ctx context.Context) error {
	if c.idle != nil || c.idleTried || c.idleOut == nil {
		return nil
	}
	c.idleTried = true
	var err error
	c.idle, err = c.measureIdle(ctx, c.idleOut)
	return err
}

// measureIdle waits Cfg.Idle with no load while the driver samples the
// engine, and records what it burned at rest: the fixed cost the marginal
// cost's intercept is compared with. Without engine samples (a remote
// target without metrics) it says so after a few sampling intervals, and
// the campaign goes on.
func (c *Campaign) measureIdle(ctx context.Context, out *output) (*summary.Idle, error) {
	if c.Cfg.Idle <= 0 || out.idle == nil {
		return nil, nil
	}
	c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "info",
		Message: fmt.Sprintf("measuring the engine at rest for %s before the first stage", c.Cfg.Idle)})
	from := time.Now()
	out.idle.set(true)
	end := from.Add(c.Cfg.Idle + c.Cfg.Sampling) // one more sample past the end
	giveUp := from.Add(3*c.Cfg.Sampling + time.Second)
	for now := time.Now(); now.Before(end) && ctx.Err() == nil; now = time.Now() {
		if now.After(giveUp) && out.idle.count() == 0 {
			break // nothing samples the engine
		}
		sleep(ctx, min(end.Sub(now), c.Cfg.Sampling))
	}
	out.idle.set(false)
	to := time.Now()
	if ctx.Err() != nil {
		return nil, nil
	}
	out.idle.mu.Lock()
	idle, ok := summary.IdleCores(out.idle.samples, from, to)
	out.idle.samples = nil
	out.idle.mu.Unlock()
	if !ok {
		c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "warn",
			Message: "the engine at rest could not be measured: fewer than two engine samples"})
		return nil, nil
	}
	c.Bus.Emit(event.Idle{At: to, Idle: idle})
	return &idle, c.Evidence.SetIdle(idle)
}

// sanityOnly keeps the sanity runs of a plan (one per engine count),
// numbered first: a capacity search plans its probes as it goes.
func sanityOnly(plan []event.PlannedRun) []event.PlannedRun {
	var out []event.PlannedRun
	for _, p := range plan {
		if p.Sanity {
			p.Index = len(out)
			p.ID = runID(p.Index, p.Replicas, "sanity")
			out = append(out, p)
		}
	}
	return out
}

// SearchPolicy is the capacity search's policy from the campaign.
func SearchPolicy(c *config.Campaign) curve.Policy {
	k := c.Capacity
	p := curve.Policy{Start: k.Start, Min: k.Min, Max: k.Max, Factor: k.Factor, Resolution: k.Resolution,
		Rounds: k.Rounds, MaxProbes: k.MaxProbes, CoolDown: k.CoolDown, Retries: 1}
	if p.Start == 0 && len(c.Stages) > 0 {
		p.Start = c.Stages[0]
	}
	if p.Min == 0 {
		p.Min = 1
	}
	if p.Max == 0 {
		p.Max = min(config.MaxRate, float64(c.Agents.Count)*config.MaxRatePerAgent)
	}
	if p.MaxProbes == 0 {
		p.MaxProbes = 20
	}
	if p.CoolDown == 0 { // the bound of a cool-down (docs/cool-down.md)
		p.CoolDown = min(max(2*(c.Warmup+c.Duration), 30*time.Second), 10*time.Minute)
	}
	return p.WithDefaults()
}

// SearchSpec is the search the campaign records in its manifest.
func SearchSpec(c *config.Campaign) search.Spec {
	return search.Spec{Policy: SearchPolicy(c), Objective: SearchObjective(c), Thresholds: c.Thresholds}
}

// SearchObjective is what a probe must meet: the thresholds, and p99.
func SearchObjective(c *config.Campaign) curve.Objective {
	t := c.Thresholds
	return curve.Objective{P95Ms: t.P95Ms, P99Ms: c.Capacity.P99Ms, SuccessRatio: t.SuccessRatio, MaxDropped: t.MaxDropped}
}

// runSearch runs the capacity search after the planned (sanity) runs:
// every probe round is a run with its own warmup, named by probe, round
// and rate, added to the plan as it is decided. The search is a function
// of the finished runs, so a resumed campaign replays them (c.Done) and
// asks for exactly the run that was under way.
func (c *Campaign) runSearch(ctx context.Context, plan []event.PlannedRun, runs []*stats.Run, replicas int) ([]event.PlannedRun, []*stats.Run, *curve.Result, error) {
	s := curve.NewSearch(SearchPolicy(&c.Cfg), SearchObjective(&c.Cfg))
	if err := c.rest(ctx); err != nil {
		return plan, runs, nil, err
	}
	c.measureUnloaded(ctx)
	probe := 0
	var err error
	for range 2 * curve.MaxSteps(s.Policy) {
		step := s.Next()
		if step.Done || ctx.Err() != nil {
			break
		}
		if step.Round == 1 {
			probe++
		}
		p := c.probeRun(len(plan), probe, step, replicas)
		plan = append(plan, p)
		st := c.Done[p.ID]
		if st != nil {
			c.Bus.Emit(event.RunFinished{At: time.Now(), RunID: p.ID, Status: st.Status, Stats: st})
		} else {
			if err = c.Evidence.SetPlan(plan); err != nil {
				break
			}
			c.coolDown(ctx, step, lastRun(runs))
			if st, err = c.runOne(ctx, p); st == nil {
				break
			}
		}
		runs = append(runs, st)
		if st.Status == stats.StatusAborted {
			break
		}
		s.Observe(search.Round(st, c.Cfg.Thresholds))
		if next := s.Next(); next.Done || next.Round == 1 {
			c.Bus.Emit(event.Search{At: time.Now(), Result: s.Result(), Next: next.Rate})
		}
		if err != nil {
			break
		}
	}
	r := s.Result()
	return plan, runs, &r, err
}

// probeRun plans one round of a probe: "03-p2-r1-200rps", with an engine
// count "05-n2-p1-r1-200rps".
func (c *Campaign) probeRun(index, probe int, step curve.Step, replicas int) event.PlannedRun {
	return event.PlannedRun{
		ID:    runID(index, replicas, fmt.Sprintf("p%d-r%d-%srps", probe, step.Round, strconv.FormatFloat(step.Rate, 'f', -1, 64))),
		Index: index, Round: step.Round, TargetRPS: step.Rate, Warmup: c.Cfg.Warmup, Duration: c.Cfg.Duration,
		Agents: c.Cfg.Agents.Count, Chain: mainVariant(&c.Cfg).chain, Replicas: replicas,
	}
}

// coolDown lets a server drain its backlog after a broken probe before
// the next one (settle), and pauses between runs as the campaign says.
func (c *Campaign) coolDown(ctx context.Context, step curve.Step, prev *stats.Run) {
	if step.CoolDown > 0 {
		c.cooled = c.settle(ctx, step, prev)
	}
	if c.Cfg.Pause > 0 {
		sleep(ctx, c.Cfg.Pause)
	}
}

// lastRun is the latest counted run (nil: none).
func lastRun(runs []*stats.Run) *stats.Run {
	if n := len(runs); n > 0 && !runs[n-1].Sanity {
		return runs[n-1]
	}
	return nil
}
