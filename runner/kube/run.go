package kube

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/k6"
)

// Timings of a run's log handling (its tests run them in testing/synctest
// bubbles).
type timings struct {
	poll      time.Duration // how often Pods are re-judged against the start timeout
	quiet     time.Duration // an ended Pod whose log was silent this long is done
	noLog     time.Duration // an ended Pod whose log gave no line this long after the follow began is done
	drain     time.Duration // longest wait for the followers after the Pods ended
	quietPoll time.Duration // how often the quiet check runs
	catchUp   time.Duration // the first pause between two reads of an ended Pod's log without its summary
}

func (d *Driver) timings() timings {
	t := timings{poll: d.Poll, quiet: 2 * time.Second, noLog: 5 * time.Second, drain: 30 * time.Second, quietPoll: 500 * time.Millisecond,
		catchUp: 500 * time.Millisecond}
	if t.poll == 0 {
		t.poll = time.Second
	}
	return t
}

// logOpener opens one Pod's log stream (the API server's, or a test's).
type logOpener func(ctx context.Context, namespace, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error)

func (d *Driver) openLog() logOpener {
	if d.logs != nil {
		return d.logs
	}
	return func(ctx context.Context, ns, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
		return d.Client.CoreV1().Pods(ns).GetLogs(pod, opts).Stream(ctx)
	}
}

// podState is what a run tracks per agent Pod.
type podState struct {
	name      string
	index     int
	following bool
	done      chan struct{}
	last      *corev1.Pod // the latest view of the Pod

	mu        sync.Mutex
	summary   strings.Builder
	counts    map[stats.Phase]int64
	slots     map[stats.Phase]*phaseSlots
	logEvents int      // k6 log lines seen
	details   []string // the details of held lines (settle)
	spans     spanLog  // measured iterations, for the starvation rule
	terminal  bool
	exitCode  int32
	copyTried bool // file mode: the evidence file's copy was tried
}

// phaseSlots records one agent's phase: its lines by the slot they print
// and the lines whose arrival is settled at the end (arrivals.go).
type phaseSlots struct {
	startUS int64   // the scenario's start the lines imply (0: no line yet)
	sent    []uint8 // lines by printed slot (saturating), up to the plan's arrivals + 1
	dup     int     // printed slots claimed twice: k6 began an iteration a period late
	beyond  int     // lines with slots past the plan
	held    []heldLine
	baseMS  int64    // the ms origin of the held lines' times
	exact   []uint64 // bit n: the iteration k6 began n-th began on its slot (recorded as it came)
}

func newPhaseSlots(planned int) *phaseSlots { return &phaseSlots{sent: make([]uint8, planned+1)} }

func (sl *phaseSlots) mark(slot, startUS int64) {
	if sl.startUS == 0 {
		sl.startUS = startUS
	}
	switch {
	case slot < 0 || slot >= int64(len(sl.sent)):
		sl.beyond++
	case sl.sent[slot] > 0:
		sl.dup++
		fallthrough
	default:
		if sl.sent[slot] < 255 {
			sl.sent[slot]++
		}
	}
}

// lines is how many lines claimed slot (those past the plan together).
func (sl *phaseSlots) lines(slot int64) int {
	if slot < 0 || slot >= int64(len(sl.sent)) {
		return sl.beyond
	}
	return int(sl.sent[slot])
}

func (ps *podState) ended() bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.terminal
}

// kubeRun is one run: its Indexed Job, the agent Pods, and what their logs
// said. Driver.Run calls its steps in order: create, watchPods (which
// follows each Pod's log and records its lines), drain, window, reconcile,
// verdict.
type kubeRun struct {
	d       *Driver
	p       event.PlannedRun
	out     runner.Output
	t       timings
	job     *batchv1.Job
	created time.Time
	period  float64 // µs between one agent's arrivals
	pods    map[string]*podState
	failure error // why an agent Pod cannot run
	// budgetSaid: the log budget was stated (once the first agent runs).
	budgetSaid bool
	file       bool          // the agents keep the evidence file (copied out at their end)
	copies     chan struct{} // bounds the copies at once

	followers sync.WaitGroup
	lag       ingestLag

	mu       sync.Mutex
	measured bool  // a measured line was seen
	mStartUS int64 // earliest measured scenario start
	wStartUS int64 // earliest warmup scenario start
	badLines int
	// How the measured send lags split: k6's start lag and minting (µs).
	startLag, mint []int32
	held           atomic.Int64 // lines held for settling (arrivals.go)
	unheld         int          // lines past maxHeld, recorded with their begin-time slot
}

// maxParts bounds the send-lag parts kept per run (an article-sized run has
// 150,000 measured requests).
const maxParts = 1 << 22

// Run implements runner.Driver.
func (d *Driver) Run(ctx context.Context, p event.PlannedRun, out runner.Output) (runner.RunResult, error) {
	r, err := d.newRun(p, out)
	if err != nil {
		return runner.RunResult{}, err
	}
	d.nodesMu.Lock()
	d.nodes = nil
	d.nodesMu.Unlock()
	if d.API != nil {
		before, t0 := d.API.Snapshot(), time.Now()
		defer func() {
			u, took := d.API.Snapshot().Since(before), time.Since(t0)
			d.log(out, "info", "API server, this run: "+u.String(took))
			if over := u.OverBudget(took, d.Cfg.Kube.MetricsInterval); over != "" {
				d.log(out, "warn", over)
			}
		}()
	}
	if err := r.create(ctx); err != nil {
		return runner.RunResult{}, err
	}
	defer r.deleteJob()
	r.logSizing()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.watchPods(rctx)
	r.drain(cancel)
	r.d.log(r.out, "info", r.lag.String())
	res := r.window()
	if ctx.Err() != nil {
		r.settleUnknown()
		return res, ctx.Err()
	}
	res.Warnings = append(res.Warnings, r.reconcile(res)...)
	res.SendLagParts = r.sendLagParts()
	return res, r.verdict()
}

func (d *Driver) newRun(p event.PlannedRun, out runner.Output) (*kubeRun, error) {
	d.objs.LogLimit, _ = d.logLimits.limit()
	job, err := d.objs.JobObject(p)
	if err != nil {
		return nil, err
	}
	_, file := job.Spec.Template.Annotations[fileAnnotation]
	return &kubeRun{d: d, p: p, out: out, t: d.timings(), job: job, pods: map[string]*podState{},
		period:   float64(d.Cfg.Agents.Count) / p.TargetRPS * 1e6,
		mStartUS: math.MaxInt64, wStartUS: math.MaxInt64, file: file, copies: make(chan struct{}, copyParallel)}, nil
}

// logSizing says what each agent Pod requests, and why.
func (r *kubeRun) logSizing() {
	c := r.d.Cfg
	_, _, why := AgentRequests(r.p.TargetRPS/float64(c.Agents.Count), c.Subject.Alg, preallocatedVUs(c.Agents.MaxInFlight, r.p.Warmup > 0))
	rq := r.job.Spec.Template.Spec.Containers[0].Resources.Requests
	msg := fmt.Sprintf("agent Pods request %s CPU and %s memory each (%s", rq.Cpu(), rq.Memory(), why)
	if len(c.Kube.Resources) > 0 {
		msg += "; kube.resources wins where it sets a value"
	}
	r.d.log(r.out, "info", msg+")")
}

// create creates the run's Job, replacing a leftover of an earlier attempt.
func (r *kubeRun) create(ctx context.Context) error {
	jobs := r.d.Client.BatchV1().Jobs(r.d.Namespace)
	bg := metav1.DeletePropagationBackground
	if err := recreate(ctx, func() error {
		_, err := jobs.Create(ctx, r.job, metav1.CreateOptions{})
		return err
	}, func() error {
		return jobs.Delete(ctx, r.job.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
	}); err != nil {
		return fmt.Errorf("create job %s: %w", r.job.Name, err)
	}
	r.created = time.Now()
	return nil
}

// deleteJob deletes the Job and, in the background, its Pods.
func (r *kubeRun) deleteJob() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bg := metav1.DeletePropagationBackground
	err := r.d.Client.BatchV1().Jobs(r.d.Namespace).Delete(ctx, r.job.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
	if err != nil && !apierrors.IsNotFound(err) {
		r.d.log(r.out, "warn", "delete job "+r.job.Name+": "+err.Error())
	}
}

// observe updates one Pod's state and starts following its log once its
// container has started. States only move forward: an older view of a Pod
// (a watch event behind a List) never un-starts or un-ends it.
func (r *kubeRun) observe(ctx context.Context, pod *corev1.Pod) {
	ps := r.pods[pod.Name]
	if ps == nil {
		ps = &podState{name: pod.Name, index: completionIndex(pod), counts: map[stats.Phase]int64{},
			slots: map[stats.Phase]*phaseSlots{}, done: make(chan struct{})}
		r.pods[pod.Name] = ps
	}
	ps.last = pod
	r.d.noteNode(pod.Spec.NodeName)
	r.d.logLimits.note(ctx, r.d.Client, pod.Spec.NodeName)
	if reason := podFailure(pod, time.Since(r.created), r.d.Cfg.Kube.StartTimeout); reason != "" && r.failure == nil {
		r.failure = fmt.Errorf("agent pod %s: %s", pod.Name, reason)
	}
	if term, code := containerTerminated(pod); term {
		ps.mu.Lock()
		if !ps.terminal {
			ps.terminal, ps.exitCode = true, code
		}
		ps.mu.Unlock()
	}
	if containerStarted(pod) && !ps.following {
		ps.following = true
		if !r.budgetSaid {
			r.budgetSaid = true
			r.logBudget()
		}
		r.follow(ctx, ps)
	}
}

// hasSummary says whether the Pod's log gave k6's end-of-test summary, the
// last thing k6 prints: without it the follow may have missed lines.
func (ps *podState) hasSummary() bool {
	ps.mu.Lock()
	text := ps.summary.String()
	ps.mu.Unlock()
	_, err := k6.ParseSummary(strings.NewReader(text))
	return err == nil
}

// follow streams one Pod's log into record until the Pod has ended and its
// log has gone quiet; an ended Pod whose log lacks k6's summary is read
// again without follow (catchUp).
func (r *kubeRun) follow(ctx context.Context, ps *podState) {
	fctx, cancel := context.WithCancel(ctx)
	f := &follower{open: r.d.openLog(), namespace: r.d.Namespace, pod: ps.name, line: func(l string) { r.line(ctx, ps, l) },
		reconnect: func(err error) {
			msg := "log stream of " + ps.name + " ended early; resuming"
			if err != nil {
				msg += ": " + err.Error()
			}
			r.d.log(r.out, "warn", msg)
		},
		lag: func(d time.Duration) {
			if r.lag.note(d) {
				r.d.log(r.out, "warn", fmt.Sprintf("coordinator: a line of %s arrived %.1f s after it was written: the live view is behind (the evidence is not)", ps.name, d.Seconds()))
			}
		}}
	r.followers.Add(1)
	began := time.Now()
	go func() {
		defer r.followers.Done()
		defer close(ps.done)
		defer cancel()
		f.run(fctx, ps.ended)
		if ctx.Err() == nil && ps.ended() && !ps.hasSummary() {
			r.catchUp(ctx, f, ps)
		}
	}()
	// Cancel the stream once the Pod ended and its log went quiet: a real
	// kubelet closes it, kwok and some runtimes do not.
	go func() {
		for {
			select {
			case <-fctx.Done():
				return
			case <-ps.done:
				return
			case <-time.After(r.t.quietPoll):
			}
			last := f.lastReadAt()
			if ps.ended() && (!last.IsZero() && time.Since(last) > r.t.quiet || last.IsZero() && time.Since(began) > r.t.noLog) {
				cancel()
				return
			}
		}
	}()
}

// line handles one log line: in file mode the wrapper's marker starts the
// copy; anything else is recorded (the wrapper's other lines, "no evidence
// file", become k6 log events, bounded as those are).
func (r *kubeRun) line(ctx context.Context, ps *podState, l string) {
	if r.file && strings.HasPrefix(l, fileMarker) {
		r.copyOut(ctx, ps)
		return
	}
	r.record(ps, l)
}

// catchUpReads bounds the reads without follow of an ended Pod's log.
const catchUpReads = 5

// catchUp reads an ended Pod's log without follow, from the last line
// seen, until it holds k6's summary (the last thing k6 prints), at most
// catchUpReads times with a doubling pause (0.5 s, then 1, 2, 4 s): the
// end of a container can be reported before the last lines are readable
// (a runtime's log copier still draining the pipe; kwok serving a file
// still being written). Without the summary after that, the run says the
// evidence is incomplete.
func (r *kubeRun) catchUp(ctx context.Context, f *follower, ps *podState) {
	cctx, done := context.WithTimeout(ctx, r.t.drain)
	defer done()
	pause := r.t.catchUp
	for n := 1; ; n++ {
		err := f.catchUp(cctx)
		if err == nil && ps.hasSummary() {
			return
		}
		if n == catchUpReads || cctx.Err() != nil {
			if err != nil {
				r.d.log(r.out, "warn", "last read of "+ps.name+"'s log: "+err.Error())
			}
			return
		}
		select {
		case <-cctx.Done():
			return
		case <-time.After(pause):
		}
		pause *= 2
	}
}

// laterHop files the row of a chain's hop after the first: a request k6
// counts (http_reqs), not an arrival (no slot, no start lag), due when the
// hop before was answered. It keeps its iteration's begin-time slot: when
// k6 began the iteration late and its first hop is settled to an earlier
// arrival, the chain's rows no longer link and the run counts them as
// unlinked (stats.ChainStats).
func (r *kubeRun) laterHop(ps *podState, q *stats.Request, live bool) {
	ps.mu.Lock()
	ps.counts[q.Phase]++
	ps.mu.Unlock()
	if !live {
		if k, ok := r.out.(runner.Keeper); ok {
			k.Keep(q)
			return
		}
	}
	r.out.Record(q)
}

// record files one log line: a request line becomes a row, anything else
// is kept for the end-of-test summary.
func (r *kubeRun) record(ps *podState, line string) {
	l, ok, err := k6.ParseLine(line)
	if !ok {
		r.other(ps, line)
		return
	}
	if err != nil {
		r.mu.Lock()
		r.badLines++
		r.mu.Unlock()
		return
	}
	r.row(ps, &l, true)
}

// row files one request: the run's window and send-lag parts, the agent's
// counts, slots and spans, then the row itself: live (the log stream: the
// live view and the evidence) or not (a row of the evidence file the
// stream lost: the evidence only).
func (r *kubeRun) row(ps *podState, l *k6.Line, live bool) {
	q := &l.Request
	q.Description = errorText(q)
	if cn, ok := r.out.(runner.Connector); ok && live && q.Outcome == exchange.OutcomeTimeout {
		// k6 calls a timeout on a connection made a request timeout (1050:
		// the script's timeout) and one while dialling a dial timeout (1211:
		// a conn_error). The target took the connection and held the
		// request: overloaded, not unreachable (its line comes once the
		// timeout has passed: Driver.ReportDelay).
		cn.Connected(time.UnixMicro(q.ScheduledUS + q.SendLagUS))
	}
	if q.Hop > 1 { // a chain's later hop: a request of the arrival its first hop served
		r.laterHop(ps, q, live)
		return
	}
	start := q.ScheduledUS - int64(float64(q.Seq)*r.period)
	ps.mu.Lock()
	ps.counts[q.Phase]++
	sl := r.phaseSlots(ps, q.Phase)
	sl.mark(q.Seq, start)
	if q.Phase == stats.Measured && ps.spans.len() < maxParts {
		from := q.ScheduledUS + max(l.StartLagUS, 0)
		ps.spans.add(span{from, q.ScheduledUS + q.SendLagUS + q.DurationUS})
	}
	exact := l.Began == q.Seq || l.MintUS < 0 // tokex1 lines carry no begin time: as printed
	held := !exact && sl.hold(ps, l, &r.held)
	if exact {
		sl.markExact(l.Began)
	}
	ps.mu.Unlock()
	r.mu.Lock()
	first := false
	if q.Phase == stats.Measured {
		first = !r.measured
		r.measured = true
		r.mStartUS = min(r.mStartUS, start)
		if !held && l.StartLagUS >= 0 && l.MintUS >= 0 {
			r.lagParts(l.StartLagUS, l.MintUS)
		}
	} else {
		r.wStartUS = min(r.wStartUS, start)
	}
	if !exact && !held {
		r.unheld++
	}
	r.mu.Unlock()
	if live && first {
		r.out.Emit(event.PhaseChanged{At: time.Now(), RunID: r.p.ID, Phase: stats.Measured})
	}
	if held {
		if s, ok := r.out.(runner.Shower); ok && live {
			s.Show(q) // the live view; the evidence gets it once settled
		}
		return
	}
	if !live {
		if k, ok := r.out.(runner.Keeper); ok {
			k.Keep(q)
			return
		}
	}
	r.out.Record(q)
}

// lagParts files one measured request's start lag and minting (r.mu held).
func (r *kubeRun) lagParts(startLagUS, mintUS int64) {
	if len(r.startLag) < maxParts {
		r.startLag, r.mint = append(r.startLag, clamp32(startLagUS)), append(r.mint, clamp32(mintUS))
	}
}

// clamp32 keeps a µs figure of a line in 4 bytes (35 minutes at most).
func clamp32(us int64) int32 { return int32(max(min(us, math.MaxInt32), math.MinInt32)) }

// phaseSlots is the agent's slot record of a phase (ps.mu held).
func (r *kubeRun) phaseSlots(ps *podState, ph stats.Phase) *phaseSlots {
	sl := ps.slots[ph]
	if sl == nil {
		sl = newPhaseSlots(r.planned(ph))
		ps.slots[ph] = sl
	}
	return sl
}

// Bounds of what one agent's log may make tokex keep: k6's summary is a
// few KiB, its own log lines a handful.
const (
	maxSummaryBytes = 1 << 20
	maxK6LogEvents  = 100
)

// other files a line that is not a request: k6's own log lines become log
// events as they arrive (Insufficient VUs, thresholds crossed, errors), and
// everything is kept for the end-of-test summary.
func (r *kubeRun) other(ps *podState, line string) {
	level, msg, isLog := k6.LogLine(line)
	ps.mu.Lock()
	if ps.summary.Len()+len(line) < maxSummaryBytes {
		ps.summary.WriteString(line)
		ps.summary.WriteByte('\n')
	}
	emit := isLog && ps.logEvents < maxK6LogEvents
	if isLog {
		ps.logEvents++
		if ps.logEvents == maxK6LogEvents+1 {
			emit, level, msg = true, "warn", "further k6 log lines are not shown (see the Pod log)"
		}
	}
	ps.mu.Unlock()
	if emit {
		r.out.Emit(event.Log{At: time.Now(), Source: "k6", Level: level, Message: fmt.Sprintf("agent %d: %s", ps.index, msg)})
	}
}

// drain waits for every follower to finish (bounded), cancelling the rest.
func (r *kubeRun) drain(cancel context.CancelFunc) {
	all := make(chan struct{})
	go func() { r.followers.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(r.t.drain):
		cancel()
		<-all
	}
}

// window derives when the run's phases happened from the scenario starts
// the agents' lines imply (their scheduled times minus their slot offsets).
func (r *kubeRun) window() runner.RunResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	var res runner.RunResult
	switch {
	case r.measured:
		res.MeasuredStart = time.UnixMicro(r.mStartUS)
	case r.wStartUS != math.MaxInt64:
		res.MeasuredStart = time.UnixMicro(r.wStartUS).Add(r.p.Warmup)
	default:
		res.MeasuredStart = r.created.Add(r.p.Warmup)
	}
	if r.wStartUS != math.MaxInt64 {
		res.Started = time.UnixMicro(r.wStartUS)
	} else {
		res.Started = res.MeasuredStart.Add(-r.p.Warmup)
	}
	res.MeasuredEnd = res.MeasuredStart.Add(r.p.Duration)
	if r.badLines > 0 {
		res.Warnings = append(res.Warnings, stats.Warn(stats.WarnMalformedInput, "", fmt.Sprintf("%d malformed agent log line(s) skipped", r.badLines)))
	}
	return res
}

// sendLagParts is how the measured send lags split, once every line is
// settled (nil: no line told).
func (r *kubeRun) sendLagParts() *stats.SendLagParts {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.mint) == 0 {
		return nil
	}
	return &stats.SendLagParts{StartLagMs: stats.Summarize(r.startLag), MintMs: stats.Summarize(r.mint),
		ClockResolutionMs: 1, SigningAlg: r.d.Cfg.Subject.Alg}
}

// planned is how many arrivals the plan gives one agent in a phase: slots k
// with k × period < the phase's length. k6 may fire one more, at the very end.
func (r *kubeRun) planned(ph stats.Phase) int {
	d := r.p.Duration
	if ph == stats.Warmup {
		d = r.p.Warmup
	}
	us := float64(d.Microseconds())
	n := int(math.Ceil(us / r.period))
	for n > 0 && float64(n-1)*r.period >= us {
		n--
	}
	return n
}

// reconcile compares each agent's log lines with its k6 end-of-test summary
// and records the arrivals k6 dropped.
func (r *kubeRun) reconcile(res runner.RunResult) []stats.Warning {
	var warnings []stats.Warning
	names := make([]string, 0, len(r.pods))
	for n := range r.pods {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ps := r.pods[n]
		if r.file && !ps.copyTried {
			r.d.log(r.out, "warn", fmt.Sprintf("agent %d (%s): its log never said k6's output was complete, so its evidence file was not copied; its log's rows are the evidence", ps.index, n))
		}
		sum, err := k6.ParseSummary(strings.NewReader(ps.summary.String()))
		if err != nil {
			warnings = append(warnings, stats.Warn(stats.WarnIncompleteEvidence, "", fmt.Sprintf("incomplete evidence: agent %d (%s): no k6 end-of-test summary in its log (%v)", ps.index, n, err)),
				stats.Warn(stats.WarnDroppedUnknown, "", fmt.Sprintf("agent %d: how many arrivals k6 dropped is unknown (no summary)", ps.index)))
			for _, ph := range []stats.Phase{stats.Measured, stats.Warmup} {
				r.settlePhase(ps, ph, -1, -1, func(code stats.WarningCode, format string, a ...any) {
					warnings = append(warnings, stats.Warn(code, "", fmt.Sprintf("agent %d: ", ps.index)+fmt.Sprintf(format, a...)))
				})
			}
			continue
		}
		if total, ok := sum.Counter("http_reqs"); ok && total != float64(ps.counts[stats.Warmup]+ps.counts[stats.Measured]) {
			warnings = append(warnings, stats.Warn(stats.WarnIncompleteEvidence, "", fmt.Sprintf("incomplete evidence: agent %d: k6 counted %.0f requests in total, its log holds %d",
				ps.index, total, ps.counts[stats.Warmup]+ps.counts[stats.Measured])))
		}
		for _, ph := range []stats.Phase{stats.Measured, stats.Warmup} {
			warnings = append(warnings, r.reconcilePhase(ps, sum, ph, res)...)
		}
		dropped, _ := sum.ScenarioCount("dropped_iterations", string(stats.Measured))
		warnings = append(warnings, r.starved(ps, res.MeasuredStart, res.MeasuredEnd, dropped)...)
	}
	return warnings
}

// reconcilePhase checks one agent's phase: its lines against k6's count,
// the arrivals k6 fired against the plan; it settles the held lines and
// records each dropped arrival at a slot no line claimed.
func (r *kubeRun) reconcilePhase(ps *podState, sum *k6.Summary, ph stats.Phase, res runner.RunResult) []stats.Warning {
	var warnings []stats.Warning
	warn := func(code stats.WarningCode, format string, a ...any) {
		warnings = append(warnings, stats.Warn(code, "", fmt.Sprintf("agent %d: ", ps.index)+fmt.Sprintf(format, a...)))
	}
	sent, k6Sent := ps.counts[ph], int64(-1)
	want, ok := sum.ScenarioCount("http_reqs", string(ph))
	switch {
	case !ok:
		warn(stats.WarnIncompleteEvidence, "incomplete evidence: k6's summary has no count of %s requests: its log's %d are unchecked", ph, sent)
		want = float64(sent)
	case float64(sent) != want:
		warn(stats.WarnIncompleteEvidence, "incomplete evidence: k6 counted %.0f %s requests, its log holds %d", want, ph, sent)
		fallthrough
	default:
		k6Sent = int64(want)
	}
	dropped, ok := sum.ScenarioCount("dropped_iterations", string(ph))
	if !ok { // unknown stays unknown: never read as none
		warn(stats.WarnDroppedUnknown, "how many %s arrivals k6 dropped is unknown: its summary has no dropped_iterations{scenario:%s} count", ph, ph)
		r.settlePhase(ps, ph, -1, k6Sent, warn)
		return warnings
	}
	fired, plan := int(want+dropped), r.planned(ph)
	if fired < plan || fired > plan+1 {
		warn(stats.WarnIncompleteEvidence, "incomplete evidence: k6 fired %d %s arrivals (%.0f sent, %.0f dropped), the plan has %d (k6 may fire one more at the end)", fired, ph, want, dropped, plan)
	}
	st := r.settlePhase(ps, ph, int64(dropped), k6Sent, warn)
	if dropped <= 0 {
		return warnings
	}
	r.recordDrops(ps, ph, st, int(min(dropped, float64(plan+1))), r.phaseStart(ps, ph, res), warn) // a summary cannot make tokex hold more rows than the plan
	warn(stats.WarnDropped, "k6 dropped %.0f %s arrivals", dropped, ph)
	return warnings
}

// settlePhase settles an agent's held lines of ph with k6's counts (-1:
// unknown) and says what could not be known.
func (r *kubeRun) settlePhase(ps *podState, ph stats.Phase, dropped, sent int64, warn func(stats.WarningCode, string, ...any)) settled {
	ps.mu.Lock()
	sl := ps.slots[ph]
	if sl == nil {
		sl = &phaseSlots{}
	}
	keep := keeper(r.out)
	st := sl.settle(ps, ph, r.period, dropped, sent, func(q *stats.Request, startLagUS, mintUS int64) {
		if q.Phase == stats.Measured {
			r.mu.Lock()
			r.lagParts(startLagUS, mintUS)
			r.mu.Unlock()
		}
		keep(q)
	})
	ps.mu.Unlock()
	if st.lowerBound > 0 {
		why := "follow arrivals k6 dropped"
		if dropped < 0 {
			why = "may follow dropped arrivals (k6's drop count is unknown)"
		}
		warn(stats.WarnLagLowerBound, "%d %s requests %s: k6 numbers only the iterations it begins and may begin one late, so which arrival each served is known only within bounds; "+
			"their start lag and latency from schedule are for the latest arrival they can have served: lower bounds", st.lowerBound, ph, why)
	}
	if st.inconsistent > 0 {
		warn(stats.WarnIncompleteEvidence, "%d %s lines printed a begin time before the arrival k6's iteration count gives them (clocks?): their arrival is the count's", st.inconsistent, ph)
	}
	return st
}

// recordDrops records an agent's n dropped arrivals of ph at the slots no
// line claimed; what cannot be placed so is spread over the phase and said.
func (r *kubeRun) recordDrops(ps *podState, ph stats.Phase, st settled, n int, startUS int64, warn func(stats.WarningCode, string, ...any)) {
	slots := st.drops
	switch {
	case len(slots) > n: // lines the log lost leave slots unclaimed too
		warn(stats.WarnIncompleteEvidence, "incomplete evidence: %d %s slots unclaimed for %d dropped arrivals: the drops are spread over them", len(slots), ph, n)
		picked := make([]int64, n)
		for i := range picked {
			picked[i] = slots[i*len(slots)/n]
		}
		slots = picked
	case len(slots) < n:
		warn(stats.WarnIncompleteEvidence, "incomplete evidence: %d %s slots unclaimed for %d dropped arrivals: the other %d are spread over the phase", len(slots), ph, n, n-len(slots))
		plan := max(r.planned(ph), 1)
		for i := 0; i < n-len(st.drops); i++ {
			slots = append(slots, int64(i*plan/(n-len(st.drops))))
		}
	}
	if st.uncertain > 0 {
		warn(stats.WarnNote, "%d of the %d dropped %s arrivals are next to an iteration k6 began a period or more late: each may be off by one arrival", st.uncertain, n, ph)
	}
	for _, k := range slots {
		r.out.Record(&stats.Request{Agent: ps.index, Seq: k, Phase: ph, ScheduledUS: startUS + int64(math.Round(float64(k)*r.period)), Outcome: exchange.OutcomeDropped})
	}
}

// settleUnknown settles every held line without k6's counts (the run was
// cut short, or an agent left no summary).
func (r *kubeRun) settleUnknown() {
	for _, ps := range r.pods {
		for _, ph := range []stats.Phase{stats.Measured, stats.Warmup} {
			r.settlePhase(ps, ph, -1, -1, func(stats.WarningCode, string, ...any) {})
		}
	}
}

// phaseStart is when an agent's scenario for ph started: from its lines,
// else from its other phase's lines, else the run's window.
func (r *kubeRun) phaseStart(ps *podState, ph stats.Phase, res runner.RunResult) int64 {
	if sl := ps.slots[ph]; sl != nil && sl.startUS != 0 {
		return sl.startUS
	}
	w := r.p.Warmup.Microseconds()
	if ph == stats.Warmup {
		if sl := ps.slots[stats.Measured]; sl != nil && sl.startUS != 0 {
			return sl.startUS - w
		}
		return res.Started.UnixMicro()
	}
	if sl := ps.slots[stats.Warmup]; sl != nil && sl.startUS != 0 {
		return sl.startUS + w
	}
	return res.MeasuredStart.UnixMicro()
}

// verdict fails the run when an agent Pod could not run or k6 crashed; k6's
// exit code 99 (thresholds crossed) is a verdict on the server, not a crash.
func (r *kubeRun) verdict() error {
	if r.failure != nil {
		return r.failure
	}
	names := make([]string, 0, len(r.pods))
	for n := range r.pods {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if c := r.pods[n].exitCode; c != 0 && c != 99 {
			return fmt.Errorf("agent pod %s: k6 exited with code %d", n, c)
		}
	}
	return nil
}
