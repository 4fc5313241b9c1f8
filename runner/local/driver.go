package local

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/forecast"
	"github.com/tokex-dev/tokex/collector/proc"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/subject"
)

// Driver runs campaigns in-process against the embedded server or a URL.
type Driver struct {
	Cfg        config.Campaign
	CampaignID string
	Secret     string
	SubjectKey *jose.Key
	// ActorKey signs the agents' actor tokens (subject.actor minted).
	ActorKey *jose.Key
	// ClientKeys are the agents' private_key_jwt keys (Campaign.ClientKeys).
	ClientKeys []*jose.Key
	// ClientCerts are the agents' tls_client_auth certificates.
	ClientCerts *config.ClientCerts
	// Program is the embedded server's program; empty: FindServerProgram's choice
	// with ProgramSearch (its Explicit defaults to target.embedded.engine).
	Program       ServerProgram
	ProgramSearch ProgramSearch
	// PID overrides target.pid and target.pid_file (tokex run --pid): a
	// process id, or PIDListen for the process listening on the target's
	// port. A resumed campaign whose server restarted gives its new PID.
	PID string
	// Recorded is the engine process a resumed campaign sampled last: the
	// PID target.pid names is refused when it now names another process.
	Recorded *evidence.EngineProcess
	// HostCheck is how long the machine is sampled before the first run
	// (0: not at all); WaitQuiet how long to wait, at most, for it to be
	// quiet when other processes use most of its cores (0: say so, and run).
	HostCheck, WaitQuiet time.Duration
	// othersSampler replaces the host's /proc in tests.
	sampleOthers othersSampler
	// Fleet, when set, is the engines a campaign over engine counts
	// scales instead of the embedded server's (tests: a server of known
	// cost).
	Fleet Fleet

	gen      *Generator
	pre      *preminter // subject.premint
	emb      *Embedded
	forecast forecast.Forecast
	target   string
	cancel   context.CancelFunc
	samplers sync.WaitGroup
	engineAt atomic.Int64 // unix µs of the latest engine sample
	// engine is the sampled process and how it was found (EngineProcess).
	engine *evidence.EngineProcess
	// gone is closed when the sampled engine process exited (goneErr why).
	gone     chan struct{}
	goneOnce sync.Once
	goneErr  error

	// A campaign over engine counts (scale.go): the engines, their CPU
	// sets, and their sampler (restarted with each count).
	fleet   Fleet
	pins    [][]int
	pinNote string
	engStop context.CancelFunc
	engWG   sync.WaitGroup
}

// EngineProcess implements runner.EngineReporter.
func (d *Driver) EngineProcess() *evidence.EngineProcess { return d.engine }

var _ runner.Driver = (*Driver)(nil)

// Name implements runner.Driver.
func (d *Driver) Name() string { return "local" }

// Target implements runner.Driver.
func (d *Driver) Target() string { return d.target }

// InFlight implements runner.Driver.
func (d *Driver) InFlight() int64 {
	if d.gen == nil {
		return 0
	}
	return d.gen.InFlight()
}

// Start launches the embedded server (unless a URL is configured), builds
// the agents and starts resource sampling.
func (d *Driver) Start(ctx context.Context, out runner.Output) error {
	c := d.Cfg
	tlsCfg, targets, err := d.startTarget(ctx, out)
	if err != nil {
		return err
	}
	if err := d.newGenerator(ctx, tlsCfg, out); err != nil {
		return err
	}

	sample := d.sampleOthers
	if sample == nil {
		sample = procOthers(d.ownPIDs()...)
	}
	if err := d.checkHost(ctx, out, sample); err != nil {
		return err
	}
	enginePID := 0
	if d.emb != nil {
		enginePID = d.emb.PID
	}
	if d.fleet != nil {
		enginePID = d.fleet.Engines()[0].PID
		d.gen.TrackPorts()
	}
	fc, err := d.preflight(ctx, enginePID)
	if err != nil {
		fc = forecast.Forecast{Method: "calibration failed: " + err.Error()}
	}
	d.forecast = fc
	out.Emit(event.Forecast{At: time.Now(), Stages: c.Stages, Estimate: fc})
	d.startSamplers(targets, out)
	return nil
}

// startTarget starts the embedded server, or checks how a remote target's
// engine is measured; it returns the TLS configuration that trusts the
// target and the processes to sample.
func (d *Driver) startTarget(ctx context.Context, out runner.Output) (*tls.Config, []proc.Target, error) {
	c := d.Cfg
	if len(c.ReplicaCounts()) > 0 {
		d.pins, d.pinNote = cpuSets(slices.Max(c.ReplicaCounts()))
	}
	if d.Fleet != nil {
		return d.startFleet(out)
	}
	if c.Embedded() {
		return d.startEmbedded(ctx, out)
	}
	d.target = c.Target.URL
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.Target.InsecureSkipVerify} //nolint:gosec // opt-in
	if c.Target.CAFile != "" {
		pem, err := tlscert.ReadPEM(c.Target.CAFile)
		if err != nil {
			return nil, nil, fmt.Errorf("target.ca_file: %w", err)
		}
		tlsCfg.RootCAs = tlscert.Pool(pem)
	}
	src, how, err := d.engineSource(tlsCfg)
	if err != nil {
		return nil, nil, err
	}
	if src == nil {
		out.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "warn",
			Message: "remote target without target.pid, target.cgroup or target.metrics_url: engine CPU is not measured"})
		return tlsCfg, nil, nil
	}
	out.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "info", Message: "engine CPU and memory: " + how})
	d.gone = make(chan struct{})
	return tlsCfg, []proc.Target{{Role: "engine", Source: src, Exited: d.engineExited}}, nil
}

// startEmbedded finds the embedded server's program (FindServerProgram)
// and starts it.
func (d *Driver) startEmbedded(ctx context.Context, out runner.Output) (*tls.Config, []proc.Target, error) {
	c := d.Cfg
	logf := func(source string) func(level, msg string) {
		return func(level, msg string) {
			out.Emit(event.Log{At: time.Now(), Source: source, Level: level, Message: msg})
		}
	}
	if d.Program.Path == "" {
		s := d.ProgramSearch
		if s.Explicit == "" {
			s.Explicit = c.Target.Embedded.Engine
		}
		var err error
		if d.Program, err = FindServerProgram(s); err != nil {
			return nil, nil, fmt.Errorf("embedded server: %w", err)
		}
	}
	useTLS := c.Target.Embedded.TLS == nil || *c.Target.Embedded.TLS
	var ca []byte
	var dn string
	if d.ClientCerts != nil {
		ca, dn = d.ClientCerts.CAPEM, d.ClientCerts.SubjectDN
	}
	emb, err := StartEmbedded(ctx, EmbeddedOptions{
		Program: d.Program, Clients: c.Agents.Count, ClientPrefix: c.Agents.ClientIDPrefix, Secret: d.Secret,
		SubjectKey: d.SubjectKey, SubjectIssuer: c.Subject.Issuer, SubjectLifetime: d.subjectLifetime(), SigningAlg: c.Target.Embedded.SigningAlg,
		TLS: useTLS, Resources: append(append([]string{}, c.Request.Resources...), c.Request.Audiences...),
		Scopes: strings.Fields(c.Request.Scope), BaseConfig: c.Target.Embedded.Config, Log: logf("server"),
		ClientJWKS: d.clientJWKS(), ClientCA: ca, ClientSubjectDN: dn,
		Services: c.HopClients(), GrantTypes: grantTypes(c), ActorKey: d.actorKey(), ActorIssuer: c.ActorIssuer(), PeerAudiences: c.Workload.ChainLen() > 1,
		Fleet: len(c.ReplicaCounts()) > 0, CPUs: at(d.pins, 0),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("embedded server: %w", err)
	}
	d.emb, d.target = emb, emb.URL
	msg, level := fmt.Sprintf("embedded server %s (%s; %s)", d.Program.Path, d.Program.How, emb.Version), "info"
	if d.Program.Inflated {
		msg, level = msg+": "+InflatedDetail, "warn"
	}
	logf("tokex")(level, msg)
	if emb.Fleet != nil {
		d.fleet = emb.Fleet
		return emb.TLS, fleetTargets(d.fleet.Engines()), nil
	}
	return emb.TLS, []proc.Target{{Role: "engine", Source: proc.Process{PID: emb.PID, Label: "tokex-serve"}}}, nil
}

// startSamplers samples the targets, and the generator with the host,
// until Close.
func (d *Driver) startSamplers(targets []proc.Target, out runner.Output) {
	c := d.Cfg
	sctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	warn := func(msg string) { out.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "warn", Message: msg}) }
	d.sampleEngines(targets, out)
	d.samplers.Add(1)
	// The generator is sampled with the host, at the same instant, so its
	// CPU can be held against the cores it may use and the host's load.
	go func() {
		defer d.samplers.Done()
		proc.SampleHost(sctx, c.Sampling, &proc.HostSampler{PID: os.Getpid(), Label: "tokex-generator",
			MaxProcs: func() int { return runtime.GOMAXPROCS(0) }}, out.Emit, warn)
	}()
}

// engineSource is how a remote target's engine is measured, checked with a
// first reading so a wrong pid, cgroup or endpoint stops the campaign before
// it starts. TOKEX_METRICS_URL overrides target.metrics_url (credentials
// stay out of the evidence, and a resumed campaign finds them again).
func (d *Driver) engineSource(tlsCfg *tls.Config) (proc.Source, string, error) {
	t := d.Cfg.Target
	id, found, err := d.enginePID()
	if err != nil {
		return nil, "", err
	}
	var src proc.Source
	var how, field string
	switch {
	case id.PID > 0:
		field = found
		s, err := proc.ForProcess(id, "")
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", field, err)
		}
		src, d.engine = s, engineRecord(id, found)
		if cg, ok := s.(*proc.PIDCgroup); ok {
			how = fmt.Sprintf("cgroup %s, the process %s's own (cpu.stat usage_usec)", cg.Dir, id)
		} else {
			how = fmt.Sprintf("process %s and all its descendants, from /proc", id)
		}
		how += "; found by " + found
	case t.Cgroup != "":
		field, src = "target.cgroup", proc.Cgroup{Dir: t.Cgroup}
		how = "cgroup " + t.Cgroup + " (cpu.stat usage_usec)"
	case t.MetricsURL != "" || os.Getenv("TOKEX_METRICS_URL") != "":
		u := t.MetricsURL
		if env := os.Getenv("TOKEX_METRICS_URL"); env != "" {
			u = env
		}
		tr := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsCfg.Clone(), MaxIdleConns: 1}
		client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		// A saturated server answers its metrics late too: allow as long as
		// Prometheus does by default; a slow scrape delays no other sample.
		p := &proc.Prometheus{URL: u, Client: client, Timeout: 10 * time.Second}
		field, src = "target.metrics_url", p
		how = "Prometheus process metrics of " + p.Name()
	default:
		return nil, "", nil
	}
	if _, err := src.Read(); err != nil {
		return nil, "", fmt.Errorf("%s: %w", field, err)
	}
	return src, how, nil
}

// Run implements runner.Driver: one run of the open-model generator.
func (d *Driver) Run(ctx context.Context, p event.PlannedRun, out runner.Output) (runner.RunResult, error) {
	if err := d.prepareRun(ctx, p); err != nil {
		return runner.RunResult{Started: time.Now(), MeasuredStart: time.Now(), MeasuredEnd: time.Now()}, err
	}
	defer d.dropPremint()
	// Start on the next 100 ms boundary so the schedule has room to settle.
	start := time.Now().Add(100 * time.Millisecond)
	res := runner.RunResult{Started: start, MeasuredStart: start.Add(p.Warmup), MeasuredEnd: start.Add(p.Total())}
	if s, ok := out.(runner.Scheduler); ok {
		s.Schedule(start)
	}
	if w := d.forecast.Warning(p.ID, p.TargetRPS); w != nil {
		res.Warnings = append(res.Warnings, *w)
	}
	if d.emb != nil && d.Program.Inflated {
		res.Warnings = append(res.Warnings, stats.Warn(stats.WarnEngineMemoryInflated, p.ID, InflatedDetail))
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var died atomic.Pointer[error]
	go d.watchEngine(rctx, cancel, &died)
	// Phase change and agent status, driven by the clock.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		phase := time.NewTimer(time.Until(res.MeasuredStart))
		defer phase.Stop()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		if p.Warmup <= 0 {
			out.Emit(event.PhaseChanged{At: res.MeasuredStart, RunID: p.ID, Phase: stats.Measured})
		}
		for {
			select {
			case <-stop:
				return
			case <-phase.C:
				if p.Warmup > 0 {
					out.Emit(event.PhaseChanged{At: res.MeasuredStart, RunID: p.ID, Phase: stats.Measured})
				}
			case t := <-tick.C:
				for _, s := range d.gen.Status(p.ID, t, event.AgentRunning) {
					out.Emit(s)
				}
			}
		}
	}()
	if cn, ok := out.(runner.Connector); ok { // connections are signs of life
		d.gen.dials.set(cn.Connected)
		defer d.gen.dials.set(nil)
	}
	d.gen.Run(rctx, p, start, out.Record)
	res.Verification = d.gen.Verification()
	d.actorsAfter(p, out)
	res.Connections = d.connections()
	close(stop)
	wg.Wait()
	for _, s := range d.gen.Status(p.ID, time.Now(), event.AgentFinished) {
		out.Emit(s)
	}
	if err := died.Load(); err != nil {
		if now := time.Now(); now.Before(res.MeasuredEnd) {
			res.MeasuredEnd = now // the run ends where the engine did
		}
		if res.MeasuredEnd.Before(res.MeasuredStart) {
			res.MeasuredEnd = res.MeasuredStart // it died in the warmup
		}
		res.Warnings = append(res.Warnings, stats.Warn(stats.WarnEngineExited, "", (*err).Error()))
		return res, *err
	}
	d.awaitEngineSample(ctx, res.MeasuredEnd)
	if ctx.Err() != nil && time.Now().Before(res.MeasuredEnd) {
		res.MeasuredEnd = time.Now()
		return res, ctx.Err()
	}
	return res, nil
}

// watchEngine stops the run (cancel) when the engine exits: the embedded
// server, or the process sampled for a remote target.
func (d *Driver) watchEngine(rctx context.Context, cancel context.CancelFunc, died *atomic.Pointer[error]) {
	var embExited, fleetDied <-chan struct{}
	if d.emb != nil {
		embExited = d.emb.Exited()
	}
	if d.fleet != nil {
		embExited, fleetDied = nil, d.fleet.Died()
	}
	var err error
	select {
	case <-embExited:
		err = fmt.Errorf("%w: embedded server exited: %v", runner.ErrEngineExited, d.emb.ExitErr())
	case <-fleetDied:
		err = fmt.Errorf("%w: an engine of %s exited", runner.ErrEngineExited, d.fleet.Describe())
	case <-d.gone:
		err = d.goneErr
	case <-rctx.Done():
		return
	}
	died.Store(&err)
	cancel()
}

// awaitEngineSample waits (15 s at most) for an engine sample taken after
// the measured window, so that the cumulative counter brackets it even when
// a busy server answers its metrics endpoint late; not when sampling has
// stopped (the process exited).
func (d *Driver) awaitEngineSample(ctx context.Context, end time.Time) {
	stale := max(3*d.Cfg.Sampling, 11*time.Second) // a scrape may take 10 s
	for i := 0; i < 300 && ctx.Err() == nil; i++ {
		last := d.engineAt.Load()
		if last == 0 || last > end.UnixMicro() || time.Since(time.UnixMicro(last)) > stale {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Close stops sampling and the embedded server, and removes its files.
func (d *Driver) Close() error {
	if d.cancel != nil {
		d.cancel()
		d.samplers.Wait()
	}
	d.stopEngineSampler()
	if d.gen != nil {
		d.gen.Close()
	}
	var err error
	if d.emb != nil {
		err = d.emb.Close()
		if ee := d.emb.ExitErr(); ee != nil && !isSignalExit(ee) {
			err = errors.Join(err, fmt.Errorf("embedded server: %w", ee))
		}
	}
	return err
}

func isSignalExit(err error) bool {
	return strings.Contains(err.Error(), "signal:")
}

// clientJWKS is the agents' public keys by client id, for the embedded
// server (private_key_jwt); nil for the other methods.
func (d *Driver) clientJWKS() []byte {
	if exchange.AuthMethod(d.Cfg.Request.AuthMethod) != exchange.AuthPrivateKeyJWT {
		return nil
	}
	sets := map[string]json.RawMessage{}
	for i, k := range d.ClientKeys {
		sets[d.Cfg.ClientID(i)], _ = jose.JWKS(k)
	}
	b, _ := json.Marshal(sets)
	return b
}

// asserter signs agent i's client assertions: aud the token endpoint unless
// request.client_assertion.audience says otherwise.
func (d *Driver) asserter(i int, key *jose.Key) *subject.Asserter {
	c := d.Cfg
	aud := c.Request.ClientAssertion.Audience
	if aud == "" {
		aud = d.target
	}
	return &subject.Asserter{Key: key, ClientID: c.ClientID(i), Audience: aud, Lifetime: c.Request.ClientAssertion.Lifetime,
		Prefix: fmt.Sprintf("%s-c%d-", d.CampaignID, i)}
}

// newGenerator builds the agents, their connections and the success check;
// with check.verify it reads the target's keys first.
func (d *Driver) newGenerator(ctx context.Context, tlsCfg *tls.Config, out runner.Output) error {
	c := d.Cfg
	users := c.Users.Names()
	d.gen = &Generator{URL: d.target, Body: c.HopTemplate(1, 1).Compile(), MaxInFlight: c.Agents.MaxInFlight,
		Timeout: c.Request.Timeout, Check: c.Check.Exchange(), Work: d.workload(tlsCfg)}
	for i := 0; i < c.Agents.Count; i++ {
		a := &Agent{
			Index: i, ClientID: c.ClientID(i), Secret: d.Secret,
			Minter: &subject.Minter{Key: d.SubjectKey, Issuer: c.Subject.Issuer, Lifetime: c.Subject.Lifetime,
				Users: users, Shape: c.Subject.Shape(), Prefix: fmt.Sprintf("%s-a%d-", d.CampaignID, i)},
			Bearer: d.bearer(i, users),
		}
		if exchange.AuthMethod(c.Request.AuthMethod) == exchange.AuthPrivateKeyJWT {
			if i >= len(d.ClientKeys) {
				return fmt.Errorf("private_key_jwt: no client key for agent %d", i)
			}
			a.Assertions = d.asserter(i, d.ClientKeys[i])
		}
		d.gen.Agents = append(d.gen.Agents, a)
	}
	h2 := c.Target.HTTP2 == nil || *c.Target.HTTP2
	o := TransportOptions{TLS: tlsCfg, HTTP2: h2, Protocol: c.Target.Protocol(), NewConnPerRequest: c.Target.NewConnectionPerRequest(),
		Conns: c.Agents.MaxInFlight, KeepAliveIdle: c.Target.KeepAliveIdle}
	if d.ClientCerts != nil {
		o.ClientCerts = d.ClientCerts.Certs
	}
	d.gen.Connect(o)
	if err := d.startPremint(out); err != nil {
		return err
	}
	if p, per := c.Target.Protocol(), c.Target.NewConnectionPerRequest(); p != "" || per {
		how := map[string]string{"": "HTTP/2 when TLS offers it", "1.1": "HTTP/1.1", "2": "HTTP/2 over TLS", "h2c": "h2c (HTTP/2 without TLS)"}[p]
		if per {
			how += ", a new connection per request"
		}
		out.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "info", Message: "HTTP: " + how})
	}
	v := c.Check.Verify
	if v.Sample <= 0 {
		return nil
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg.Clone()}}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ver, where, err := exchange.Discover(dctx, hc, d.target, v.MetadataURL)
	if err != nil {
		return fmt.Errorf("check.verify: %w (set check.verify.metadata_url, or sample: 0)", err)
	}
	ver.Expect = c.Expect()
	d.gen.Verifier, d.gen.VerifySample = ver, v.Sample
	out.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "info", Message: fmt.Sprintf(
		"issued tokens: %.4g %% of the successes, picked at random, verified against the keys of %s (%d keys)",
		v.Sample*100, where, ver.Keys.Len())})
	return nil
}

// Ping implements runner.Pinger: one exchange as agent 0, outside any run
// (a capacity search's unloaded latency and cool-down).
func (d *Driver) Ping(ctx context.Context, timeout time.Duration) (time.Duration, bool) {
	if d.gen == nil || len(d.gen.Agents) == 0 {
		return 0, false
	}
	a := d.gen.Agents[0]
	tok, err := a.credential()
	if err != nil {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pl := &pipeline{ch: make(chan string, 1), low: make(chan struct{}, 1)}
	pl.ch <- tok
	var r stats.Request
	d.gen.send(ctx, a, time.Now(), &r, pl, new([]byte))
	return time.Duration(r.DurationUS) * time.Microsecond, r.Responded()
}
