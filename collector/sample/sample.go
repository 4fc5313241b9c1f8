// Package sample holds what tokex read while a run ran, besides its
// request rows, before any statistic is computed from it: a row of
// resources.csv (a process's or Pod's CPU and memory) with the bounds past
// which a CPU counter is not one, a row of host.csv (the machine running
// the load generator), the issued tokens the verifier sampled
// (check.verify), what the server said about failures, and the record of
// what an existing Prometheus was asked and answered about the engine over
// the run's window, and how the agents' connections spread over the
// engines. collector/proc, collector/promql and the runner fill
// them, the evidence folder keeps them, and collector/stats computes the
// figures from them.
package sample

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Resource is one row of resources.csv.
type Resource struct {
	AtUS            int64
	Kind            string // engine, generator, node, agent
	Name            string
	CPUMillicores   float64
	MemoryBytes     int64
	CPUSecondsTotal float64 // cumulative; 0 when the source has none
	Source          string
}

// Verification is how many issued tokens a run verified against the
// target's keys (check.verify) in its measured phase, and how many of
// them failed (recorded as bad_response:200). Each success was picked at
// random with probability Sample; Key, the run's secret sampling key,
// is written once the run ended: with it the verified arrivals can be
// told (runner/local: AES under Key of agent and seq, big-endian, below
// Sample·2⁶⁴), without it no target could tell them in advance.
type Verification struct {
	Sample  float64 `json:"sample"`
	Checked int64   `json:"checked"`
	Failed  int64   `json:"failed"`
	Key     string  `json:"key,omitempty"`
}

// ErrorDescription counts one thing the server said about one kind of
// failure (its error_description or the transport's words, sanitised).
type ErrorDescription struct {
	Error string `json:"error,omitempty"` // a key of stats.Run.Errors (empty inside stats.ErrorKind)
	Text  string `json:"text"`
	Count int64  `json:"count"`
}

// Bounds of a cumulative CPU counter (process_cpu_seconds_total, /proc,
// cgroup usage): what no real process or group of processes reaches, so
// a counter past them is an overflow or invented.
const (
	// MaxCPUCounterSeconds is 10,000 cores busy for 31 years; below it a
	// float64 still resolves a millisecond.
	MaxCPUCounterSeconds = 1e13
	// MaxPlausibleCores is the fastest a counter may advance, in CPU
	// seconds per second.
	MaxPlausibleCores = 10_000
)

// HostMetrics is one interval of the machine that runs tokex's load
// generator, and of the generator's own CPU limit and wait.
type HostMetrics struct {
	CPUs       int     `json:"cpus"`        // online CPUs of the host
	BusyCores  float64 `json:"busy_cores"`  // non-idle time of all CPUs (steal included), in cores
	StealCores float64 `json:"steal_cores"` // time the hypervisor ran someone else
	// Runnable threads (running or waiting for a CPU), the sampler excluded.
	Runnable          int     `json:"runnable"`
	Load1             float64 `json:"load1"`
	MemTotalBytes     int64   `json:"mem_total_bytes"`
	MemAvailableBytes int64   `json:"mem_available_bytes"`
	// PSI is the share of the interval tasks stalled (nil without /proc/pressure).
	PSI *Pressure `json:"psi,omitempty"`
	// GeneratorLimitCores: the cores the generator may use, the least of
	// GOMAXPROCS, its CPU affinity and its cgroup quota (0: unknown).
	GeneratorLimitCores float64 `json:"generator_cpu_limit_cores,omitempty"`
	// GeneratorCPUs are the CPUs its affinity lets it run on, and
	// GeneratorCPUsBusyCores how busy they were, by anyone (0: unknown).
	GeneratorCPUs          int     `json:"generator_cpus,omitempty"`
	GeneratorCPUsBusyCores float64 `json:"generator_cpus_busy_cores,omitempty"`
	// GeneratorWaitCores: the generator's threads runnable but not running
	// (schedstat run delay), in cores; nil when the kernel does not say.
	GeneratorWaitCores *float64 `json:"generator_cpu_wait_cores,omitempty"`
	// GeneratorWaitPerSliceMs: that wait divided by the time slices its
	// threads ran: how long a thread waited for a CPU each time, on average.
	GeneratorWaitPerSliceMs *float64 `json:"generator_wait_per_slice_ms,omitempty"`
}

// Pressure is Linux PSI over one interval: the share of time some (or all
// non-idle) tasks stalled on a resource.
type Pressure struct {
	CPUSome    float64 `json:"cpu_some"`
	MemorySome float64 `json:"memory_some"`
	MemoryFull float64 `json:"memory_full"`
}

// Host is one row of host.csv.
type Host struct {
	AtUS int64
	HostMetrics
}

// SourcePromQL is the engine CPU's source when an existing Prometheus
// answered PromQL queries over the run's window (target.prometheus,
// kube.engines.prometheus). "prometheus" is another method: tokex scraping
// one server's /metrics page itself (target.metrics_url).
const SourcePromQL = "promql"

// PromQL is the engine's CPU and memory over a run's measured window as an
// existing Prometheus answered them: the queries exactly as sent, each
// member's (Pod's, process's) result, and what tokex checked of the data.
// The run's engine_cpu is computed from it (stats.Run), so it is kept
// in the run's manifest entry and stats.json.
type PromQL struct {
	// Server is the Prometheus API's scheme and host (never credentials).
	Server string `json:"server"`
	// From and To are the measured window the queries cover; every query
	// is evaluated at To.
	From    time.Time    `json:"from"`
	To      time.Time    `json:"to"`
	Queries []PromQuery  `json:"queries"`
	Members []PromMember `json:"members,omitempty"`
	// PeakCores is the highest total of short-range rates in the window
	// (the "peak" query); 0 when the window is too short for one.
	PeakCores float64 `json:"peak_cores,omitempty"`
	// IntervalSeconds is the scrape interval the samples show (window ÷
	// the fewest samples of a member).
	IntervalSeconds float64 `json:"interval_seconds,omitempty"`
}

// PromQuery is one query sent: what it measures (cpu, memory, peak,
// samples, last, first, gap) and the PromQL text.
type PromQuery struct {
	Name  string `json:"name"`
	Query string `json:"query"`
}

// PromMember is one member's (a Pod's, a scraped process's) result.
type PromMember struct {
	Name  string  `json:"name"`
	Cores float64 `json:"cores"` // rate of its CPU-seconds counter over the window
	// MemoryBytes is its memory averaged over the window (0: no series).
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	Samples     int   `json:"samples"` // CPU samples inside the window
}

// PromQLMinSamples is the fewest samples of a CPU counter in a window that
// rate() turns into a figure without a promql_coarse warning: Prometheus's
// own advice is a range of at least four scrape intervals.
const PromQLMinSamples = 4

// Bounds of a PromQL record (the manifest may be hostile).
const (
	MaxPromMembers = 1000
	MaxPromQueries = 16
	// MaxPromCores bounds one member: no Pod or process has more cores.
	MaxPromCores = 100000
)

// Valid reports whether the record can give a figure: members within
// bounds with finite, non-negative values.
func (p *PromQL) Valid() bool {
	if p == nil || len(p.Members) == 0 || len(p.Members) > MaxPromMembers || len(p.Queries) > MaxPromQueries {
		return false
	}
	if !finiteIn(p.PeakCores, 0, MaxPromCores*MaxPromMembers) || !finiteIn(p.IntervalSeconds, 0, 1e9) {
		return false
	}
	for _, m := range p.Members {
		if !finiteIn(m.Cores, 0, MaxPromCores) || m.MemoryBytes < 0 || m.Samples < 0 {
			return false
		}
	}
	return true
}

func finiteIn(v, lo, hi float64) bool { return !math.IsNaN(v) && v >= lo && v <= hi }

// Query returns the query of that name ("" if none was sent).
func (p *PromQL) Query(name string) string {
	for _, q := range p.Queries {
		if q.Name == name {
			return q.Query
		}
	}
	return ""
}

// Line says in one line what PromQL gave: "promql 0.31 cores (engine-0,
// engine-1) from http://prometheus.example:9090".
func (p *PromQL) Line() string {
	var names []string
	var cores float64
	for _, m := range p.Members {
		names = append(names, m.Name)
		cores += m.Cores
	}
	return fmt.Sprintf("promql %.3g cores (%s) from %s", cores, strings.Join(names, ", "), p.Server)
}
