// Package promexport serves tokex's own figures for Prometheus while a
// campaign runs (--metrics-addr): a consumer of the one event stream, like
// the dashboard, the headless printer and the evidence writer, so what it
// serves is what they show. Every series is labelled by campaign, stage,
// run and phase (resource samples by the phase of the run under way).
package promexport

import (
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// Names of the series served (the Grafana dashboard's test holds its
// queries to them).
const (
	TargetRate       = "tokex_target_rate"
	AchievedRate     = "tokex_achieved_rate"
	Exchanges        = "tokex_exchanges_total"
	Responses        = "tokex_responses_total"
	Dropped          = "tokex_dropped_arrivals_total"
	WindowSeconds    = "tokex_window_seconds_total"
	InFlight         = "tokex_in_flight"
	Latency          = "tokex_latency_seconds"
	SendLagP99       = "tokex_send_lag_p99_seconds"
	GeneratorCPU     = "tokex_generator_cpu_cores"
	EngineCPU        = "tokex_engine_cpu_cores"
	EngineMemory     = "tokex_engine_memory_bytes"
	RunCPUMs         = "tokex_run_engine_cpu_ms_per_exchange"
	RunLatency       = "tokex_run_latency_seconds"
	RunAchievedRate  = "tokex_run_achieved_rate"
	RunPassed        = "tokex_run_passed"
	CampaignRunsDone = "tokex_campaign_runs_finished"
)

// base are the labels of every series.
var base = []string{"campaign", "stage", "run", "phase"}

// Bounds: a replayed stream may be hostile, and label sets are memory.
const (
	maxEngines   = 200 // engine names kept, like the report's charts
	maxLabelLen  = 64
	idlePhase    = "idle" // between runs
	otherOutcome = "other"
)

// outcomes are the values of the outcome label: exchange's outcome classes
// of a completed exchange; anything else is "other".
var outcomes = []string{"ok", "oauth_error", "http_error", "bad_response", "timeout", "conn_error"}

// Exporter keeps the figures of the stream in Prometheus collectors.
type Exporter struct {
	reg *prometheus.Registry

	mu       sync.Mutex
	campaign string
	stages   map[string]string  // run id -> stage label
	phase    map[string]string  // run id -> its phase
	targets  map[string]float64 // run id -> its target rate
	current  string             // the run under way ("": none)
	engines  map[string]bool    // engine names seen
	finished float64

	targetRate, achieved, inFlight, sendLag, genCPU, engCPU, engMem *prometheus.GaugeVec
	exchanges, responses, dropped, seconds                          *prometheus.CounterVec
	runCPU, runLatency, runAchieved, runPassed                      *prometheus.GaugeVec
	runsDone                                                        *prometheus.GaugeVec
	latency                                                         *histograms
}

// New is an exporter with its own registry (nothing of the process: the
// series are the campaign's).
func New() *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry(), stages: map[string]string{}, phase: map[string]string{}, targets: map[string]float64{}, engines: map[string]bool{}}
	g := func(name, help string, extra ...string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, append(append([]string{}, base...), extra...))
		e.reg.MustRegister(v)
		return v
	}
	c := func(name, help string, extra ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append(append([]string{}, base...), extra...))
		e.reg.MustRegister(v)
		return v
	}
	e.targetRate = g(TargetRate, "Exchanges per second the run is scheduled at (its stage).")
	e.achieved = g(AchievedRate, "Responses (any HTTP status) per second in the latest one-second window.")
	e.inFlight = g(InFlight, "Requests under way at the latest window.")
	e.sendLag = g(SendLagP99, "99th percentile of the send lag (scheduled to sent) in the latest window.")
	e.genCPU = g(GeneratorCPU, "CPU of tokex's load generator, in cores.")
	e.engCPU = g(EngineCPU, "CPU of an engine process or Pod as tokex measures it, in cores.", "engine", "source")
	e.engMem = g(EngineMemory, "Memory of an engine process or Pod as tokex measures it.", "engine", "source")
	e.exchanges = c(Exchanges, "Exchanges completed (with or without a response), by outcome.", "outcome")
	e.responses = c(Responses, "Exchanges the server answered (any HTTP status): what the achieved rate counts.")
	e.dropped = c(Dropped, "Arrivals never sent: the in-flight cap was full.")
	e.seconds = c(WindowSeconds, "Seconds of the phase the windows so far covered: divide a counter's increase by it for a rate over the run.")
	e.runCPU = g(RunCPUMs, "A finished run's engine CPU-ms per exchange over its measured window.", "source")
	e.runLatency = g(RunLatency, "A finished run's latency percentiles over its measured window.", "quantile")
	e.runAchieved = g(RunAchievedRate, "A finished run's responses per measured second.")
	e.runPassed = g(RunPassed, "1 if a finished run passed its thresholds, else 0.")
	e.runsDone = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: CampaignRunsDone, Help: "Runs of the campaign finished so far."}, []string{"campaign"})
	e.reg.MustRegister(e.runsDone)
	e.latency = newHistograms(Latency, "Latency from send time of the responses, classic buckets.")
	e.reg.MustRegister(e.latency)
	return e
}

// Registry is where the series are.
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Consume is the event-bus consumer.
func (e *Exporter) Consume(ev event.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch v := ev.(type) {
	case event.CampaignStarted:
		e.campaign = clip(v.ID)
		for _, p := range v.Runs {
			e.stages[clip(p.ID)] = stageLabel(p)
		}
	case event.RunStarted:
		e.runStarted(v)
	case event.PhaseChanged:
		if id := clip(v.RunID); e.stages[id] != "" {
			// The live gauges describe the phase under way: the warmup's
			// go (a sum by run would add them to the measured phase's).
			e.phase[id] = string(v.Phase)
			for _, g := range e.live() {
				g.DeletePartialMatch(prometheus.Labels{"run": id})
			}
			e.targetRate.WithLabelValues(e.labels(id, string(v.Phase))...).Set(e.targets[id])
		}
	case event.Window:
		e.window(v)
	case event.Resource:
		e.resource(v)
	case event.RunFinished:
		e.runFinished(v)
	}
}

func (e *Exporter) runStarted(v event.RunStarted) {
	id := clip(v.Run.ID)
	e.stages[id] = stageLabel(v.Run)
	e.targets[id] = v.Run.TargetRPS
	ph := string(stats.Warmup)
	if v.Run.Warmup <= 0 {
		ph = string(stats.Measured)
	}
	e.phase[id], e.current = ph, id
	e.targetRate.WithLabelValues(e.labels(id, ph)...).Set(v.Run.TargetRPS)
}

func (e *Exporter) labels(run, phase string) []string {
	return []string{e.campaign, e.stages[run], run, phase}
}

func (e *Exporter) window(w event.Window) {
	id := clip(w.RunID)
	if e.stages[id] == "" {
		return // a window of a run the stream never announced
	}
	ph := string(w.Phase)
	if w.Phase != stats.Warmup && w.Phase != stats.Measured {
		return
	}
	l := e.labels(id, ph)
	secs := w.Seconds
	if secs <= 0 || secs > 1 || math.IsNaN(secs) {
		secs = 1
	}
	nonNeg := func(n int64) float64 { return float64(max(n, 0)) }
	e.seconds.WithLabelValues(l...).Add(secs)
	e.responses.WithLabelValues(l...).Add(nonNeg(w.Completed - w.NoResponse))
	e.dropped.WithLabelValues(l...).Add(nonNeg(w.Dropped))
	e.exchanges.WithLabelValues(append(l, "ok")...).Add(nonNeg(w.OK))
	var kinds int64
	for k, n := range w.ErrorKinds {
		if n <= 0 {
			continue
		}
		kinds += n
		e.exchanges.WithLabelValues(append(l, outcomeLabel(k))...).Add(float64(n))
	}
	if rest := w.Errors - kinds; rest > 0 {
		e.exchanges.WithLabelValues(append(l, otherOutcome)...).Add(float64(rest))
	}
	e.latency.add(l, w)
	// A phase's last window comes after the next phase began (windows are
	// flushed a second late): the live gauges stay the current phase's.
	if id != e.current || ph != e.phase[id] {
		return
	}
	e.achieved.WithLabelValues(l...).Set(finite(w.AchievedRPS()))
	e.inFlight.WithLabelValues(l...).Set(nonNeg(w.InFlight))
	e.sendLag.WithLabelValues(l...).Set(finite(w.SendLagP99 / 1000))
}

// outcomeLabel is the outcome of an error key (outcome[:detail]).
func outcomeLabel(key string) string {
	o, _, _ := strings.Cut(key, ":")
	for _, k := range outcomes {
		if o == k {
			return o
		}
	}
	return otherOutcome
}

func (e *Exporter) resource(r event.Resource) {
	id := e.current
	ph := e.phase[id]
	if id == "" {
		ph = idlePhase
	}
	l := e.labels(id, ph)
	switch r.Role {
	case "generator":
		e.genCPU.DeletePartialMatch(prometheus.Labels{"campaign": e.campaign})
		e.genCPU.WithLabelValues(l...).Set(finite(r.CPUMillicores / 1000))
	case "engine":
		name := clip(r.Name)
		if !e.engines[name] && len(e.engines) >= maxEngines {
			return
		}
		e.engines[name] = true
		src := doc.SourceLabel(&stats.CPU{Source: r.Source})
		e.engCPU.DeletePartialMatch(prometheus.Labels{"engine": name})
		e.engMem.DeletePartialMatch(prometheus.Labels{"engine": name})
		e.engCPU.WithLabelValues(append(l, name, src)...).Set(finite(r.CPUMillicores / 1000))
		e.engMem.WithLabelValues(append(l, name, src)...).Set(float64(max(r.MemoryBytes, 0)))
	}
}

// runFinished drops the run's live gauges (Prometheus then marks them
// stale) and sets its figures.
func (e *Exporter) runFinished(v event.RunFinished) {
	id := clip(v.RunID)
	if e.stages[id] == "" {
		return
	}
	for _, g := range e.live() {
		g.DeletePartialMatch(prometheus.Labels{"run": id})
	}
	if e.current == id {
		e.current = ""
	}
	e.finished++
	e.runsDone.WithLabelValues(e.campaign).Set(e.finished)
	st := v.Stats
	if st == nil {
		return
	}
	l := e.labels(id, string(stats.Measured))
	passed := 0.0
	if st.ThresholdsPassed {
		passed = 1
	}
	e.runPassed.WithLabelValues(l...).Set(passed)
	e.runAchieved.WithLabelValues(l...).Set(finite(st.AchievedRPS))
	for q, v := range map[string]float64{"0.5": st.LatencyMs.P50, "0.95": st.LatencyMs.P95, "0.99": st.LatencyMs.P99} {
		e.runLatency.WithLabelValues(append(l, q)...).Set(finite(v / 1000))
	}
	if c := st.EngineCPU; c != nil {
		e.runCPU.WithLabelValues(append(l, doc.SourceLabel(c))...).Set(finite(c.CPUMsPerExchange))
	}
}

// live are the gauges of the run and phase under way.
func (e *Exporter) live() []*prometheus.GaugeVec {
	return []*prometheus.GaugeVec{e.targetRate, e.achieved, e.inFlight, e.sendLag}
}

// stageLabel is a run's stage: its target rate ("100@2" at 2 engines, in
// a campaign over engine counts), or "sanity".
func stageLabel(p event.PlannedRun) string {
	if p.Sanity {
		return "sanity"
	}
	if p.Replicas > 0 {
		return strconv.FormatFloat(p.TargetRPS, 'g', -1, 64) + "@" + strconv.Itoa(p.Replicas)
	}
	return strconv.FormatFloat(p.TargetRPS, 'g', -1, 64)
}

// clip keeps a label value short (a replayed stream may be hostile).
func clip(s string) string {
	if len(s) > maxLabelLen {
		return s[:maxLabelLen]
	}
	return s
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
