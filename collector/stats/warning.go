package stats

import (
	"encoding/json"
	"slices"
	"strings"
)

// WarningCode names a caveat on the figures; codes are stable, so scripts can
// match them in summary.json.
type WarningCode string

// The codes tokex raises. Invalidating codes (see Invalidating) make a run
// fail its verdict unless allowed: the figures it would print are the load
// generator's or the host's, not the server's.
const (
	WarnNote               WarningCode = "note"                // free text (evidence of schema 1, imports)
	WarnNoRequests         WarningCode = "no_requests"         // no request completed in the measured phase
	WarnDropped            WarningCode = "dropped_arrivals"    // arrivals never sent
	WarnEngineCPUUnknown   WarningCode = "engine_cpu_unknown"  // no engine CPU samples
	WarnIncompleteEvidence WarningCode = "incomplete_evidence" // rows disagree with another count
	WarnMalformedInput     WarningCode = "malformed_input"     // lines skipped while reading
	WarnCampaignEnded      WarningCode = "campaign_unfinished" // aborted or failed campaign
	// A run of the stage failed its thresholds or could not run.
	WarnStageFailedRun WarningCode = "stage_has_failed_run"
	// The target stopped answering (every request refused, reset or timed
	// out for target.unreachable_after): the run and the campaign stopped.
	WarnTargetUnreachable WarningCode = "target_unreachable"
	// The load generator did not keep its schedule: send lag above its
	// bound, so latency includes the generator's own delay.
	WarnGeneratorLate WarningCode = "generator_late"
	// The load generator (tokex's, or a k6 agent named in the detail) ran
	// out of CPU: at its limit, or waiting for a CPU.
	WarnGeneratorStarved WarningCode = "generator_starved"
	// The host running the load was out of CPU (busy, steal) or memory.
	WarnHostSaturated WarningCode = "host_saturated"
	// The pre-flight estimate (collector/forecast): the stage needs more
	// CPU than this machine has for generator and server together. A
	// forecast, not a measurement. Evidence written before the rename says
	// capacity_exceeded, which is read as this code.
	WarnForecastExceeded WarningCode = "forecast_exceeded"
	// How many arrivals were dropped is unknown (a k6 agent's summary could
	// not be read): the dropped count shown is a lower bound.
	WarnDroppedUnknown WarningCode = "dropped_unknown"
	// The engine CPU cannot be the server's: below any exchange's cost, or
	// zero while exchanges succeed (a wrapper or launcher sampled).
	WarnEngineCPUImplausible WarningCode = "engine_cpu_implausible"
	// The embedded server ran as tokex itself (no tokex-engine found): its
	// memory includes the pages of tokex's whole binary.
	WarnEngineMemoryInflated WarningCode = "engine_memory_inflated"
	// At least TimeoutsHeavyShare of the run's requests ended in the
	// client's timeout: its upper percentiles are the timeout, and its CPU
	// per exchange includes the work on requests that got no answer.
	WarnTimeoutsHeavy WarningCode = "timeouts_heavy"
	// A regular latency wave within a run (a periodic stall: connection
	// idle timeouts, cache refreshes, GC): period and amplitude in the detail.
	WarnLatencyPeriodic WarningCode = "latency_periodic"
	// Which arrival some requests served is known only within bounds (k6
	// began iterations late while it also dropped arrivals): their start
	// lag and latency from schedule are lower bounds; how many in the detail.
	WarnLagLowerBound WarningCode = "lag_lower_bound"
	// No check judged the exchanges (imported k6 results without tokex's
	// lines or k6 checks): the success ratio is not a verdict.
	WarnSuccessUnknown WarningCode = "success_unknown"
	// The engine's marginal cost changes with the rate (batching, JIT,
	// amortised GC): no single straight line of cores against rate holds,
	// so no single CPU-ms per exchange describes the server; the cost
	// curve's segments in the detail (campaign-wide).
	WarnMarginalCostVaries WarningCode = "marginal_cost_varies"
	// A campaign over engine counts: the probes that bracket a count's
	// capacity (the rate found and the one that broke) carried warnings
	// that their figures are the machine's (host_saturated,
	// generator_late, generator_starved), which the thresholds allowed:
	// the scaling efficiency measures the host as much as the server
	// (campaign-wide; the counts and codes in the detail).
	WarnScalingHostBound WarningCode = "scaling_host_bound"
	// A cumulative CPU counter went back or advanced faster than any
	// server can (an overflow, a restart, a hostile metrics endpoint): the
	// CPU figure comes from the sampled rates, never from it.
	WarnCPUCounterInvalid WarningCode = "cpu_counter_invalid"
	// The sampled engine process exited (or its PID was reused) during the
	// run: the run stopped and failed, and its engine CPU is not reported
	// (the samples stop where the process did, the window does not).
	WarnEngineExited WarningCode = "engine_exited"
	// PromQL (target.prometheus, kube.engines.prometheus) gave no engine
	// CPU for the run: Prometheus unreachable, an error, or no series for
	// the query (the detail says which and quotes the query).
	WarnPromQLNoData WarningCode = "promql_no_data"
	// A member the run expected (an engine Pod) has no series, or a member
	// has CPU but no memory series: the sum leaves it out.
	WarnPromQLMissingSeries WarningCode = "promql_missing_series"
	// A series' samples do not cover the window: none near its start, the
	// last one long before its end, or a gap of missed scrapes inside it;
	// rate() then covers less than the window.
	WarnPromQLStale WarningCode = "promql_stale"
	// Fewer than sample.PromQLMinSamples samples of the CPU counter in the window:
	// the scrape interval is too coarse for the run's length.
	WarnPromQLCoarse WarningCode = "promql_coarse"
)

// InvalidatingCodes are the codes that fail a run's verdict unless the
// campaign allows them (thresholds.allow_warnings).
var InvalidatingCodes = []WarningCode{WarnGeneratorLate, WarnGeneratorStarved, WarnHostSaturated, WarnEngineCPUImplausible, WarnSuccessUnknown}

// Invalidating reports whether c fails a run's verdict unless allowed.
func (c WarningCode) Invalidating() bool { return slices.Contains(InvalidatingCodes, c) }

// Warning is one caveat: what it is (Code), which run (empty: campaign-wide)
// and what a person needs to know (Detail).
type Warning struct {
	Code   WarningCode `json:"code"`
	Run    string      `json:"run,omitempty"`
	Detail string      `json:"detail"`
}

// String renders "run: detail [code]" for terminals and markdown.
func (w Warning) String() string {
	var b strings.Builder
	if w.Run != "" {
		b.WriteString(w.Run + ": ")
	}
	b.WriteString(w.Detail)
	if w.Code != "" && w.Code != WarnNote {
		b.WriteString(" [" + string(w.Code) + "]")
	}
	return b.String()
}

// renamed maps the codes of older evidence to the codes that replaced them.
var renamed = map[WarningCode]WarningCode{"capacity_exceeded": WarnForecastExceeded}

// UnmarshalJSON also reads the plain strings of schema 1 as notes, and a
// renamed code as its new name.
func (w *Warning) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*w = Warning{Code: WarnNote, Detail: s}
		return nil
	}
	type plain Warning
	if err := json.Unmarshal(b, (*plain)(w)); err != nil {
		return err
	}
	if c, ok := renamed[w.Code]; ok {
		w.Code = c
	}
	return nil
}

// Warn builds a warning.
func Warn(code WarningCode, run, detail string) Warning {
	return Warning{Code: code, Run: run, Detail: detail}
}
