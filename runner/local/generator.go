// Package local is the local driver: an in-process open-model load
// generator against a URL or, by default, tokex's reference server started
// as a child process (tokex-engine, found by FindEngine), so a campaign
// runs on a bare laptop.
package local

import (
	"context"
	"crypto/tls"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// Agent is one load agent: its own client id, connection pool and minter,
// like one k6 Pod of the article.
type Agent struct {
	Index    int
	ClientID string
	Secret   string
	Minter   TokenSource
	client   *http.Client

	sent, ok, errs, dropped, inFlight atomic.Int64
	work                              chan job
}

// job is one arrival handed to an agent's worker.
type job struct {
	at     time.Time
	r      *stats.Request
	tokens *pipeline
	done   func()
}

// TokenSource mints a fresh subject token for an audience (*subject.Minter).
type TokenSource interface {
	Mint(audience string) (string, error)
}

// Generator drives constant-arrival-rate load (an open model): arrival i of
// an agent is scheduled at a fixed time whatever happened to earlier ones,
// and an arrival that finds the agent's in-flight cap full is dropped and
// counted, never delayed.
type Generator struct {
	URL         string
	Body        exchange.Body
	Agents      []*Agent
	MaxInFlight int
	Timeout     time.Duration
	// MintAhead is how far ahead of its schedule a token may be minted.
	MintAhead time.Duration
	// Check makes a 200 a success; Verifier, when set, also checks the
	// issued token of one success in VerifyEvery of each agent.
	Check       exchange.Check
	Verifier    *exchange.IssuedVerifier
	VerifyEvery int64

	details *exchange.DetailSet // this run's distinct details, bounded
}

// TransportOptions configure each agent's own connection pool.
type TransportOptions struct {
	TLS   *tls.Config
	HTTP2 bool // HTTP/2 when TLS offers it
	// Protocol "1.1", "2" or "h2c" is that protocol only (overrides HTTP2).
	Protocol string
	// NewConnPerRequest closes every connection after its one request.
	NewConnPerRequest bool
	Conns             int
}

// protocols is the transport's protocol set for o.
func (o TransportOptions) protocols() *http.Protocols {
	var p http.Protocols
	switch o.Protocol {
	case "1.1":
		p.SetHTTP1(true)
	case "2":
		p.SetHTTP2(true)
	case "h2c":
		p.SetUnencryptedHTTP2(true)
	default:
		return nil
	}
	return &p
}

// Connect gives every agent its own http.Client, so that agents share no
// connections (like separate Pods).
func (g *Generator) Connect(o TransportOptions) {
	for _, a := range g.Agents {
		var tlsCfg *tls.Config
		if o.TLS != nil {
			tlsCfg = o.TLS.Clone() // net/http edits NextProtos of its transport's config
		}
		tr := &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSClientConfig:     tlsCfg,
			ForceAttemptHTTP2:   o.HTTP2,
			MaxIdleConns:        o.Conns,
			MaxIdleConnsPerHost: o.Conns,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: 5 * time.Second,
			DisableCompression:  true,
			DisableKeepAlives:   o.NewConnPerRequest,
			Protocols:           o.protocols(),
		}
		a.client = &http.Client{Transport: tr, Timeout: g.Timeout, CheckRedirect: exchange.NoRedirect}
	}
}

// Close releases idle connections.
func (g *Generator) Close() {
	for _, a := range g.Agents {
		if a.client != nil {
			a.client.CloseIdleConnections()
		}
	}
}

// InFlight is the number of requests under way across agents.
func (g *Generator) InFlight() int64 {
	var n int64
	for _, a := range g.Agents {
		n += a.inFlight.Load()
	}
	return n
}

// Status snapshots the agents' counters.
func (g *Generator) Status(runID string, now time.Time, state string) []event.AgentStatus {
	out := make([]event.AgentStatus, len(g.Agents))
	for i, a := range g.Agents {
		out[i] = event.AgentStatus{At: now, RunID: runID, Agent: a.Index, Name: a.ClientID, State: state,
			Sent: a.sent.Load(), OK: a.ok.Load(), Errors: a.errs.Load(), Dropped: a.dropped.Load()}
	}
	return out
}

// arrivalsIn counts arrivals k ≥ 0 with k/rate < total.
func arrivalsIn(rate float64, total time.Duration) int {
	n := int(math.Ceil(total.Seconds() * rate))
	for n > 0 && offset(rate, n-1) >= total {
		n--
	}
	return n
}

// offset is the scheduled time of global arrival k: exactly k/rate after
// the start. Arrival k belongs to agent k mod N, so each agent runs at
// rate/N and the agents are evenly staggered.
func offset(rate float64, k int) time.Duration {
	return time.Duration(float64(k) / rate * float64(time.Second))
}

// Run executes one run starting at start. It returns when every arrival has
// been sent and answered, or ctx ends (in-flight requests are cancelled and
// recorded as aborted). rec receives every arrival, including dropped ones.
func (g *Generator) Run(ctx context.Context, p event.PlannedRun, start time.Time, rec func(*stats.Request)) {
	nAgents := len(g.Agents)
	g.details = &exchange.DetailSet{}
	total := arrivalsIn(p.TargetRPS, p.Total())
	perAgent := p.TargetRPS / float64(nAgents)
	ahead := g.MintAhead
	if ahead <= 0 {
		ahead = 500 * time.Millisecond
	}
	mctx, mcancel := context.WithCancel(ctx)
	defer mcancel()
	pipes := make([]*pipeline, nAgents)
	for _, a := range g.Agents {
		a.sent.Store(0)
		a.ok.Store(0)
		a.errs.Store(0)
		a.dropped.Store(0)
		n := (total - a.Index + nAgents - 1) / nAgents
		buf := max(4, min(int(math.Ceil(perAgent*ahead.Seconds())), 4096, n))
		// The mint pipeline: bounded, so tokens are fresh and memory is flat.
		// It refills in batches below half, so it wakes once per buf/2 tokens.
		pl := &pipeline{ch: make(chan string, buf), low: make(chan struct{}, 1)}
		pipes[a.Index] = pl
		go pl.fill(mctx, a, n)
	}

	var wg sync.WaitGroup
	for _, a := range g.Agents {
		a.work = make(chan job, g.MaxInFlight)
		for w := 0; w < g.MaxInFlight; w++ {
			go g.worker(ctx, a, a.work)
		}
	}
	defer func() {
		wg.Wait()
		for _, a := range g.Agents {
			close(a.work)
		}
	}()
	// One scheduler for all agents, with a precise sleep: Go's timers can
	// wake a millisecond late, which would be send lag.
	sl := newSleeper()
	cap64 := int64(g.MaxInFlight)
	for k := 0; k < total; k++ {
		if ctx.Err() != nil {
			return
		}
		at := start.Add(offset(p.TargetRPS, k))
		sl.until(ctx, at)
		a := g.Agents[k%nAgents]
		phase := stats.Measured
		if at.Sub(start) < p.Warmup {
			phase = stats.Warmup
		}
		r := &stats.Request{Agent: a.Index, Seq: int64(k / nAgents), Phase: phase, ScheduledUS: at.UnixMicro()}
		if a.inFlight.Load() >= cap64 {
			r.Outcome = string(exchange.OutcomeDropped)
			a.dropped.Add(1)
			rec(r)
			continue
		}
		// Below the cap a worker is free or about to be: the buffered queue
		// never holds more than MaxInFlight jobs, so this never blocks.
		a.inFlight.Add(1)
		wg.Add(1)
		a.work <- job{at: at, r: r, tokens: pipes[a.Index], done: func() { rec(r); a.inFlight.Add(-1); wg.Done() }}
	}
}

// worker serves one agent's arrivals. Workers are long-lived (like k6's
// pre-allocated VUs), so their stacks are grown once, not per request.
func (g *Generator) worker(ctx context.Context, a *Agent, work <-chan job) {
	for j := range work {
		g.send(ctx, a, j.at, j.r, j.tokens)
		j.done()
	}
}

// send performs one exchange and fills r.
func (g *Generator) send(ctx context.Context, a *Agent, at time.Time, r *stats.Request, tokens *pipeline) {
	var tok string
	select {
	case tok = <-tokens.ch:
		tokens.taken()
	case <-ctx.Done():
		r.Outcome = string(exchange.OutcomeAborted)
		r.SendLagUS = time.Since(at).Microseconds()
		return
	}
	body := g.Body.Form(tok, a.ClientID, a.Secret)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if g.Body.Auth() == exchange.AuthBasic {
		req.Header.Set("Authorization", exchange.BasicAuth(a.ClientID, a.Secret))
	}
	sent := time.Now()
	a.sent.Add(1)
	resp, err := a.client.Do(req)
	var outcome exchange.Outcome
	var detail, desc string
	if err == nil {
		b, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		r.Status = resp.StatusCode
		if rerr != nil {
			outcome, desc = exchange.ClassifyErr(ctx, rerr), exchange.TransportDescription(rerr)
		} else {
			outcome, detail, desc = g.classify(a, r.Seq, resp.StatusCode, b)
			detail = g.details.Admit(exchange.Scrub(detail, a.Secret, tok))
		}
	} else {
		outcome, desc = exchange.ClassifyErr(ctx, err), exchange.TransportDescription(err)
	}
	done := time.Now()
	r.SendLagUS = sent.Sub(at).Microseconds()
	r.DurationUS = done.Sub(sent).Microseconds()
	r.Outcome, r.Detail = string(outcome), detail
	if desc != "" && outcome != exchange.OutcomeOK && outcome != exchange.OutcomeAborted {
		r.Description = exchange.SanitizeDescription(desc, a.Secret, url.QueryEscape(a.Secret),
			strings.TrimPrefix(exchange.BasicAuth(a.ClientID, a.Secret), "Basic "), tok)
	}
	if outcome == exchange.OutcomeOK {
		a.ok.Add(1)
	} else if outcome != exchange.OutcomeAborted {
		a.errs.Add(1)
	}
}

// classify applies the success check and, to a sample, the verification of
// the issued token; desc is why a response failed.
func (g *Generator) classify(a *Agent, seq int64, status int, b []byte) (exchange.Outcome, string, string) {
	outcome, detail, why := g.Check.Classify(status, b)
	if outcome == exchange.OutcomeOK && g.Verifier != nil && g.VerifyEvery > 0 && seq%g.VerifyEvery == 0 {
		if err := g.Verifier.Verify(b, a.ClientID); err != nil {
			return exchange.OutcomeBadResponse, "200", err.Error()
		}
	}
	if why == "" {
		why = exchange.Description(status, b)
	}
	return outcome, detail, why
}

// pipeline is an agent's queue of pre-minted subject tokens.
type pipeline struct {
	ch  chan string
	low chan struct{} // signalled when the queue falls to half
}

func (p *pipeline) fill(ctx context.Context, a *Agent, n int) {
	for i := 0; i < n; {
		for ; i < n && len(p.ch) < cap(p.ch); i++ {
			tok, err := a.Minter.Mint(a.ClientID)
			if err != nil {
				tok = "" // cannot happen with a valid key; sent as-is it fails visibly
			}
			p.ch <- tok // only this goroutine sends, so it cannot block here
			// Minting is CPU-bound: let latency-sensitive sends go first.
			runtime.Gosched()
		}
		if i == n {
			return
		}
		select {
		case <-p.low:
		case <-ctx.Done():
			return
		}
	}
}

// taken tells the minter a token left the queue.
func (p *pipeline) taken() {
	if len(p.ch) <= cap(p.ch)/2 {
		select {
		case p.low <- struct{}{}:
		default:
		}
	}
}
