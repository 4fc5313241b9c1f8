package sample

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Connections is how the agents' connections to the target were spread
// over the engines at the end of a run's measured phase (local engines
// sharing a port: read from /proc, the generator's socket ports matched
// with the engines' accepted sockets). A Kubernetes Service hides the Pod
// behind its address from the agents, so kube runs have none.
type Connections struct {
	Engines []EngineConnections `json:"engines"`
	// Unmatched are the generator's open connections no engine held
	// (closing, or to another process).
	Unmatched int `json:"unmatched,omitempty"`
	// Spread is max ÷ mean of the connections per engine (1: even).
	Spread float64 `json:"spread"`
}

// EngineConnections are one engine's connections from the agents.
type EngineConnections struct {
	Engine      string `json:"engine"`
	Connections int    `json:"connections"`
	// Agents are the agents with a connection to this engine.
	Agents []int `json:"agents,omitempty"`
}

// Line is "engine-0 6 (agents 0,2,4), engine-1 4 (agents 1,3): spread 1.20".
func (c *Connections) Line() string {
	if c == nil {
		return ""
	}
	var parts []string
	for _, e := range c.Engines {
		p := fmt.Sprintf("%s %d", e.Engine, e.Connections)
		if len(e.Agents) > 0 {
			as := make([]string, len(e.Agents))
			for i, a := range e.Agents {
				as[i] = fmt.Sprint(a)
			}
			p += " (agents " + strings.Join(as, ",") + ")"
		}
		parts = append(parts, p)
	}
	out := strings.Join(parts, ", ") + fmt.Sprintf(": spread %.2f", c.Spread)
	if c.Unmatched > 0 {
		out += fmt.Sprintf(", %d unmatched", c.Unmatched)
	}
	return out
}

// Finish sorts the engines and sets the spread.
func (c *Connections) Finish() {
	sort.Slice(c.Engines, func(i, j int) bool { return c.Engines[i].Engine < c.Engines[j].Engine })
	var sum, top float64
	for _, e := range c.Engines {
		sum += float64(e.Connections)
		top = max(top, float64(e.Connections))
		sort.Ints(e.Agents)
	}
	c.Spread = 0
	if len(c.Engines) > 0 && sum > 0 {
		c.Spread = math.Floor(top/(sum/float64(len(c.Engines)))*1000+0.5) / 1000 // three decimals, as stats rounds
	}
}
