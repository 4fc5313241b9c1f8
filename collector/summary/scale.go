package summary

import (
	"fmt"
	"strings"
	"time"
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
