package stats

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// SourcePromQL is the engine CPU's source when an existing Prometheus
// answered PromQL queries over the run's window (target.prometheus,
// kube.engines.prometheus). "prometheus" is another method: tokex scraping
// one server's /metrics page itself (target.metrics_url).
const SourcePromQL = "promql"

// PromQL is the engine's CPU and memory over a run's measured window as an
// existing Prometheus answered them: the queries exactly as sent, each
// member's (Pod's, process's) result, and what tokex checked of the data.
// The run's engine_cpu is computed from it (Run.FromPromQL), so it is kept
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

// cpu is the record as an engine CPU figure: the members' rates summed,
// × the window ÷ exchanges for CPU-ms per exchange (method rate, source
// promql), and the members' average memory summed.
func (p *PromQL) cpu(m RunMeta, exchanges int64) (*CPU, int64) {
	c := &CPU{Method: "rate", Source: SourcePromQL, Exchanges: exchanges}
	var mem int64
	for _, mb := range p.Members {
		c.AvgCores += mb.Cores
		c.Samples += mb.Samples
		mem += mb.MemoryBytes
	}
	c.PeakCores = round3(max(p.PeakCores, c.AvgCores))
	seconds := m.MeasuredEnd.Sub(m.MeasuredStart).Seconds()
	if exchanges > 0 {
		c.CPUMsPerExchange = round3(c.AvgCores * 1000 * seconds / float64(exchanges))
	}
	c.AvgCores = round3(c.AvgCores)
	return c, mem
}

// engineFigure picks the run's engine CPU: PromQL's when the run has a
// valid record, with what the samplers measured of the same window kept
// beside it (EngineCPUSampled); else the samples' alone.
func (r *Run) engineFigure(m RunMeta, sampled *CPU, sampledMem, exchanges int64) {
	r.EngineCPU, r.EngineMemoryBytes = sampled, sampledMem
	if m.PromQL == nil {
		return
	}
	r.PromQL = m.PromQL
	if !m.PromQL.Valid() {
		if len(m.PromQL.Members) > 0 { // a record with impossible values: hostile or broken
			r.Warnings = append(r.Warnings, Warn(WarnPromQLNoData, m.ID, "the recorded PromQL result holds impossible values: not used"))
		}
		return
	}
	r.EngineCPU, r.EngineMemoryBytes = m.PromQL.cpu(m, exchanges)
	if m.PromQL.Query("memory") == "" || !hasMemory(m.PromQL) {
		r.EngineMemoryBytes = sampledMem
	}
	r.EngineCPUSampled = sampled
}

func hasMemory(p *PromQL) bool {
	for _, m := range p.Members {
		if m.MemoryBytes > 0 {
			return true
		}
	}
	return false
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
