// Package stats computes a run's figures from its evidence: exact
// percentiles, the per-run statistics (streamed through a Tally), thresholds,
// warnings and health rules. The campaign across runs is collector/summary.
package stats

import (
	"slices"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/exchange"
)

// Phase of a request: warmup requests are excluded from every figure.
type Phase string

const (
	Warmup   Phase = "warmup"
	Measured Phase = "measured"
)

// RunStatus is how a run ended (pending and running: in the manifest,
// before it did).
type RunStatus string

const (
	StatusPending RunStatus = "pending"
	StatusRunning RunStatus = "running"
	StatusDone    RunStatus = "done"
	StatusAborted RunStatus = "aborted"
	StatusFailed  RunStatus = "failed"
)

// Request is one row of requests.csv.gz: one arrival of the open model.
// Times are microseconds; durations come from the monotonic clock.
type Request struct {
	Agent       int
	Seq         int64
	Phase       Phase
	ScheduledUS int64 // unix µs when the arrival was scheduled
	SendLagUS   int64 // scheduled -> sent (0 and meaningless when dropped)
	DurationUS  int64 // sent -> response fully read (http_req_duration)
	Status      int   // HTTP status, 0 when none
	Outcome     exchange.Outcome
	Detail      string // OAuth error code or status; never token material
	// Description is what the server (error_description) or the transport
	// said about a failure, sanitised; collected per run (RunMeta), not
	// written per row.
	Description string
	// Count is how many dropped arrivals the row stands for when k6 only
	// gave a total (k6 import, kube); 0 means one. Only dropped rows have it.
	Count int64
	// Retried: the request was sent a second time, on a new connection,
	// after the kept-alive one it first went out on turned out closed by
	// the server before any byte of an answer (a keep-alive race, tokex's
	// own HTTP/1.1 client). Its outcome is the second attempt's; the race
	// is not the server's error.
	Retried bool
	// Kind is the grant the request used; "" is a token exchange (every
	// row written before kinds existed is one).
	Kind exchange.Grant
	// Hop is the exchange's place in its delegation chain, 1…MaxChain
	// (workload.chain); 0 outside a chain. The hops of one chain are one
	// arrival: they share agent and seq, and hop k is due (ScheduledUS)
	// when hop k−1's response was read, so its send lag is tokex's own time
	// between the hops.
	Hop int
	// TokenBytes is the length of the issued access_token of a successful
	// request, 0 otherwise.
	TokenBytes int
}

// MaxChain is the longest delegation chain (workload.chain).
const MaxChain = 5

// MaxTokenBytes bounds a row's token_bytes: a response is read up to 1 MiB.
const MaxTokenBytes = 1 << 20

// Grant is the row's kind, the exchange for a row without one.
func (r *Request) Grant() exchange.Grant { return r.Kind.Or() }

// ErrorKey is the request's key in Run.Errors: outcome[:detail].
func (r *Request) ErrorKey() string {
	if r.Detail != "" {
		return string(r.Outcome) + ":" + r.Detail
	}
	return string(r.Outcome)
}

// Dropped reports an arrival that was never sent.
func (r *Request) Dropped() bool { return r.Outcome == exchange.OutcomeDropped }

// Aborted reports an exchange cancelled by the campaign stopping.
func (r *Request) Aborted() bool { return r.Outcome == exchange.OutcomeAborted }

// Arrivals is the number of arrivals the row stands for.
func (r *Request) Arrivals() int64 {
	if r.Count > 1 {
		return r.Count
	}
	return 1
}

// OK reports a successful exchange.
func (r *Request) OK() bool { return r.Outcome == exchange.OutcomeOK }

// Responded reports a request the server answered with an HTTP response of
// any status; refused or reset connections, timeouts, dropped and aborted
// arrivals got none.
func (r *Request) Responded() bool {
	switch r.Outcome {
	case exchange.OutcomeDropped, exchange.OutcomeAborted, exchange.OutcomeConnError, exchange.OutcomeTimeout:
		return false
	}
	return true
}

// Thresholds are the pass/fail limits of each counted run.
type Thresholds struct {
	P95Ms        float64 `json:"p95_ms" yaml:"p95_ms"`               // p95 (send time) must be below
	SuccessRatio float64 `json:"success_ratio" yaml:"success_ratio"` // at least
	MaxDropped   int64   `json:"max_dropped" yaml:"max_dropped"`     // at most
	// AllowWarnings lists invalidating warning codes that do not fail the
	// verdict (the warning is still reported).
	AllowWarnings []WarningCode `json:"allow_warnings,omitempty" yaml:"allow_warnings,omitempty"`
}

// Allows reports whether the thresholds let warning code c pass.
func (t Thresholds) Allows(c WarningCode) bool { return slices.Contains(t.AllowWarnings, c) }

// Known reports whether the limits were given: a p95 limit must be positive,
// so zero means a summary recomputed without them.
func (t Thresholds) Known() bool { return t.P95Ms > 0 }

// RunMeta is what a run's statistics need besides its rows.
type RunMeta struct {
	ID            string
	Index         int
	Round         int
	Sanity        bool
	TargetRPS     float64
	Agents        int
	Replicas      int `json:",omitempty"` // the engine count measured (0: one size, as found)
	Started       time.Time
	MeasuredStart time.Time
	MeasuredEnd   time.Time
	Status        RunStatus
	Reason        string
	Warnings      []Warning `json:",omitempty"` // Run is filled in by ComputeRun
	// ErrorDescriptions are what the server said about the run's failures,
	// collected while it ran (sanitised, bounded).
	ErrorDescriptions []sample.ErrorDescription `json:",omitempty"`
	// SendLagParts splits a k6 agent's send lag (kube driver only).
	SendLagParts *SendLagParts `json:",omitempty"`
	// Verification counts the issued tokens verified (check.verify).
	Verification *sample.Verification `json:",omitempty"`
	// CoolDown is the capacity search's cool-down before the run.
	CoolDown *curve.CoolDown `json:",omitempty"`
	// PromQL is the engine's CPU and memory over the window from an
	// existing Prometheus: when set, the run's engine figure.
	PromQL *sample.PromQL `json:",omitempty"`
	// Grant, Chain and Mix are the run's workload (Run's fields of the
	// same names).
	Grant exchange.Grant `json:",omitempty"`
	Chain int            `json:",omitempty"`
	Step  bool           `json:",omitempty"`
	Mix   *exchange.Mix  `json:",omitempty"`
	// Connections: the agents' connections over the engines (local
	// engines sharing a port).
	Connections *sample.Connections `json:",omitempty"`
}
