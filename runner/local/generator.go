// Package local is the local driver: an in-process open-model load
// generator against a URL or, by default, tokex's reference server started
// as a child process (tokex-engine, found by FindServerProgram), so a campaign
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/runner/config"
)

// Agent is one load agent: its own client id, connection pool and minter,
// like one k6 Pod of the article.
type Agent struct {
	Index    int
	ClientID string
	Secret   string
	Minter   TokenSource
	client   *http.Client // HTTP/2 or unusual targets
	h1       *h1Client    // HTTP/1.1 targets: the lean path
	// The request bytes around Content-Length's value (h1 only).
	headPre, headPost []byte
	// pre are the run's pre-minted tokens, one per arrival (subject.premint);
	// nil: minted as the run goes.
	pre []string

	// Assertions signs each request's client assertion (private_key_jwt);
	// nil for the other methods.
	Assertions AssertionSource
	// Bearer mints the assertions of jwt_bearer arrivals (the user's
	// token for the token endpoint); nil without such arrivals.
	Bearer TokenSource
	// hops are the clients the agent sends as: its own, then the service
	// of each later hop of a chain (prepareClients).
	hops []*hopClient

	// filter withholds descriptions that carry the secret (descFilter).
	filter atomic.Pointer[secretFilter]

	sent, ok, errs, dropped, inFlight atomic.Int64
	work                              chan job
}

// job is one arrival handed to an agent's worker, by value.
type job struct {
	at    time.Time
	seq   int64
	phase stats.Phase
}

// TokenSource mints a fresh subject token for an audience (*subject.Minter).
type TokenSource interface {
	Mint(audience string) (string, error)
}

// AssertionSource signs a fresh client assertion (*subject.Asserter).
type AssertionSource interface {
	Assert() (string, error)
}

// credential mints the next request's subject token and, for
// private_key_jwt, its client assertion after a space (a compact JWS has
// none): both are signed ahead of the request's schedule, in the mint
// pipeline, so neither costs the send path.
func (a *Agent) credential() (string, error) { return a.credentialFor(exchange.GrantExchange) }

// credentialFor is credential for an arrival of grant g: the user's
// subject token (an exchange), its assertion (jwt_bearer) or none
// (client_credentials), with the client assertion after a space.
func (a *Agent) credentialFor(g exchange.Grant) (string, error) {
	var tok string
	var err error
	switch g {
	case exchange.GrantExchange:
		tok, err = a.Minter.Mint(a.ClientID)
	case exchange.GrantJWTBearer:
		tok, err = a.Bearer.Mint(a.ClientID)
	}
	if err != nil || a.Assertions == nil {
		return tok, err
	}
	asr, err := a.Assertions.Assert()
	return tok + " " + asr, err
}

// secretFilter is the filter of one secret.
type secretFilter struct {
	secret string
	f      *exchange.SecretFilter
}

// descFilter withholds descriptions that carry the agent's secret in any
// encoding (base64 of "id:secret" included) or a piece of it; built once
// per secret (a run may change it).
func (a *Agent) descFilter() *exchange.SecretFilter {
	if sf := a.filter.Load(); sf != nil && sf.secret == a.Secret {
		return sf.f
	}
	sf := &secretFilter{secret: a.Secret, f: exchange.NewSecretFilter(a.Secret)}
	a.filter.Store(sf)
	return sf.f
}

// splitCredential is credential's subject token and the client credential
// sent with it: the assertion, else the agent's secret.
func (a *Agent) splitCredential(item string) (tok, cred string) {
	tok, asr, ok := strings.Cut(item, " ")
	if ok {
		return tok, asr
	}
	return tok, a.Secret
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
	// issued token of a random VerifySample of the successes (each picked
	// with that probability, unpredictably: verifySampler).
	Check        exchange.Check
	Verifier     *exchange.IssuedVerifier
	VerifySample float64
	// Work is what arrivals do beyond a single exchange (chains, plain
	// grants, a mix, actor tokens).
	Work Workload

	run     *runWork            // this run's workload
	details *exchange.DetailSet // this run's distinct details, bounded
	sampler *verifySampler      // this run's, nil without verification
	dials   dialWatch           // told of each connection the agents make
}

// dialWatch tells the run's Connector of each connection made to the
// target: the sign of life of a server too slow to answer in time; and
// keeps, for engines sharing a port, which agent holds which local port.
type dialWatch struct {
	fn    atomic.Pointer[func(time.Time)]
	ports portLog
}

// portLog is the agents' connections by local port (bounded: a connection
// per request would make one per exchange; the newest win).
type portLog struct {
	mu    sync.Mutex
	on    bool
	agent map[int]int // local port -> agent
}

// maxPorts bounds portLog: every port of the ephemeral range.
const maxPorts = 1 << 16

func (l *portLog) note(agent int, c net.Conn) {
	if c == nil {
		return
	}
	a, ok := c.LocalAddr().(*net.TCPAddr)
	if !ok {
		return
	}
	l.mu.Lock()
	if l.on {
		if l.agent == nil || len(l.agent) >= maxPorts {
			l.agent = map[int]int{}
		}
		l.agent[a.Port] = agent
	}
	l.mu.Unlock()
}

// Ports is a copy of the agents' connections by local port (nil unless
// kept: TrackPorts).
func (g *Generator) Ports() map[int]int {
	l := &g.dials.ports
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on {
		return nil
	}
	out := make(map[int]int, len(l.agent))
	for p, a := range l.agent {
		out[p] = a
	}
	return out
}

// TrackPorts keeps the agents' connections by local port from now on.
func (g *Generator) TrackPorts() {
	g.dials.ports.mu.Lock()
	g.dials.ports.on = true
	g.dials.ports.mu.Unlock()
}

// set makes f hear of the connections made from now on; nil: nobody.
func (d *dialWatch) set(f func(time.Time)) {
	if f == nil {
		d.fn.Store(nil)
		return
	}
	d.fn.Store(&f)
}

// dialed says agent just made connection c.
func (d *dialWatch) dialed(agent int, c net.Conn) {
	if d == nil {
		return
	}
	d.ports.note(agent, c)
	if f := d.fn.Load(); f != nil {
		(*f)(time.Now())
	}
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
	// ClientCerts are the agents' TLS client certificates, by index
	// (tls_client_auth); nil: none.
	ClientCerts []tls.Certificate
	// KeepAliveIdle is how long a connection may sit idle and still be
	// reused (target.keep_alive_idle); 0: config.DefaultKeepAliveIdle.
	KeepAliveIdle time.Duration
}

// agentTLS is agent i's TLS configuration: o.TLS with its certificate.
func (o TransportOptions) agentTLS(i int) *tls.Config {
	if o.TLS == nil || i >= len(o.ClientCerts) {
		return o.TLS
	}
	c := o.TLS.Clone()
	c.Certificates = []tls.Certificate{o.ClientCerts[i]}
	return c
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

// Connect gives every agent its own connection pool, so that agents share
// no connections (like separate Pods): tokex's HTTP/1.1 client when the
// target cannot negotiate HTTP/2, else an http.Client.
func (g *Generator) Connect(o TransportOptions) {
	u, err := url.Parse(g.URL)
	// tokex's client speaks HTTP/1.1 with keep-alive; HTTP/2 (possibly, by
	// ALPN, or asked for) and a connection per request go through net/http.
	lean := err == nil && !o.NewConnPerRequest && (o.Protocol == "1.1" || o.Protocol == "")
	idle := o.KeepAliveIdle
	if idle <= 0 {
		idle = config.DefaultKeepAliveIdle
	}
	for _, a := range g.Agents {
		a.h1 = nil
		if lean {
			a.h1 = newH1Client(u, o.agentTLS(a.Index), o.HTTP2 && o.Protocol == "", g.Timeout, o.Conns)
		}
		if a.h1 != nil {
			a.h1.idleFor, a.h1.dials, a.h1.agent = idle, &g.dials, a.Index
			g.prepare(a)
			continue
		}
		var tlsCfg *tls.Config
		if t := o.agentTLS(a.Index); t != nil {
			tlsCfg = t.Clone() // net/http edits NextProtos of its transport's config
		}
		dial := (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		tr := &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dial(ctx, network, addr)
				if err == nil {
					g.dials.dialed(a.Index, c)
				}
				return c, err
			},
			TLSClientConfig:     tlsCfg,
			ForceAttemptHTTP2:   o.HTTP2,
			MaxIdleConns:        o.Conns,
			MaxIdleConnsPerHost: o.Conns,
			IdleConnTimeout:     idle,
			TLSHandshakeTimeout: 5 * time.Second,
			DisableCompression:  true,
			DisableKeepAlives:   o.NewConnPerRequest,
			Protocols:           o.protocols(),
		}
		a.client = &http.Client{Transport: tr, Timeout: g.Timeout, CheckRedirect: exchange.NoRedirect}
		g.prepare(a)
	}
}

// Close releases idle connections.
func (g *Generator) Close() {
	for _, a := range g.Agents {
		if a.client != nil {
			a.client.CloseIdleConnections()
		}
		if a.h1 != nil {
			a.h1.close()
		}
	}
}

// Verification is the last run's count of verified tokens, nil without
// check.verify.
func (g *Generator) Verification() *sample.Verification {
	if g.sampler == nil {
		return nil
	}
	return g.sampler.result()
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
func (g *Generator) Status(runID string, now time.Time, state event.AgentState) []event.AgentStatus {
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
// recorded as aborted). rec receives every arrival, including dropped ones;
// it is called from the workers and from one goroutine recording drops,
// never from the scheduler.
func (g *Generator) Run(ctx context.Context, p event.PlannedRun, start time.Time, rec func(*stats.Request)) {
	g.details = &exchange.DetailSet{}
	g.run = g.workFor(p)
	g.sampler = nil
	if g.Verifier != nil && g.VerifySample > 0 {
		g.sampler = newVerifySampler(g.VerifySample) // a fresh key per run
	}
	total := arrivalsIn(p.TargetRPS, p.Total())
	mctx, mcancel := context.WithCancel(ctx)
	defer mcancel()
	pipes := g.pipelines(mctx, p, total)
	var wg sync.WaitGroup
	for _, a := range g.Agents {
		g.prepare(a)
		a.work = make(chan job, g.MaxInFlight)
		for w := 0; w < g.MaxInFlight; w++ {
			go g.worker(ctx, a, a.work, g.run, pipes[a.Index], rec, &wg)
		}
	}
	drops := recordDrops(rec, g.run)
	defer func() {
		wg.Wait()
		drops.close()
		for _, a := range g.Agents {
			close(a.work)
		}
	}()
	sl := newSleeper(offset(p.TargetRPS, 1))
	defer sl.close()
	g.pace(ctx, p, start, total, sl, drops.add, &wg)
}

// agentPipes are an agent's credential pipelines by grant: subject tokens
// for exchanges, assertions for jwt_bearer, client assertions alone for
// client_credentials (nil: the grant needs none).
type agentPipes struct {
	exchange, bearer, plain *pipeline
}

// none is the pipeline of a grant that needs no credential: it always has
// an empty one.
var none = &pipeline{}

func (p *agentPipes) of(g exchange.Grant) *pipeline {
	var pl *pipeline
	switch g {
	case exchange.GrantExchange:
		pl = p.exchange
	case exchange.GrantJWTBearer:
		pl = p.bearer
	default:
		pl = p.plain
	}
	if pl == nil {
		return none
	}
	return pl
}

// pipelines starts each agent's credential pipelines for a run of total
// arrivals: one per grant its arrivals make that needs one, each filled
// for the arrivals of its grant only.
func (g *Generator) pipelines(ctx context.Context, p event.PlannedRun, total int) []*agentPipes {
	nAgents := len(g.Agents)
	perAgent := p.TargetRPS / float64(nAgents)
	ahead := g.MintAhead
	if ahead <= 0 {
		ahead = 500 * time.Millisecond
	}
	pipes := make([]*agentPipes, nAgents)
	for _, a := range g.Agents {
		a.sent.Store(0)
		a.ok.Store(0)
		a.errs.Store(0)
		a.dropped.Store(0)
		n := (total - a.Index + nAgents - 1) / nAgents
		buf := max(4, min(int(math.Ceil(perAgent*ahead.Seconds())), 4096, n))
		ap := &agentPipes{}
		pipes[a.Index] = ap
		for _, kind := range exchange.Grants {
			if !g.draws(kind) || kind == exchange.GrantClientCredentials && a.Assertions == nil {
				continue
			}
			pl := &pipeline{pre: a.pre}
			if kind != exchange.GrantExchange || a.pre == nil {
				// The mint pipeline: bounded, so tokens are fresh and memory is flat.
				// It refills in batches below half, so it wakes once per buf/2 tokens.
				pl = &pipeline{ch: make(chan string, buf), low: make(chan struct{}, 1)}
				go pl.fill(ctx, a, kind, g.run, n)
			}
			switch kind {
			case exchange.GrantExchange:
				ap.exchange = pl
			case exchange.GrantJWTBearer:
				ap.bearer = pl
			default:
				ap.plain = pl
			}
		}
	}
	return pipes
}

// draws reports a grant the run's arrivals may make.
func (g *Generator) draws(kind exchange.Grant) bool {
	w := g.run
	if w.draw == nil {
		return w.grant == kind
	}
	for _, x := range g.Work.Mix.Weights {
		if x.Grant == kind {
			return true
		}
	}
	return false
}

// waiter waits until an arrival's time (sleeper; a fake clock in tests).
type waiter interface {
	until(ctx context.Context, at time.Time)
}

// handoff is told when a job was handed to a worker (preciseSleeper).
type handoff interface{ dispatched() }

// pace is the scheduler: arrival k at start + k/rate to agent k mod N, to a
// free worker, or dropped when the agent's in-flight cap is full. It never
// allocates and never blocks but in w: a job goes by value into a queue
// with room for the whole cap, a drop to drop (which queues it), and the
// token, the request and its row are the worker's.
func (g *Generator) pace(ctx context.Context, p event.PlannedRun, start time.Time, total int, w waiter,
	drop func(*Agent, job), wg *sync.WaitGroup) {
	nAgents := len(g.Agents)
	cap64 := int64(g.MaxInFlight)
	h, _ := w.(handoff)
	for k := 0; k < total; k++ {
		if ctx.Err() != nil {
			return
		}
		at := start.Add(offset(p.TargetRPS, k))
		w.until(ctx, at)
		a := g.Agents[k%nAgents]
		j := job{at: at, seq: int64(k / nAgents), phase: stats.Measured}
		if at.Sub(start) < p.Warmup {
			j.phase = stats.Warmup
		}
		if a.inFlight.Load() >= cap64 {
			a.dropped.Add(1)
			drop(a, j)
			continue
		}
		// Below the cap a worker is free or about to be: the buffered queue
		// never holds more than MaxInFlight jobs, so this never blocks.
		a.inFlight.Add(1)
		wg.Add(1)
		a.work <- j
		if h != nil {
			h.dispatched()
		}
	}
}

// worker serves one agent's arrivals. Workers are long-lived (like k6's
// pre-allocated VUs), so their stacks and request buffers are grown once,
// not per request.
// w is the run's work, given at the start: a worker that starts late, even
// after its run ended, never reads the next run's.
func (g *Generator) worker(ctx context.Context, a *Agent, work <-chan job, w *runWork, pipes *agentPipes, rec func(*stats.Request), wg *sync.WaitGroup) {
	var buf []byte
	for j := range work {
		g.serve(ctx, a, j, w, pipes, rec, &buf)
		a.inFlight.Add(-1)
		wg.Done()
	}
}

// dropRecorder records dropped arrivals off the scheduler's path: the
// evidence writer takes a lock and compresses, which the scheduler must
// not wait for.
type dropRecorder struct {
	ch   chan droppedArrival
	done chan struct{}
}

type droppedArrival struct {
	agent int
	j     job
}

// dropQueue is how many dropped arrivals may wait to be recorded before
// the scheduler waits for the recorder (which then is as far behind).
const dropQueue = 8192

func recordDrops(rec func(*stats.Request), w *runWork) *dropRecorder {
	d := &dropRecorder{ch: make(chan droppedArrival, dropQueue), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		for x := range d.ch {
			r := &stats.Request{Agent: x.agent, Seq: x.j.seq, Phase: x.j.phase, ScheduledUS: x.j.at.UnixMicro(),
				Outcome: exchange.OutcomeDropped}
			switch kind := w.kindOf(x.agent, x.j.seq); {
			case kind != exchange.GrantExchange:
				r.Kind = kind
			case w.chain > 1:
				r.Hop = 1 // the chain never began
			}
			rec(r)
		}
	}()
	return d
}

func (d *dropRecorder) add(a *Agent, j job) { d.ch <- droppedArrival{agent: a.Index, j: j} }

// close returns once every dropped arrival is recorded.
func (d *dropRecorder) close() {
	close(d.ch)
	<-d.done
}

// prepare builds agent a's request bytes around Content-Length's value for
// its current client id and secret. Run calls it again before any worker
// starts, so a changed secret is what gets sent.
func (g *Generator) prepare(a *Agent) {
	g.prepareClients(a)
}

// headers are the request's headers besides Host, User-Agent and
// Content-Length, sorted by name as net/http writes them, for client id
// with secret.
func (g *Generator) headers(id, secret string) [][2]string {
	h := [][2]string{{"Accept", "application/json"}}
	if g.Body.Auth() == exchange.AuthBasic {
		h = append(h, [2]string{"Authorization", exchange.BasicAuth(id, secret)})
	}
	return append(h, [2]string{"Content-Type", "application/x-www-form-urlencoded"})
}

// send performs one single exchange with a token from tokens and fills
// r; buf is the caller's scratch (Ping).
func (g *Generator) send(ctx context.Context, a *Agent, at time.Time, r *stats.Request, tokens *pipeline, buf *[]byte) {
	item, ok := tokens.take(ctx)
	if !ok {
		r.Outcome = exchange.OutcomeAborted
		r.SendLagUS = time.Since(at).Microseconds()
		return
	}
	tok, cred := a.splitCredential(item)
	req := request{grant: exchange.GrantExchange, chain: 1, body: g.Body, client: a.clientAt(1), token: tok, cred: cred}
	if g.Work.Actors != nil {
		req.actor = g.Work.Actors.token(ctx, req.client.id)
	}
	g.sendOne(ctx, a, at, r, req, buf)
}

// sendOne sends one request due at and fills r; it returns the issued
// access token of a success and when the answer was read.
func (g *Generator) sendOne(ctx context.Context, a *Agent, at time.Time, r *stats.Request, req request, buf *[]byte) (string, time.Time) {
	var outcome exchange.Outcome
	var detail, desc, issued string
	answered := func(status int, b []byte) {
		outcome, detail, desc, issued = g.classify(a, r, req, status, b)
		detail = g.details.Admit(exchange.Scrub(detail, a.Secret, req.token, req.cred, req.actor))
	}
	sent := time.Now()
	a.sent.Add(1)
	var err error
	if a.h1 != nil {
		*buf = g.request((*buf)[:0], req)
		r.Status, r.Retried, err = a.h1.do(ctx, *buf, answered)
	} else {
		r.Status, err = g.doHTTP(ctx, a, req, answered)
	}
	if err != nil {
		outcome, desc, issued = exchange.ClassifyErr(ctx, err), exchange.TransportDescription(err), ""
	}
	done := time.Now()
	r.SendLagUS = sent.Sub(at).Microseconds()
	r.DurationUS = done.Sub(sent).Microseconds()
	r.Outcome, r.Detail = outcome, detail
	if desc != "" && outcome != exchange.OutcomeOK && outcome != exchange.OutcomeAborted {
		r.Description = a.descFilter().Sanitize(desc, req.token, req.cred, req.actor)
	}
	if outcome == exchange.OutcomeOK {
		a.ok.Add(1)
		r.TokenBytes = min(len(issued), stats.MaxTokenBytes)
	} else if outcome != exchange.OutcomeAborted {
		a.errs.Add(1)
	}
	return issued, done
}

// classify applies the grant's success check and, to a sample, the
// verification of the issued token; desc is why a response failed, issued
// the access token of a success.
func (g *Generator) classify(a *Agent, r *stats.Request, req request, status int, b []byte) (exchange.Outcome, string, string, string) {
	outcome, detail, why := g.Check.ForGrant(req.grant).Classify(status, b)
	if s := g.sampler; outcome == exchange.OutcomeOK && s != nil && s.pick(a.Index, r.Seq) {
		err := g.verify(a, req, b)
		s.count(r.Phase, err != nil)
		if err != nil {
			return exchange.OutcomeBadResponse, "200", err.Error(), ""
		}
	}
	if why == "" {
		why = exchange.Description(status, b)
	}
	var issued string
	if outcome == exchange.OutcomeOK {
		issued, _ = exchange.AccessToken(b) // copied out of b, which the connection reuses
	}
	return outcome, detail, why, issued
}

// request appends the whole HTTP/1.1 request req.
func (g *Generator) request(dst []byte, req request) []byte {
	dst = append(dst, req.client.headPre...)
	n := len(dst)
	dst = req.body.AppendFormActor(dst, req.token, req.actor, req.client.id, req.cred)
	// The body is built where it ends up; its length goes before it.
	var num [20]byte
	cl := strconv.AppendInt(num[:0], int64(len(dst)-n), 10)
	shift := len(cl) + len(req.client.headPost)
	dst = append(dst, make([]byte, shift)...)
	copy(dst[n+shift:], dst[n:len(dst)-shift])
	copy(dst[n:], cl)
	copy(dst[n+len(cl):], req.client.headPost)
	return dst
}

// doHTTP sends one request with net/http. The status is set when a
// response arrived, also when reading its body failed.
func (g *Generator) doHTTP(ctx context.Context, a *Agent, req request, answered func(int, []byte)) (int, error) {
	body := string(req.body.AppendFormActor(nil, req.token, req.actor, req.client.id, req.cred))
	hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL, strings.NewReader(body))
	for _, h := range g.headers(req.client.id, a.Secret) {
		hr.Header.Set(h[0], h[1])
	}
	resp, err := a.client.Do(hr)
	if err != nil {
		return 0, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err == nil {
		answered(resp.StatusCode, b)
	}
	return resp.StatusCode, err
}

// pipeline is an agent's queue of subject tokens minted ahead, or its
// run's pre-minted tokens.
type pipeline struct {
	ch  chan string
	low chan struct{} // signalled when the queue falls to half

	pre  []string // pre-minted: taken in order, each dropped once taken
	next atomic.Int64
}

// take returns the next token, or false when ctx ended first.
func (p *pipeline) take(ctx context.Context) (string, bool) {
	if p == none {
		return "", ctx.Err() == nil
	}
	if p.pre != nil {
		if ctx.Err() != nil {
			return "", false
		}
		i := p.next.Add(1) - 1
		if i >= int64(len(p.pre)) {
			return "", ctx.Err() == nil // more arrivals than tokens cannot happen; sent as-is it fails visibly
		}
		tok := p.pre[i]
		p.pre[i] = "" // its memory goes as the run goes
		return tok, true
	}
	select {
	case tok := <-p.ch:
		p.taken()
		return tok, true
	case <-ctx.Done():
		return "", false
	}
}

// fill mints the credentials of the agent's arrivals (seq 0 … n−1) of
// grant kind, in order.
func (p *pipeline) fill(ctx context.Context, a *Agent, kind exchange.Grant, w *runWork, n int) {
	for i := 0; i < n; {
		for ; i < n && len(p.ch) < cap(p.ch); i++ {
			if w.draw != nil && w.draw(a.Index, int64(i)) != kind {
				continue
			}
			tok, err := a.credentialFor(kind)
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
