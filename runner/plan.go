package runner

import (
	"fmt"
	"strconv"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/runner/config"
)

// Plan is the campaign's ladder: the sanity run (discarded by protocol),
// then the ascending stages, the whole ladder repeated per round.
func Plan(c *config.Campaign) []event.PlannedRun {
	var out []event.PlannedRun
	idx := 0
	if c.Sanity.Enabled {
		rate := c.Sanity.Rate
		if rate == 0 {
			rate = c.Stages[0]
		}
		out = append(out, event.PlannedRun{ID: fmt.Sprintf("%02d-sanity", idx), Index: idx, Sanity: true,
			TargetRPS: rate, Duration: c.Sanity.Duration, Agents: c.Agents.Count})
		idx++
	}
	for r := 1; r <= c.Rounds; r++ {
		for _, s := range c.Stages {
			out = append(out, event.PlannedRun{
				ID:    fmt.Sprintf("%02d-r%d-%srps", idx, r, strconv.FormatFloat(s, 'f', -1, 64)),
				Index: idx, Round: r, TargetRPS: s, Warmup: c.Warmup, Duration: c.Duration, Agents: c.Agents.Count,
			})
			idx++
		}
	}
	return out
}
