package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/units"
	"github.com/tokex-dev/tokex/collector/usage"
	"github.com/tokex-dev/tokex/exchange"
)

// CPU summarizes a group of processes or pods over the measured window.
type CPU struct {
	AvgCores         float64 `json:"avg_cores"`
	PeakCores        float64 `json:"peak_cores"`
	CPUMsPerExchange float64 `json:"cpu_ms_per_exchange,omitempty"`
	// Exchanges divides the CPU: responses completed inside the window.
	Exchanges int64 `json:"exchanges,omitempty"`
	// Method: "cumulative" (exact CPU-seconds counters) or "rate" (average
	// of sampled millicores × window); Samples counts the ticks used.
	Method  string `json:"method"`
	Samples int    `json:"samples"`
	// Source: what was sampled (proc, proc-tree, cgroup, prometheus, kubelet…).
	Source string `json:"source,omitempty"`
}

// ThresholdResult is one threshold check of a run.
type ThresholdResult struct {
	Name   string  `json:"name"`
	Limit  float64 `json:"limit"`
	Actual float64 `json:"actual"`
	Passed bool    `json:"passed"`
}

// Run is stats.json of one run; the fields the article's tables use come first.
type Run struct {
	ID        string    `json:"id"`
	Index     int       `json:"index"`
	Round     int       `json:"round"`
	Sanity    bool      `json:"sanity,omitempty"`
	Status    RunStatus `json:"status"`
	Reason    string    `json:"reason,omitempty"`
	TargetRPS float64   `json:"target_rps"`
	Agents    int       `json:"agents"`
	// Replicas is the engine count the run measured (kube.engines.replicas,
	// --engines); 0: one size, as the engines were.
	Replicas int   `json:"replicas,omitempty"`
	Requests int64 `json:"requests"` // measured phase, sent
	// Responses are the requests the server answered (any HTTP status).
	Responses int64 `json:"responses"`
	// AchievedRPS is responses ÷ measured seconds; AchievedRatio is
	// responses ÷ measured arrivals (sent, dropped or cut short): never
	// more than 1, and 0 for a target that answered nothing. An arrival of
	// a delegation chain is the chain: its first hop's response counts.
	AchievedRPS   float64          `json:"achieved_rps"`
	AchievedRatio float64          `json:"achieved_ratio"`
	Dropped       int64            `json:"dropped"` // measured phase
	OK            int64            `json:"ok"`
	SuccessRatio  float64          `json:"success_ratio"`
	Errors        map[string]int64 `json:"errors,omitempty"` // outcome/detail -> count
	// Retried counts the requests sent a second time on a new connection
	// after a keep-alive race (Request.Retried): not errors, whatever the
	// second attempt's outcome; measured phase.
	Retried int64 `json:"retried,omitempty"`
	// TopErrors are the most common failures with what the server said.
	TopErrors         []ErrorKind   `json:"top_errors,omitempty"`
	LatencyMs         Latency       `json:"latency_ms"`
	LatencyFromSched  Latency       `json:"latency_from_schedule_ms"`
	SendLagMs         Latency       `json:"send_lag_ms"`
	SendLagParts      *SendLagParts `json:"send_lag_parts,omitempty"` // kube: start lag and minting
	EngineCPU         *CPU          `json:"engine_cpu"`
	EngineMemoryBytes int64         `json:"engine_memory_bytes"`
	// EnginePods is each engine's cores in the measured window, and
	// EngineBalance their max ÷ mean (1: even), with two engines or more.
	EnginePods    []usage.PodCPU `json:"engine_pods,omitempty"`
	EngineBalance float64        `json:"engine_balance,omitempty"`
	// Connections: how the agents' connections were spread over the
	// engines (local engines sharing a port).
	Connections      *sample.Connections `json:"connections,omitempty"`
	GeneratorCPU     *CPU                `json:"generator_cpu,omitempty"`
	ThresholdsPassed bool                `json:"thresholds_passed"`
	Thresholds       []ThresholdResult   `json:"thresholds"`
	WarmupRequests   int64               `json:"warmup_requests"`
	WarmupDropped    int64               `json:"warmup_dropped"`
	Started          time.Time           `json:"started"`
	MeasuredStart    time.Time           `json:"measured_start"`
	MeasuredEnd      time.Time           `json:"measured_end"`
	MeasuredSeconds  float64             `json:"measured_seconds"`
	Warnings         []Warning           `json:"warnings,omitempty"`
	// LatencyPeriod is a regular latency wave (curve.PeriodDefinition).
	LatencyPeriod *curve.Period `json:"latency_period,omitempty"`
	// Verification counts the issued tokens verified in the measured
	// phase (check.verify), nil when none were.
	Verification *sample.Verification `json:"verification,omitempty"`
	// CoolDown is the capacity search's cool-down before the run.
	CoolDown *curve.CoolDown `json:"cool_down,omitempty"`
	// PromQL is what an existing Prometheus was asked and answered about
	// the engine over the window (target.prometheus): then the source of
	// EngineCPU, and EngineCPUSampled is what tokex's own samplers (pid,
	// cgroup, metrics-server…) measured of the same window.
	PromQL           *sample.PromQL `json:"promql,omitempty"`
	EngineCPUSampled *CPU           `json:"engine_cpu_sampled,omitempty"`
	// Grant is the baseline grant a baseline run sent ("" the campaign's
	// workload); Chain the length of the run's delegation chains (0: none),
	// Step set when it is shorter than the campaign's (workload.steps);
	// Mix the weights its arrivals drew their grant from.
	Grant exchange.Grant `json:"grant,omitempty"`
	Chain int            `json:"chain,omitempty"`
	Step  bool           `json:"step,omitempty"`
	Mix   *exchange.Mix  `json:"mix,omitempty"`
	// Hops are the figures of each hop of the run's chains, Chains the
	// chains as wholes, Kinds each grant of a mixed run.
	Hops   []HopStats  `json:"hops,omitempty"`
	Chains *ChainStats `json:"chains,omitempty"`
	Kinds  []KindStats `json:"kinds,omitempty"`
}

// ComputeRun derives a run's statistics from its request rows, resource
// samples and host samples (none for evidence without host.csv). Only the
// measured phase counts; latency is from the send time (comparable to k6's
// http_req_duration), and from the scheduled time (free of coordinated
// omission) under its own name.
func ComputeRun(m RunMeta, reqs []Request, res []sample.Resource, th Thresholds, host ...sample.Host) *Run {
	t := NewTally(m)
	for i := range reqs {
		t.Add(&reqs[i])
	}
	for i := range res {
		t.AddResource(&res[i])
	}
	if t.NeedsResourcesAgain() {
		for i := range res {
			t.AddResourceAgain(&res[i])
		}
	}
	for i := range host {
		t.AddHost(&host[i])
	}
	return t.Run(m, th)
}

// Tally takes a run's rows one at a time (streamed from requests.csv.gz)
// and keeps only what exact percentiles need: each measured row's three
// latencies in compact arrays (4 bytes each while they fit in an int32 of
// microseconds, 35 minutes), never the rows. Its resource and host samples
// come the same way (AddResource, AddHost), and are not kept either.
type Tally struct {
	winStart, winEnd                           int64 // the measured window, µs
	arrivals, requests, responses, ok, dropped int64
	timeouts                                   int64
	retried, firstResponses                    int64
	warmupRequests, warmupDropped              int64
	answeredInWindow                           int64
	errors                                     map[string]int64
	dur, fromSched, lag                        Samples
	perSecond                                  secondTally
	samples                                    sampleTally
	agentic                                    *agenticTally // chains and mixes
	chain                                      int
}

// NewTally starts the tally of run m's rows.
func NewTally(m RunMeta) *Tally {
	t := &Tally{winStart: m.MeasuredStart.UnixMicro(), winEnd: m.MeasuredEnd.UnixMicro(),
		perSecond: secondTally{startUS: m.MeasuredStart.UnixMicro()},
		samples:   newSampleTally(m.MeasuredStart.UnixMicro(), m.MeasuredEnd.UnixMicro()), chain: min(max(m.Chain, 0), MaxChain)}
	if m.Chain > 0 || m.Mix != nil {
		t.agentic = newAgenticTally(t.chain)
	}
	return t
}

// Add files one row.
func (t *Tally) Add(q *Request) {
	// The responses (any HTTP status, any phase) that completed inside the
	// measured window: what the window's CPU is divided by.
	if done := q.ScheduledUS + q.SendLagUS + q.DurationUS; q.Responded() && done > t.winStart && done <= t.winEnd {
		t.answeredInWindow++
	}
	if q.Phase != Measured {
		if q.Dropped() {
			t.warmupDropped += q.Arrivals()
		} else {
			t.warmupRequests++
		}
		return
	}
	if q.Hop > 0 || q.Kind != "" || t.agentic != nil {
		if t.agentic == nil {
			t.agentic = newAgenticTally(t.chain)
		}
		t.agentic.add(q)
	}
	if q.Hop <= 1 {
		t.arrivals += q.Arrivals() // the hops after the first are the same arrival
	}
	if q.Dropped() {
		t.dropped += q.Arrivals()
		return
	}
	if q.Aborted() {
		return // cut short by the campaign stopping: neither success nor failure
	}
	t.requests++
	if q.Retried {
		t.retried++
	}
	if q.Responded() {
		t.responses++
		if q.Hop <= 1 {
			t.firstResponses++
		}
	}
	if q.Outcome == exchange.OutcomeTimeout {
		t.timeouts++
	}
	if q.OK() {
		t.ok++
	} else {
		if t.errors == nil {
			t.errors = map[string]int64{}
		}
		t.errors[q.ErrorKey()]++
	}
	t.dur.Add(q.DurationUS)
	t.fromSched.Add(q.SendLagUS + q.DurationUS)
	t.perSecond.add(q.ScheduledUS, q.SendLagUS+q.DurationUS)
	if q.Hop <= 1 { // a later hop's send lag is tokex's time between hops (ChainStats.TokexMs)
		t.lag.Add(q.SendLagUS)
	}
}

// Samples holds microsecond values for exact percentiles in 4 bytes each
// while they fit an int32 (35 minutes), in 8 once one does not.
type Samples struct {
	small []int32
	big   []int64
}

// Add appends one value.
func (s *Samples) Add(v int64) {
	if s.big == nil && v == int64(int32(v)) {
		s.small = append(s.small, int32(v))
		return
	}
	if s.big == nil {
		s.big = make([]int64, len(s.small), len(s.small)+1)
		for i, x := range s.small {
			s.big[i] = int64(x)
		}
		s.small = nil
	}
	s.big = append(s.big, v)
}

// Len is the number of values.
func (s *Samples) Len() int { return len(s.small) + len(s.big) }

// Summarize sorts the values and summarizes them in ms.
func (s *Samples) Summarize() Latency {
	if s.big != nil {
		return Summarize(s.big)
	}
	return Summarize(s.small)
}

// Run computes the statistics of the rows and samples added so far.
func (t *Tally) Run(m RunMeta, th Thresholds) *Run {
	r := &Run{
		ID: m.ID, Index: m.Index, Round: m.Round, Sanity: m.Sanity, Status: m.Status, Reason: m.Reason,
		TargetRPS: m.TargetRPS, Agents: m.Agents, Replicas: m.Replicas, Started: m.Started,
		MeasuredStart: m.MeasuredStart, MeasuredEnd: m.MeasuredEnd, CoolDown: m.CoolDown,
		Grant: m.Grant, Chain: m.Chain, Step: m.Step, Mix: m.Mix,
	}
	t.agenticFigures(r)
	r.MeasuredSeconds = m.MeasuredEnd.Sub(m.MeasuredStart).Seconds()
	for _, w := range m.Warnings {
		w.Run = m.ID
		r.Warnings = append(r.Warnings, w)
	}
	arrivals := t.arrivals
	r.Requests, r.Responses, r.OK, r.Dropped, r.Errors = t.requests, t.responses, t.ok, t.dropped, t.errors
	r.Retried = t.retried
	r.WarmupRequests, r.WarmupDropped = t.warmupRequests, t.warmupDropped
	r.LatencyMs = t.dur.Summarize()
	r.LatencyFromSched = t.fromSched.Summarize()
	r.SendLagMs = t.lag.Summarize()
	r.SendLagParts = m.SendLagParts
	r.Verification = m.Verification
	if r.MeasuredSeconds > 0 {
		r.AchievedRPS = Round3(float64(r.Responses) / r.MeasuredSeconds)
	}
	if arrivals > 0 { // of a chain, its first hop's response
		r.AchievedRatio = Round4(float64(t.firstResponses) / float64(arrivals))
	}
	if r.Requests > 0 {
		r.SuccessRatio = Round4(float64(r.OK) / float64(r.Requests))
	}
	r.TopErrors = topErrors(r.Errors, m.ErrorDescriptions)
	st := &t.samples
	sampled, sampledMem := groupCPU(&st.engine, st.start, st.end, t.answeredInWindow)
	r.engineFigure(m, sampled, sampledMem, t.answeredInWindow)
	r.EnginePods, r.EngineBalance = st.engine.Pods(m.MeasuredEnd.Sub(m.MeasuredStart).Seconds())
	r.Connections = m.Connections
	if w, bad := counterWarning(&st.engine, "engine", m.ID); bad {
		r.Warnings = append(r.Warnings, w)
	}
	exited := slices.ContainsFunc(m.Warnings, func(w Warning) bool { return w.Code == WarnEngineExited })
	if exited {
		r.EngineCPU, r.EngineCPUSampled = nil, nil // no figure from samples of a process that stopped inside the window
		r.EnginePods, r.EngineBalance = nil, 0
	}
	if g, _ := groupCPU(&st.generator, st.start, st.end, 0); g != nil {
		r.GeneratorCPU = g
	}
	if r.Status == StatusDone && r.Requests == 0 {
		r.Warnings = append(r.Warnings, Warn(WarnNoRequests, m.ID, "no request completed in the measured phase"))
	}
	if r.Dropped > 0 {
		r.Warnings = append(r.Warnings, Warn(WarnDropped, m.ID, fmt.Sprintf("%d arrivals dropped: the in-flight cap was full", r.Dropped)))
	}
	if w := timeoutsHeavy(m.ID, t.timeouts, r.Requests); w != nil {
		r.Warnings = append(r.Warnings, *w)
	}
	r.engineCPUWarning(exited, st.engine.Overflow())
	if w := r.generatorLate(); w != nil {
		r.Warnings = append(r.Warnings, *w)
	}
	r.Warnings = append(r.Warnings, r.hostWarnings(&st.host)...)
	if r.LatencyPeriod = t.perSecond.period(); r.LatencyPeriod != nil {
		r.Warnings = append(r.Warnings, Warn(WarnLatencyPeriodic, m.ID, "a regular latency wave: "+r.LatencyPeriod.Line()))
	}
	r.checkThresholds(th)
	return r
}

// engineCPUWarning says when the engine CPU is unknown or implausible.
func (r *Run) engineCPUWarning(exited, tooMany bool) {
	switch {
	case exited:
		r.Warnings = append(r.Warnings, Warn(WarnEngineCPUUnknown, r.ID, "the engine exited during the run: its CPU is not reported"))
	case r.EngineCPU == nil && tooMany:
		r.Warnings = append(r.Warnings, Warn(WarnEngineCPUUnknown, r.ID,
			fmt.Sprintf("more than %s engine processes sampled: their CPU is not computed", units.Thousands(usage.MaxMembers))))
	case r.EngineCPU == nil:
		r.Warnings = append(r.Warnings, Warn(WarnEngineCPUUnknown, r.ID, "no engine CPU samples: CPU per exchange unknown"))
	default:
		if w, ok := implausibleCPU(r.EngineCPU, r.OK); ok {
			w.Run = r.ID
			r.Warnings = append(r.Warnings, w)
		}
	}
}

// MinPlausibleCPUMs is the least engine CPU an exchange can cost: verifying
// one signature and signing one token take more on any server, so a lower
// figure means the wrong process (a wrapper, a launcher) was sampled.
const MinPlausibleCPUMs = 0.05

// CPUCounterResolutionMs is the coarsest step of an engine CPU counter: one
// USER_HZ tick of /proc (cgroup and Prometheus counters are as fine or finer).
const CPUCounterResolutionMs = 10

func implausibleCPU(c *CPU, ok int64) (Warning, bool) {
	if ok == 0 || c.Exchanges == 0 {
		return Warning{}, false
	}
	// Judge only what the counter can resolve: a run too small for one tick
	// per MinPlausibleCPUMs-worth of exchanges may read zero from a real server.
	if upper := (c.CPUMsPerExchange*float64(c.Exchanges) + CPUCounterResolutionMs) / float64(c.Exchanges); upper >= MinPlausibleCPUMs {
		return Warning{}, false
	}
	src := c.Source
	if src == "" {
		src = "the sampled engine"
	}
	switch {
	case c.CPUMsPerExchange == 0:
		return Warn(WarnEngineCPUImplausible, "", fmt.Sprintf("engine CPU is zero (%s) while %d exchanges succeeded: "+
			"the sampled process is not the one serving (a wrapper or launcher?); sample its process tree or cgroup", src, ok)), true
	case c.CPUMsPerExchange < MinPlausibleCPUMs:
		return Warn(WarnEngineCPUImplausible, "", fmt.Sprintf("engine CPU %.3f CPU-ms per exchange (%s) is below %.2f, less than any token exchange costs: "+
			"the sampled process is probably not the one serving", c.CPUMsPerExchange, src, MinPlausibleCPUMs)), true
	}
	return Warning{}, false
}

func (r *Run) checkThresholds(th Thresholds) {
	r.Thresholds = []ThresholdResult{
		{Name: "p95_ms <", Limit: th.P95Ms, Actual: r.LatencyMs.P95, Passed: r.Requests > 0 && r.LatencyMs.P95 < th.P95Ms},
		{Name: "success_ratio >=", Limit: th.SuccessRatio, Actual: r.SuccessRatio, Passed: r.Requests > 0 && r.SuccessRatio >= th.SuccessRatio},
		{Name: "dropped <=", Limit: float64(th.MaxDropped), Actual: float64(r.Dropped), Passed: r.Dropped <= th.MaxDropped},
	}
	// A warning that says the figures are the generator's, the host's or a
	// wrapper's, not the server's, fails the run unless the campaign allows it.
	var bad float64
	for _, w := range r.Warnings {
		if w.Code.Invalidating() && !th.Allows(w.Code) {
			bad++
		}
	}
	r.Thresholds = append(r.Thresholds, ThresholdResult{Name: "disallowed warnings <=", Limit: 0, Actual: bad, Passed: bad == 0})
	r.ThresholdsPassed = r.Status == StatusDone
	for _, t := range r.Thresholds {
		r.ThresholdsPassed = r.ThresholdsPassed && t.Passed
	}
}

// ErrorKind is one of a run's most common failures: its key in Errors, how
// often, and the most common things the server said about it.
type ErrorKind struct {
	Error        string                    `json:"error"`
	Count        int64                     `json:"count"`
	Descriptions []sample.ErrorDescription `json:"descriptions,omitempty"` // Error left empty
}

// Bounds of Run.TopErrors.
const (
	MaxTopErrors       = 5
	MaxTopDescriptions = 3
)

// topErrors ranks errors by count (then key) and attaches their most common
// descriptions.
func topErrors(errs map[string]int64, descs []sample.ErrorDescription) []ErrorKind {
	var out []ErrorKind
	for k, n := range errs {
		out = append(out, ErrorKind{Error: k, Count: n})
	}
	rank := func(ka string, na int64, kb string, nb int64) int {
		if na != nb {
			return cmp.Compare(nb, na)
		}
		return strings.Compare(ka, kb)
	}
	slices.SortFunc(out, func(a, b ErrorKind) int { return rank(a.Error, a.Count, b.Error, b.Count) })
	out = out[:min(len(out), MaxTopErrors)]
	descs = descs[:min(len(descs), 4*MaxTopErrors*MaxTopDescriptions+64)] // a manifest may be hostile
	for i := range out {
		for _, d := range descs {
			if d.Error == out[i].Error {
				text := exchange.SanitizeDescription(d.Text) // again: the manifest may be hostile
				out[i].Descriptions = append(out[i].Descriptions, sample.ErrorDescription{Text: text, Count: d.Count})
			}
		}
		ds := out[i].Descriptions
		slices.SortFunc(ds, func(a, b sample.ErrorDescription) int { return rank(a.Text, a.Count, b.Text, b.Count) })
		out[i].Descriptions = ds[:min(len(ds), MaxTopDescriptions)]
	}
	return out
}

// FailedChecks lists the thresholds the run failed, with the actual values:
// "success_ratio >= 0.99 (was 0)".
func (r *Run) FailedChecks() string {
	var failed []string
	for _, t := range r.Thresholds {
		if !t.Passed {
			failed = append(failed, fmt.Sprintf("%s %g (was %g)", t.Name, t.Limit, t.Actual))
		}
	}
	if len(failed) == 0 {
		return "thresholds failed"
	}
	return strings.Join(failed, "; ")
}

// Round4 keeps four decimals (ratios, cores).
func Round4(v float64) float64 { return math.Round(v*10000) / 10000 }

// Workload names the run's workload: "" the campaign's own, "chain k" a
// shorter chain (workload.steps), or the baseline grant.
func (r *Run) Workload() string {
	switch {
	case r.Grant != "":
		return string(r.Grant)
	case r.Step:
		return fmt.Sprintf("chain %d", r.Chain)
	}
	return ""
}

// Variant reports a run of another workload than the campaign's own.
func (r *Run) Variant() bool { return r.Workload() != "" }
