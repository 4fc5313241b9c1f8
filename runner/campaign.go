package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/search"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/runner/config"
)

// ErrSanity is returned when the sanity run shows the target cannot be
// measured (unreachable, refusing every exchange).
var ErrSanity = errors.New("sanity run failed")

// Campaign executes a plan with a driver, feeding the bus and the evidence.
type Campaign struct {
	Cfg      config.Campaign
	ID       string
	Driver   Driver
	Bus      *event.Bus
	Evidence *evidence.Writer
	Tool     string // "tokex vX"
	// Done are runs finished before a resume; they are not run again.
	Done map[string]*stats.Run
	// SecretSource says where the client secret came from (never the
	// secret itself); said at the start and when the server refuses it.
	SecretSource string
	// Search replaces the stages by a capacity search (Cfg.Capacity).
	Search bool

	rec       *evidence.Recorder // writes the runs and the end into Evidence, announced on Bus
	idle      *summary.Idle      // the engine at rest (Cfg.Idle)
	idleTried bool
	idleOut   *output
	// unloaded is the server's latency at rest (Pinger), cooled is the
	// cool-down the next run's stats record.
	unloaded time.Duration
	cooled   *curve.CoolDown
	prom     *promQL // nil: no target.prometheus
}

type output struct {
	bus   *event.Bus
	run   *evidence.Run // nil outside a run: rows are not evidence
	win   *windower
	reach *reachability
	descs *descriptions
	refus *refusals // a sanity run's
	idle  *idleMeter
	rest  *restWatch
}

func (o *output) Emit(e event.Event) {
	if o.idle != nil {
		o.idle.observe(e)
	}
	if o.rest != nil {
		o.rest.observe(e)
	}
	o.bus.Emit(e)
}

// Schedule implements Scheduler.
func (o *output) Schedule(start time.Time) {
	if o.win != nil {
		o.win.Schedule(start)
	}
}

func (o *output) Record(r *stats.Request) {
	o.Keep(r)
	o.Show(r)
}

// Show implements Shower: the live windows and the reachability watch.
func (o *output) Show(r *stats.Request) {
	if o.win != nil {
		o.win.Add(r)
	}
	if o.reach != nil {
		o.reach.record(r)
	}
	if o.refus != nil {
		o.refus.record(r)
	}
}

// Connected implements Connector.
func (o *output) Connected(at time.Time) {
	if o.reach != nil {
		o.reach.connected(at)
	}
}

// Keep implements Keeper: the evidence and the run's error descriptions,
// not the live windows nor the reachability watch.
func (o *output) Keep(r *stats.Request) {
	if o.run != nil {
		o.run.Record(r)
	}
	if o.descs != nil {
		o.descs.record(r)
	}
}

// Run executes the campaign and returns its summary. A cancelled ctx stops
// the current run within a second; finished runs keep their evidence. The
// summary is returned whenever it could be computed, also with an error.
func (c *Campaign) Run(ctx context.Context) (*summary.Summary, error) {
	c.rec = evidence.NewRecorder(c.Evidence, c.Bus.Emit)
	plan := Plan(&c.Cfg)
	started := time.Now()
	if err := c.recordPlan(plan); err != nil {
		return c.finish(ctx, started, nil, nil, capacities{}, err) // the folder says why it holds no run
	}
	if c.Search {
		plan = sanityOnly(plan)
	}
	out := &output{bus: c.Bus, idle: &idleMeter{}, rest: &restWatch{}}
	var resumed []string
	for id := range c.Done {
		resumed = append(resumed, id)
	}
	sort.Strings(resumed)

	err := c.Driver.Start(ctx, out)
	if err == nil {
		err = c.recordEngine()
	}
	if err == nil {
		err = c.startPromQL(ctx)
	}
	c.emitStarted(started, plan, resumed)
	var runs []*stats.Run
	for _, p := range plan {
		if st := c.Done[p.ID]; st != nil {
			runs = append(runs, st)
			c.Bus.Emit(event.RunFinished{At: time.Now(), RunID: p.ID, Status: st.Status, Stats: st})
		}
	}
	c.idle, c.idleOut = c.Evidence.Manifest().Idle, out
	var one *curve.Result
	var searches map[int]*curve.Result
	switch {
	case err != nil:
	case len(c.Cfg.ReplicaCounts()) > 0:
		runs, searches, err = c.runCounts(ctx, plan, runs, out)
	default:
		runs, err = c.runPlan(ctx, plan, runs)
		if err == nil && c.Search && ctx.Err() == nil {
			_, runs, one, err = c.runSearch(ctx, plan, runs, 0)
		}
	}
	return c.finish(ctx, started, runs, c.idle, capacities{one: one, byCount: searches}, err)
}

// capacities are a campaign's capacity searches: one, or one per engine count.
type capacities struct {
	one     *curve.Result
	byCount map[int]*curve.Result
}

// recordPlan records the search's settings and the plan in the manifest
// (a search plans only the sanity run).
func (c *Campaign) recordPlan(plan []event.PlannedRun) error {
	if c.Search {
		plan = sanityOnly(plan)
		if err := c.Evidence.SetSearch(SearchSpec(&c.Cfg)); err != nil {
			return err
		}
	}
	return c.Evidence.SetPlan(plan)
}

// recordEngine records in the manifest which engine process the driver
// samples and how it found it (a resumed server may have a new PID).
func (c *Campaign) recordEngine() error {
	r, ok := c.Driver.(EngineReporter)
	if !ok {
		return nil
	}
	if p := r.EngineProcess(); p != nil {
		return c.Evidence.AddEngineProcess(*p)
	}
	return nil
}

// runPlan runs the planned runs not done before a resume, in order, and
// stops at the first error, an aborted run or a failed sanity run.
func (c *Campaign) runPlan(ctx context.Context, plan []event.PlannedRun, runs []*stats.Run) ([]*stats.Run, error) {
	for i, p := range plan {
		if ctx.Err() != nil {
			break
		}
		if c.Done[p.ID] != nil {
			continue
		}
		if !p.Sanity {
			if err := c.rest(ctx); err != nil {
				return runs, err
			}
		}
		st, err := c.runOne(ctx, p)
		if st != nil {
			runs = append(runs, st)
		}
		if err != nil {
			return runs, err
		}
		if st.Status == stats.StatusAborted {
			break
		}
		if p.Sanity {
			if serr := sanityVerdict(st, c.Cfg.Thresholds, c.invalidClientHint); serr != nil {
				c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "error", Message: serr.Error()})
				return runs, serr
			}
			if note := sanityShortfall(st, c.Cfg.Thresholds); note != "" {
				c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "warn", Message: note})
			}
		}
		if i < len(plan)-1 && c.Cfg.Pause > 0 {
			sleep(ctx, c.Cfg.Pause)
		}
	}
	return runs, nil
}

// finish builds the summary, records how the campaign ended and writes it.
func (c *Campaign) finish(ctx context.Context, started time.Time, runs []*stats.Run, idle *summary.Idle, found capacities, err error) (*summary.Summary, error) {
	status, reason := summary.CampaignDone, ""
	switch {
	case err != nil:
		status, reason = summary.CampaignFailed, err.Error()
	case ctx.Err() != nil:
		status, reason = summary.CampaignAborted, "interrupted"
	}
	s := &summary.Summary{
		CampaignID: c.ID, Name: c.Cfg.Name, Tool: c.Tool, Driver: c.Driver.Name(), Target: c.Driver.Target(),
		Status: status, Reason: reason, Started: started, Finished: time.Now(), Thresholds: c.Cfg.Thresholds,
		Idle: idle, Capacity: found.one, Capacities: found.byCount, Scales: c.Evidence.Manifest().Scaling,
	}
	summary.BuildSummary(s, runs, status == summary.CampaignDone)
	search.Project(s, c.Cfg.Capacity.Project)
	if reason != "" {
		s.Warnings = append(s.Warnings, stats.Warn(stats.WarnCampaignEnded, "", "campaign "+string(status)+": "+reason))
	}
	if ferr := c.rec.Finish(s); ferr != nil && err == nil {
		err = ferr
	}
	return s, err
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// runOne executes one planned run and computes its statistics from the
// evidence it wrote. The first failed evidence write stops the run at once:
// load whose evidence is lost would only be load without a measurement.
func (c *Campaign) runOne(ctx context.Context, p event.PlannedRun) (*stats.Run, error) {
	run, err := c.rec.Begin(p, time.Now())
	if err != nil {
		return nil, err
	}
	win := newWindower(p, c.Bus.Emit, c.Driver.InFlight)
	out := &output{bus: c.Bus, run: run, win: win, reach: &reachability{late: lateness(c.Driver)}, descs: &descriptions{}}
	// The run stops early when the target stops answering, or at the first
	// failed evidence write.
	rctx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	if p.Sanity { // a sanity run every answer of which refuses stops early
		out.refus = &refusals{stop: stopRun, bus: c.Bus, hint: c.invalidClientHint}
	}
	stopSupervising := c.supervise(rctx, stopRun, out)
	res, derr := c.Driver.Run(rctx, p, out)
	stopSupervising()
	unreachable := context.Cause(rctx)
	if !errors.Is(unreachable, ErrUnreachable) {
		unreachable = nil
	}
	if rctx.Err() != nil && !res.MeasuredEnd.IsZero() {
		win.Cut(res.MeasuredEnd)
	}
	win.Flush(time.Time{})
	werr := c.Evidence.Err()
	// Keep the run open for one more resource sample past its end, so the
	// cumulative CPU counters bracket the measured window.
	if rctx.Err() == nil {
		tail := c.Cfg.Sampling + 100*time.Millisecond
		if wait := time.Until(res.MeasuredEnd.Add(tail)); wait > 0 {
			time.Sleep(wait)
		}
	}
	meta := runMeta(p, res, out.descs.list())
	meta.Mix = c.mixOf(p)
	meta.CoolDown, c.cooled = c.cooled, nil
	switch {
	case ctx.Err() != nil:
		meta.Status, meta.Reason = stats.StatusAborted, "interrupted"
	case werr != nil:
		meta.Status, meta.Reason = stats.StatusFailed, werr.Error()
	case unreachable != nil:
		derr = unreachable
		meta.Status, meta.Reason = stats.StatusFailed, unreachable.Error()
		meta.Warnings = append(meta.Warnings, stats.Warn(stats.WarnTargetUnreachable, "", unreachable.Error()))
	case errors.Is(context.Cause(rctx), ErrSanity):
		derr = context.Cause(rctx)
		meta.Status, meta.Reason = stats.StatusFailed, derr.Error()
	case derr != nil:
		meta.Status, meta.Reason = stats.StatusFailed, derr.Error()
	}
	c.measurePromQL(ctx, p, &meta)
	return c.endRun(ctx, run, meta, derr)
}

// supervise flushes the run's per-second windows and its evidence once a
// second, and stops the run (through stopRun) at the first failed evidence
// write or when the target stops answering. The returned function stops it
// and waits until it has.
func (c *Campaign) supervise(rctx context.Context, stopRun context.CancelCauseFunc, out *output) (stop func()) {
	stopFlush := make(chan struct{})
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		flush := time.NewTicker(time.Second)
		defer flush.Stop()
		watch := time.NewTicker(200 * time.Millisecond)
		defer watch.Stop()
		for {
			select {
			case <-stopFlush:
				return
			case <-c.Evidence.Failed():
				stopRun(c.Evidence.Err())
				return
			case now := <-flush.C:
				// One second of grace for the slowest responses of a second.
				out.win.Flush(now.Add(-time.Second))
				_ = c.Evidence.Flush() // a failed write closes Failed
			case now := <-watch.C:
				if err := out.reach.check(now, c.Cfg.Target.UnreachableAfter); err != nil && rctx.Err() == nil {
					c.Bus.Emit(event.Log{At: now, Source: "tokex", Level: "error", Message: err.Error() + "; stopping the run"})
					stopRun(err)
				}
			}
		}
	}()
	return func() {
		close(stopFlush)
		<-flushed
	}
}

// runMeta is what the evidence records about a run that ended as planned;
// runOne then marks it aborted or failed when it did not.
func runMeta(p event.PlannedRun, res RunResult, descs []sample.ErrorDescription) stats.RunMeta {
	return stats.RunMeta{ID: p.ID, Index: p.Index, Round: p.Round, Sanity: p.Sanity, TargetRPS: p.TargetRPS,
		Agents: p.Agents, Replicas: p.Replicas, Started: res.Started, MeasuredStart: res.MeasuredStart, MeasuredEnd: res.MeasuredEnd,
		Status: stats.StatusDone, Warnings: res.Warnings, ErrorDescriptions: descs, SendLagParts: res.SendLagParts,
		Verification: res.Verification, Connections: res.Connections, Grant: p.Grant, Chain: p.Chain, Step: p.Step}
}

// mixOf is the mix run p's arrivals draw their grant from: the campaign's,
// in the runs of its own workload; nil otherwise.
func (c *Campaign) mixOf(p event.PlannedRun) *exchange.Mix {
	if p.Grant != "" {
		return nil
	}
	return c.Cfg.Workload.MixSpec()
}

// endRun computes the run's statistics from its evidence and announces its
// end. A driver error is returned unless the campaign was interrupted.
func (c *Campaign) endRun(ctx context.Context, run *evidence.Run, meta stats.RunMeta, derr error) (*stats.Run, error) {
	st, err := run.End(time.Now(), meta, c.Cfg.Thresholds)
	if err != nil {
		return nil, err
	}
	if derr != nil && ctx.Err() == nil {
		return st, derr
	}
	return st, nil
}

// sanityMeasurable is the success ratio below which a sanity run whose
// failures are only the server being slow (timeouts, 5xx, resets) still
// stops the campaign: most exchanges failed, nothing could be measured.
const sanityMeasurable = 0.5

// sanityVerdict fails the campaign early when the sanity run shows the
// target cannot be measured, naming the most common error and what the
// server said about it: no exchange completed, the server refuses them
// (an OAuth error, a 4xx, a 200 without a token: a setup that will not
// change), or most of them failed. A server that answers most exchanges
// and is only slow with some is measured: its runs fail their thresholds.
func sanityVerdict(st *stats.Run, th stats.Thresholds, hint func() string) error {
	if st.Requests > 0 && (st.SuccessRatio >= th.SuccessRatio || st.SuccessRatio >= sanityMeasurable && !refusing(st)) {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d exchanges succeeded", st.OK, st.Requests)
	if len(st.TopErrors) > 0 {
		b.WriteString("; most common error: " + doc.ErrorKindText(st.TopErrors[0]))
		if st.TopErrors[0].Error == string(exchange.OutcomeOAuthError)+":"+exchange.ErrInvalidClient && hint != nil {
			b.WriteString("; " + hint())
		}
	}
	if st.Dropped > 0 {
		fmt.Fprintf(&b, "; %d dropped", st.Dropped)
	}
	// A starved generator or a saturated host times out too: say so, or
	// the server takes the blame.
	var codes []string
	for _, w := range st.Warnings {
		if w.Code.Invalidating() {
			codes = append(codes, string(w.Code))
		}
	}
	if len(codes) > 0 {
		fmt.Fprintf(&b, "; and this machine, not only the server, may be the cause: %s", strings.Join(codes, ", "))
	}
	return fmt.Errorf("%w: %s", ErrSanity, b.String())
}

// refusing says the sanity run's most common error is the server refusing
// the exchange rather than failing to answer it in time.
func refusing(st *stats.Run) bool {
	if len(st.TopErrors) == 0 {
		return false
	}
	kind, detail, _ := strings.Cut(st.TopErrors[0].Error, ":")
	switch exchange.Outcome(kind) {
	case exchange.OutcomeOAuthError, exchange.OutcomeBadResponse:
		return true
	case exchange.OutcomeHTTPError:
		return strings.HasPrefix(detail, "4")
	}
	return false
}

// sanityShortfall says why a sanity run below the success objective did not
// stop the campaign, "" when it met the objective.
func sanityShortfall(st *stats.Run, th stats.Thresholds) string {
	if st.SuccessRatio >= th.SuccessRatio {
		return ""
	}
	msg := fmt.Sprintf("sanity run: %d of %d exchanges succeeded, below the %.4g %% objective", st.OK, st.Requests, th.SuccessRatio*100)
	if len(st.TopErrors) > 0 {
		msg += " (most common error: " + doc.ErrorKindText(st.TopErrors[0]) + ")"
	}
	return msg + "; the server answers most exchanges and refuses none, so the campaign goes on: the counted runs measure how it fails"
}

// emitStarted says the campaign started and how its clients authenticate.
func (c *Campaign) emitStarted(at time.Time, plan []event.PlannedRun, resumed []string) {
	ev := event.CampaignStarted{At: at, ID: c.ID, Name: c.Cfg.Name, Driver: c.Driver.Name(),
		Target: c.Driver.Target(), Runs: plan, Thresholds: c.Cfg.Thresholds, Resumed: resumed}
	if c.Search {
		spec := SearchSpec(&c.Cfg)
		ev.Search = &spec
	}
	c.Bus.Emit(ev)
	if how := c.clientAuth(); how != "" {
		c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "info", Message: "client authentication: " + how})
	}
}

// clientAuth says how the agents authenticate and where their credentials
// come from.
func (c *Campaign) clientAuth() string {
	if c.SecretSource == "" {
		return ""
	}
	return fmt.Sprintf("%s %s0..%d, %s from %s", c.Cfg.Request.AuthMethod, c.Cfg.Agents.ClientIDPrefix, c.Cfg.Agents.Count-1, c.credential(), c.SecretSource)
}

// credential names what the agents authenticate with.
func (c *Campaign) credential() string {
	switch exchange.AuthMethod(c.Cfg.Request.AuthMethod) {
	case exchange.AuthPrivateKeyJWT:
		return "keys"
	case exchange.AuthTLSClient:
		return "certificates"
	}
	return "secret"
}

// invalidClientHint says what to check when the server refuses the
// clients' credentials.
func (c *Campaign) invalidClientHint() string {
	a := c.Cfg.Agents
	what := "secret is the one"
	switch c.credential() {
	case "keys":
		what = "registered public keys are those of the keys"
	case "certificates":
		what = "registered subject DNs are those of the certificates"
	}
	return fmt.Sprintf("the server refused the clients' credentials: check that it has the clients %s0..%d, that they may use %s, and that their %s tokex sent (%s)",
		a.ClientIDPrefix, a.Count-1, c.Cfg.Request.AuthMethod, what, c.SecretSource)
}
