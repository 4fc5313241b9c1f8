package cli

import (
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/summary"
)

// costOptions are the flags of the capacity search, the engine at rest
// and the projection, shared by run and capacity.
type costOptions struct {
	search     bool
	idle       time.Duration
	project    float64
	start      float64
	max        float64
	resolution float64
	probeRuns  int
	coolDown   time.Duration
	p99        float64
}

func (k *costOptions) flags(cmd *cobra.Command, capacity bool) {
	f := cmd.Flags()
	f.DurationVar(&k.idle, "idle", 0, "measure the engine at rest this long before the first run (default 30s; quick profile 10s; 0s: skip)")
	f.Float64Var(&k.project, "project", 0, "print the engine cores serving this many exchanges/s would take, from the marginal-cost fit")
	if !capacity {
		f.BoolVar(&k.search, "search", false, "search the capacity instead of running the stages (as tokex capacity)")
	}
	f.Float64Var(&k.start, "start", 0, "capacity search: first probe, exchanges/s (default: the first stage)")
	f.Float64Var(&k.max, "max", 0, "capacity search: highest probe, exchanges/s")
	f.Float64Var(&k.resolution, "resolution", 0, "capacity search: stop when the bracket is this narrow, relative (default 0.05)")
	f.IntVar(&k.probeRuns, "probe-rounds", 0, "capacity search: rounds per probe (default 2; a third when a verdict is within noise)")
	f.DurationVar(&k.coolDown, "cool-down", 0, "capacity search: the longest cool-down after a broken probe, which waits until the engine is back at rest (default: twice a probe's length, 30s–10m)")
	f.Float64Var(&k.p99, "p99", 0, "capacity search: also require p99 below this many ms")
}

// apply puts the changed flags into the campaign, validated with it.
func (o *runOptions) applyCost(cmd *cobra.Command) error {
	fl, c, k := cmd.Flags(), &o.cfg, &o.cost
	if o.resume != "" && (fl.Changed("start") || fl.Changed("max") || fl.Changed("resolution") || fl.Changed("probe-rounds") || fl.Changed("p99") || fl.Changed("idle")) {
		return fmt.Errorf("--resume continues the campaign as it was planned; do not change its search")
	}
	for _, v := range []float64{k.project, k.start, k.max, k.resolution, k.p99} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("a capacity flag is not a finite number: %v", v)
		}
	}
	set := func(name string, apply func()) {
		if fl.Changed(name) {
			apply()
		}
	}
	set("idle", func() { c.Idle = k.idle })
	set("project", func() { c.Capacity.Project = k.project })
	set("start", func() { c.Capacity.Start = k.start })
	set("max", func() { c.Capacity.Max = k.max })
	set("resolution", func() { c.Capacity.Resolution = k.resolution })
	set("probe-rounds", func() { c.Capacity.Rounds = k.probeRuns })
	set("cool-down", func() { c.Capacity.CoolDown = k.coolDown })
	set("p99", func() { c.Capacity.P99Ms = k.p99 })
	return c.Validate(o.doc)
}

func newCapacityCmd(d deps) *cobra.Command {
	o := &runOptions{kube: newKubeConn(), deps: d}
	o.cost.search = true
	cmd := &cobra.Command{
		Use:   "capacity",
		Short: "Find the highest rate that meets the thresholds, and what one more exchange costs",
		Long: `Search the capacity: the highest arrival rate at which p95 (and --p99) stays
below the thresholds, success stays at or above its ratio and no arrival is
dropped. Exponential steps up from --start until the objective breaks, then
bisection to --resolution (5 %). Every probe is a run of its own (warmup,
duration, --probe-rounds rounds; a third round when a verdict is within the
rounds' spread), with a cool-down after a broken one. A probe whose figures are
the generator's or the host's (generator_starved, generator_late,
host_saturated) is run again, then ends the search with the upper bound
unknown; a target that stops answering ends it at once.

Before the first probe the engine is measured at rest (--idle); after the
search, engine cores are fitted against the rate over every run: the fixed
cost, the marginal CPU-ms per exchange with its 95 % interval, and --project.

Prints the capacity bracket ("≥ 610/s, < 640/s"), the probe table and which
objective broke first. Evidence as tokex run; --resume continues a search.

Exit codes: 0 capacity found, 1 none found (the objective broke at the lowest
rate, or the measurement was not the server's), 2 the search could not run,
130 interrupted.`,
		Args: cobra.NoArgs,
		RunE: o.runE,
	}
	o.runFlags(cmd)
	o.cost.flags(cmd, true)
	return cmd
}

// searchPassed: a search succeeds when it found a capacity to its
// resolution or the objective held up to its maximum.
func searchPassed(s *summary.Summary) bool {
	if s == nil || s.Capacity == nil || s.Status != summary.CampaignDone {
		return false
	}
	return s.Capacity.Status == curve.StatusFound || s.Capacity.Status == curve.StatusAboveMax
}
