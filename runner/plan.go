package runner

import (
	"fmt"
	"strconv"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/runner/config"
)

// Plan is the campaign's ladder: the sanity run (discarded by protocol),
// then the ascending stages, the whole ladder repeated per round. A
// workload with a chain's steps or a baseline runs each of its variants at
// every stage of every round, interleaved (variants).
// A campaign over engine counts (config.ReplicaCounts) runs the whole
// ladder per count, in the order given, each run carrying its count in its
// id ("03-n2-r1-100rps") and its plan.
func Plan(c *config.Campaign) []event.PlannedRun {
	counts := c.ReplicaCounts()
	if len(counts) == 0 {
		return planCount(c, 0, 0)
	}
	var out []event.PlannedRun
	for _, n := range counts {
		out = append(out, planCount(c, n, len(out))...)
	}
	return out
}

// planCount is the ladder of one engine count (0: one size, as found),
// its runs numbered from idx.
func planCount(c *config.Campaign, replicas, idx int) []event.PlannedRun {
	var out []event.PlannedRun
	main := mainVariant(c)
	if c.Sanity.Enabled {
		rate := c.Sanity.Rate
		if rate == 0 {
			rate = c.Stages[0]
		}
		out = append(out, event.PlannedRun{ID: runID(idx, replicas, "sanity"), Index: idx, Sanity: true,
			TargetRPS: rate, Duration: c.Sanity.Duration, Agents: c.Agents.Count, Chain: main.chain, Replicas: replicas})
		idx++
	}
	vs := variants(c)
	for r := 1; r <= c.Rounds; r++ {
		for _, s := range c.Stages {
			for _, v := range rotate(vs, r-1) {
				out = append(out, event.PlannedRun{
					ID:    runID(idx, replicas, stageRun(r, s, v)),
					Index: idx, Round: r, TargetRPS: s, Warmup: c.Warmup, Duration: c.Duration, Agents: c.Agents.Count,
					Grant: v.grant, Chain: v.chain, Step: !v.main && v.grant == "", Replicas: replicas,
				})
				idx++
			}
		}
	}
	return out
}

// variant is one workload a stage runs in every round: the campaign's
// own (its chain's full length), a shorter chain, or the baseline grant.
type variant struct {
	grant exchange.Grant // "" the campaign's workload
	chain int            // 0 without a chain
	main  bool
}

// mainVariant is the campaign's own workload.
func mainVariant(c *config.Campaign) variant {
	v := variant{main: true}
	if n := c.Workload.ChainLen(); n > 1 {
		v.chain = n
	}
	return v
}

// variants are the workloads each stage runs per round: the campaign's
// own first, then its chain's shorter lengths (workload.steps), then the
// baseline grant.
func variants(c *config.Campaign) []variant {
	vs := []variant{mainVariant(c)}
	if c.Workload.StepsOn() {
		for k := 1; k < c.Workload.ChainLen(); k++ {
			vs = append(vs, variant{chain: k})
		}
	}
	if g := c.Workload.BaselineGrant(); g != "" {
		vs = append(vs, variant{grant: g})
	}
	return vs
}

// rotate starts the variants at the n-th, so that over the rounds each
// runs in every position: a drift of the server or the host is shared out
// rather than always charged to the same variant.
func rotate(vs []variant, n int) []variant {
	n %= len(vs)
	return append(append([]variant(nil), vs[n:]...), vs[:n]...)
}

// stageRun is what a stage's run is, for its id: "r1-100rps" for the
// campaign's workload, with the variant after it: "-chain2" a shorter
// chain, "-cc" or "-jwtb" the baseline.
func stageRun(round int, rate float64, v variant) string {
	id := fmt.Sprintf("r%d-%srps", round, strconv.FormatFloat(rate, 'f', -1, 64))
	switch {
	case v.grant != "":
		id += "-" + v.grant.Short()
	case !v.main:
		id += fmt.Sprintf("-chain%d", v.chain)
	}
	return id
}

// runID names a run: its index, its engine count when the campaign has
// several ("n2-"), and what it is.
func runID(idx, replicas int, rest string) string {
	if replicas > 0 {
		return fmt.Sprintf("%02d-n%d-%s", idx, replicas, rest)
	}
	return fmt.Sprintf("%02d-%s", idx, rest)
}

// ofCount are the planned runs of one engine count.
func ofCount(plan []event.PlannedRun, replicas int) []event.PlannedRun {
	var out []event.PlannedRun
	for _, p := range plan {
		if p.Replicas == replicas {
			out = append(out, p)
		}
	}
	return out
}
