// Package event is the seam of tokex: the one typed stream that every driver
// (local, kube, replay) emits and every consumer (TUI, headless printer,
// evidence writer) reads. Consumers never learn which driver produced it.
package event

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/forecast"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/search"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/exchange"
)

// Event is one typed item of the stream.
type Event interface{ Kind() Kind }

// Kind names an event type on disk.
type Kind string

// kindCapacity is KindForecast's name in evidence written before the
// pre-flight estimate was renamed; it is still read.
const kindCapacity Kind = "capacity"

const (
	KindCampaignStarted  Kind = "campaign_started"
	KindRunStarted       Kind = "run_started"
	KindPhaseChanged     Kind = "phase_changed"
	KindWindow           Kind = "window"
	KindResource         Kind = "resource"
	KindHost             Kind = "host"
	KindForecast         Kind = "forecast"
	KindAgentStatus      Kind = "agent_status"
	KindLog              Kind = "log"
	KindRunFinished      Kind = "run_finished"
	KindCampaignFinished Kind = "campaign_finished"
	KindIdle             Kind = "idle"
	KindSearch           Kind = "capacity_search"
	KindHostCheck        Kind = "host_check"
)

// PlannedRun is one entry of the campaign's ladder.
type PlannedRun struct {
	ID        string        `json:"id"`
	Index     int           `json:"index"`
	Sanity    bool          `json:"sanity,omitempty"`
	Round     int           `json:"round"` // 0 for the sanity run
	TargetRPS float64       `json:"target_rps"`
	Warmup    time.Duration `json:"warmup"`
	Duration  time.Duration `json:"duration"` // measured phase
	Agents    int           `json:"agents"`
	// Grant is what the run's arrivals ask for: "" the campaign's workload
	// (exchanges, chains of them or its mix), or its baseline grant
	// (workload.baseline). Chain is the length of the run's delegation
	// chains, 0 without one: a run of a shorter chain than the campaign's
	// is a step (workload.steps).
	Grant exchange.Grant `json:"grant,omitempty"`
	Chain int            `json:"chain,omitempty"`
	Step  bool           `json:"step,omitempty"`
	// Replicas is the engine count the run measures in a campaign over
	// engine counts (kube.engines.replicas, --engines); 0: one size, as
	// the engines were (every campaign before them).
	Replicas int `json:"replicas,omitempty"`
}

// Total is warmup plus the measured phase.
func (p PlannedRun) Total() time.Duration { return p.Warmup + p.Duration }

// CampaignStarted opens the stream.
type CampaignStarted struct {
	At         time.Time        `json:"at"`
	ID         string           `json:"id"`
	Name       string           `json:"name"`
	Driver     string           `json:"driver"` // "local" or "kube (context/namespace)"
	Target     string           `json:"target"`
	Runs       []PlannedRun     `json:"runs"`
	Thresholds stats.Thresholds `json:"thresholds"`
	Resumed    []string         `json:"resumed,omitempty"` // runs already done before a resume
	// Search is how a capacity campaign searches (nil: it runs its stages);
	// evidence written before it was here has none, and the first
	// capacity_search event says it.
	Search *search.Spec `json:"search,omitempty"`
}

// RunStarted marks the beginning of a run (its warmup).
type RunStarted struct {
	At  time.Time  `json:"at"`
	Run PlannedRun `json:"run"`
}

// PhaseChanged marks warmup -> measured.
type PhaseChanged struct {
	At    time.Time   `json:"at"`
	RunID string      `json:"run_id"`
	Phase stats.Phase `json:"phase"`
}

// Window is one second of a run, by completion time (dropped arrivals by
// their scheduled time).
type Window struct {
	At time.Time `json:"at"` // start of the second
	// Seconds is how much of the second the run's phase covers (a phase's
	// last window can be partial); 0 when unknown, read as 1.
	Seconds   float64     `json:"seconds,omitempty"`
	RunID     string      `json:"run_id"`
	Phase     stats.Phase `json:"phase"`
	TargetRPS float64     `json:"target_rps"`
	Completed int64       `json:"completed"` // ok + errors
	OK        int64       `json:"ok"`
	Errors    int64       `json:"errors"`
	// NoResponse are the errors without an HTTP response (connection
	// refused or reset, timeout).
	NoResponse int64 `json:"no_response,omitempty"`
	// ErrorKinds counts the errors by their key in stats.Run.Errors
	// (outcome[:detail]): at most MaxErrorKinds keys, the rest under
	// OtherErrors.
	ErrorKinds map[string]int64 `json:"error_kinds,omitempty"`
	Dropped    int64            `json:"dropped"`
	InFlight   int64            `json:"in_flight"`
	// Latency is exact over the window's responses, in ms from send time.
	// Evidence written before it was a stats.Latency spells avg "mean".
	Latency    stats.Latency `json:"latency"`
	SendLagP99 float64       `json:"send_lag_p99"` // ms, scheduled -> sent
	// LatencyBuckets counts the window's responses by latency (ms from
	// send time) into LatencyBoundsMs: [i] those at most LatencyBoundsMs[i]
	// and above the bound before, the last those above every bound. Empty
	// in evidence written before it was here.
	LatencyBuckets []int64 `json:"latency_buckets,omitempty"`
}

// LatencyBoundsMs are the upper bounds of Window.LatencyBuckets, in ms:
// 1-2-5 steps from 0.5 ms to 10 s (a Prometheus histogram's classic
// buckets; --metrics-addr serves them as tokex_latency_seconds).
var LatencyBoundsMs = []float64{0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}

// LatencyBucket is the index in Window.LatencyBuckets of a latency in µs.
func LatencyBucket(us int64) int {
	for i, b := range LatencyBoundsMs {
		if float64(us) <= b*1000 {
			return i
		}
	}
	return len(LatencyBoundsMs)
}

// UnmarshalJSON reads a window, also from evidence whose latency has
// "mean" instead of "avg" (the former event.Digest).
func (w *Window) UnmarshalJSON(b []byte) error {
	type plain Window
	var v struct {
		plain
		Latency struct {
			stats.Latency
			Mean *float64 `json:"mean"`
		} `json:"latency"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*w = Window(v.plain)
	w.Latency = v.Latency.Latency
	if v.Latency.Mean != nil && w.Latency.Avg == 0 {
		w.Latency.Avg = *v.Latency.Mean
	}
	return nil
}

// Bounds of Window.ErrorKinds.
const (
	MaxErrorKinds = 8
	OtherErrors   = "other"
)

// AchievedRPS is the window's rate of responses (any HTTP status) per second
// of the window's length: what the server answered, not what was sent.
func (w Window) AchievedRPS() float64 {
	s := w.Seconds
	if s <= 0 {
		s = 1
	}
	return float64(w.Completed-w.NoResponse) / s
}

// Resource is one sample of CPU and memory of an engine, node, agent or the
// generator itself.
type Resource struct {
	At            time.Time `json:"at"`
	Role          string    `json:"role"` // engine, generator, node, agent
	Name          string    `json:"name"`
	CPUMillicores float64   `json:"cpu_millicores"`
	MemoryBytes   int64     `json:"memory_bytes"`
	// CPUSecondsTotal is cumulative CPU time when the source has it (0: unknown).
	CPUSecondsTotal float64 `json:"cpu_seconds_total,omitempty"`
	Source          string  `json:"source,omitempty"` // proc, metrics-server, kubelet
	// RequestMillicores and LimitMillicores are the CPU an engine Pod
	// requests and may use, its containers' sum (0: none set, or unknown).
	RequestMillicores float64 `json:"cpu_request_millicores,omitempty"`
	LimitMillicores   float64 `json:"cpu_limit_millicores,omitempty"`
}

// Host is one sample of the machine running tokex's load generator (CPU
// busy and steal, runnable threads, memory, pressure) and of the cores the
// generator may use and how long it waited for one.
type Host struct {
	At time.Time `json:"at"`
	sample.HostMetrics
}

// Forecast is the pre-flight estimate of what this machine can drive and
// serve at once, emitted by a driver before its first run.
type Forecast struct {
	At       time.Time         `json:"at"`
	Stages   []float64         `json:"stages"`
	Estimate forecast.Forecast `json:"estimate"`
}

// Line is the pre-flight sentence.
func (c Forecast) Line() string { return c.Estimate.Line(c.Stages) }

// AgentState is where a load agent is in a run.
type AgentState string

const (
	AgentRunning  AgentState = "running"
	AgentFinished AgentState = "finished"
)

// HostCheck is the machine before the first run: what other processes
// used of its cores while tokex sampled it for a few seconds, and, with
// --wait-quiet, the wait for it to become quiet enough (an event each
// second of the wait, then its outcome). Emitted by the local driver.
type HostCheck struct {
	At          time.Time     `json:"at"`
	State       HostState     `json:"state"`
	CPUs        int           `json:"cpus"`
	OthersCores float64       `json:"others_cores"` // mean over the last Sampled
	Sampled     time.Duration `json:"sampled"`
	QuietBelow  float64       `json:"quiet_below"` // cores: the machine is quiet when others use less
	Waited      time.Duration `json:"waited,omitempty"`
	WaitLimit   time.Duration `json:"wait_limit,omitempty"` // --wait-quiet; 0: no wait
}

// HostState is what a host check found.
type HostState string

const (
	HostQuiet     HostState = "quiet"      // others use less than QuietBelow
	HostBusy      HostState = "busy"       // others use more, and tokex does not wait
	HostWaiting   HostState = "waiting"    // busy, and --wait-quiet waits
	HostStillBusy HostState = "still_busy" // busy when the wait ran out: tokex runs anyway
)

// Busy reports a host whose figures will likely carry host_saturated.
func (h HostCheck) Busy() bool { return h.State != HostQuiet }

// Line says what the check found and what it means for the figures.
func (h HostCheck) Line() string {
	use := fmt.Sprintf("other processes use %.1f of %d cores", h.OthersCores, h.CPUs)
	switch h.State {
	case HostQuiet:
		if h.Waited > 0 {
			return fmt.Sprintf("the machine is quiet now: %s (after waiting %s)", use, h.Waited.Round(time.Second))
		}
		return fmt.Sprintf("the machine is quiet: %s (sampled %s)", use, h.Sampled.Round(time.Millisecond))
	case HostWaiting:
		return fmt.Sprintf("waiting for a quiet machine: %s, quiet is below %.1f (waited %s of %s)", use, h.QuietBelow,
			h.Waited.Round(time.Second), h.WaitLimit.Round(time.Second))
	case HostStillBusy:
		return fmt.Sprintf("this machine is still busy after %s: %s; running anyway, figures will likely carry host_saturated", h.Waited.Round(time.Second), use)
	}
	return fmt.Sprintf("this machine is busy: %s; figures will likely carry host_saturated (--wait-quiet 10m waits for a quiet machine)", use)
}

// AgentStatus reports one load agent's counters.
type AgentStatus struct {
	At      time.Time  `json:"at"`
	RunID   string     `json:"run_id"`
	Agent   int        `json:"agent"`
	Name    string     `json:"name"`
	State   AgentState `json:"state"`
	Sent    int64      `json:"sent"`
	OK      int64      `json:"ok"`
	Errors  int64      `json:"errors"`
	Dropped int64      `json:"dropped"`
}

// CoolDownSource is the Source of a capacity search's cool-down progress
// lines: the dashboard shows the latest until the next run starts.
const CoolDownSource = "cool-down"

// Log is a line from an agent, the server or tokex itself.
type Log struct {
	At      time.Time `json:"at"`
	Source  string    `json:"source"`
	Level   string    `json:"level"` // info, warn, error
	Message string    `json:"message"`
}

// RunFinished closes a run with its statistics, computed from the evidence.
type RunFinished struct {
	At     time.Time       `json:"at"`
	RunID  string          `json:"run_id"`
	Status stats.RunStatus `json:"status"`
	Reason string          `json:"reason,omitempty"`
	Stats  *stats.Run      `json:"stats,omitempty"`
}

// CampaignFinished closes the stream with the summary.
type CampaignFinished struct {
	At      time.Time              `json:"at"`
	Status  summary.CampaignStatus `json:"status"`
	Reason  string                 `json:"reason,omitempty"`
	Summary *summary.Summary       `json:"summary,omitempty"`
}

func (CampaignStarted) Kind() Kind  { return KindCampaignStarted }
func (RunStarted) Kind() Kind       { return KindRunStarted }
func (PhaseChanged) Kind() Kind     { return KindPhaseChanged }
func (Window) Kind() Kind           { return KindWindow }
func (Resource) Kind() Kind         { return KindResource }
func (Host) Kind() Kind             { return KindHost }
func (Forecast) Kind() Kind         { return KindForecast }
func (AgentStatus) Kind() Kind      { return KindAgentStatus }
func (Log) Kind() Kind              { return KindLog }
func (RunFinished) Kind() Kind      { return KindRunFinished }
func (CampaignFinished) Kind() Kind { return KindCampaignFinished }
func (Idle) Kind() Kind             { return KindIdle }
func (Search) Kind() Kind           { return KindSearch }
func (HostCheck) Kind() Kind        { return KindHostCheck }

// Idle is the engine measured at rest before the first run (campaign.idle).
type Idle struct {
	At   time.Time    `json:"at"`
	Idle summary.Idle `json:"idle"`
}

// Search is a capacity search after each judged probe: the bracket so far
// and the probes; Next is the rate it tries next (0: done).
type Search struct {
	At     time.Time    `json:"at"`
	Result curve.Result `json:"result"`
	Next   float64      `json:"next,omitempty"`
}

// Time returns when an event happened.
func Time(e Event) time.Time {
	switch v := e.(type) {
	case CampaignStarted:
		return v.At
	case RunStarted:
		return v.At
	case PhaseChanged:
		return v.At
	case Window:
		return v.At
	case Resource:
		return v.At
	case Host:
		return v.At
	case Forecast:
		return v.At
	case AgentStatus:
		return v.At
	case Log:
		return v.At
	case RunFinished:
		return v.At
	case CampaignFinished:
		return v.At
	case Idle:
		return v.At
	case Search:
		return v.At
	case HostCheck:
		return v.At
	}
	return time.Time{}
}
