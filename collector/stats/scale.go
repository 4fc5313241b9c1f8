package stats

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/usage"
)

// Scale is one engine count a campaign over engine counts set
// (kube.engines.replicas, --engines), or the restore of the original count
// at its end: what was scaled, from and to what, how long until that many
// engines served, and what they were. manifest.json "scaling".
type Scale struct {
	At       time.Time `json:"at"`
	Replicas int       `json:"replicas"`
	From     int       `json:"from"`
	// Restore: the original count put back at the campaign's end.
	Restore bool `json:"restore,omitempty"`
	// Workload is what was scaled: "deployment/pf-engine" (kube), or
	// "local: N tokex-engine processes sharing port P (SO_REUSEPORT)".
	Workload string `json:"workload"`
	// ReadyMs: from the scale request until that many engines were Ready
	// and behind the Service (kube) or answering (local).
	ReadyMs int64 `json:"ready_ms"`
	// SettleMs is the wait after that, before the count's first run.
	SettleMs int64 `json:"settle_ms,omitempty"`
	// Engines are the engine Pods or processes of the count.
	Engines []string `json:"engines,omitempty"`
	// Endpoints: the Service's ready endpoints once the count was ready.
	Endpoints int `json:"endpoints,omitempty"`
	// CPUs are each local engine's CPU set (sched_setaffinity), in
	// Engines' order; none: unpinned.
	CPUs [][]int `json:"cpus,omitempty"`
	// HostCPUs is the local host's cores: the stated limit of a local
	// scaling campaign.
	HostCPUs int `json:"host_cpus,omitempty"`
	// Notes say what else was done or found (an HPA paused, engines
	// sharing cores).
	Notes []string `json:"notes,omitempty"`
}

// String is the scale in one line, for logs and the report.
func (s Scale) String() string {
	what := fmt.Sprintf("engines %d → %d", s.From, s.Replicas)
	if s.Restore {
		what = fmt.Sprintf("engines restored %d → %d", s.From, s.Replicas)
	}
	out := fmt.Sprintf("%s (%s): ready after %.1f s", what, s.Workload, float64(s.ReadyMs)/1000)
	if s.Endpoints > 0 {
		out += fmt.Sprintf(", %d endpoint(s)", s.Endpoints)
	}
	if s.SettleMs > 0 {
		out += fmt.Sprintf(", settled %.0f s", float64(s.SettleMs)/1000)
	}
	if len(s.CPUs) > 0 {
		var sets []string
		for _, c := range s.CPUs {
			sets = append(sets, cpuList(c))
		}
		out += ", CPUs " + strings.Join(sets, " | ")
	}
	if len(s.Notes) > 0 {
		out += "; " + strings.Join(s.Notes, "; ")
	}
	return out
}

func cpuList(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = fmt.Sprint(c)
	}
	return strings.Join(parts, ",")
}

// PodCPU is one engine Pod's (or process's) CPU over a run's measured window.
type PodCPU struct {
	Name  string  `json:"name"`
	Cores float64 `json:"cores"`
}

// enginePods is each engine's cores over the measured window (its
// cumulative counter where it has one read around both ends, else its
// average sampled rate) and their balance, max ÷ mean (1: even); nil
// with fewer than two engines.
func enginePods(g *usage.Group, m RunMeta) ([]PodCPU, float64) {
	secs := m.MeasuredEnd.Sub(m.MeasuredStart).Seconds()
	ms := g.Members()
	if secs <= 0 || len(ms) < 2 {
		return nil, 0
	}
	var pods []PodCPU
	for _, e := range ms {
		switch {
		case e.Cumulative:
			pods = append(pods, PodCPU{Name: e.Name, Cores: round4(e.CPUSeconds / secs)})
		case e.Seconds > 0:
			pods = append(pods, PodCPU{Name: e.Name, Cores: round4(e.AvgMillicores / 1000)})
		}
	}
	return pods, balance(pods)
}

// balance is max ÷ mean of the engines' cores (0: unknown).
func balance(pods []PodCPU) float64 {
	var sum, top float64
	for _, p := range pods {
		sum += p.Cores
		top = max(top, p.Cores)
	}
	if len(pods) < 2 || sum <= 0 {
		return 0
	}
	return round3(top / (sum / float64(len(pods))))
}

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
		c.Spread = round3(top / (sum / float64(len(c.Engines))))
	}
}
