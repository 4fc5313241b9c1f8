package e2e

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/tokex-dev/tokex/runner/k6"
	"github.com/tokex-dev/tokex/runner/kube"
)

// fakeK6 plays k6 v2.2.0 running tokex's agent script in every agent Pod of
// the campaign, the way testdata/k6/tokex-script-k6v2.2.0-drops-agent-0.log
// shows real k6 doing it. It reads what the Pod was given (RATE_MILLI,
// WARMUP, DURATION, the thresholds, --summary-mode, the script's VU count
// from the ConfigMap) and runs both constant-arrival-rate scenarios in real
// time: every slot fires when due, or — its loop stalled, as
// testdata/k6/tokex2-k6v2.2.0-late-starts-* shows real k6 under a CPU stall —
// late, the backlog in a burst (lib/executor/constant_arrival_rate.go); a
// fired slot starts an iteration on a free VU, or — all VUs busy — is
// dropped and counted; k6 numbers only the iterations it starts. It writes
// what the script and k6 print: one tokex line per request (the slot of the
// begin time and the iterations begun before it, as the script does; a
// failed request as k6 reports it, status 0 with its error code),
// "Insufficient VUs …" at a scenario's first drop, the end-of-test summary,
// and the thresholds-crossed line.
type fakeK6 struct {
	c *Cluster
	// latency is the simulated server's response time (default 3 ms).
	latency time.Duration
	// lose is the part of each agent's measured phase (from, to: fractions
	// of it) whose lines never reach its log, as when the kubelet rotated
	// the log file before the follow read them. An agent Pod that keeps
	// the evidence file (kube.evidence_file) still has them there.
	lose [2]float64
	// stall is the part of each agent's measured phase (fractions of it)
	// in which its arrival loop is stalled: the arrivals due then fire at
	// the stall's end, in a burst.
	stall [2]float64
	// errorCode, when set, is the k6 error code every request fails with:
	// 1050 (a request timeout: the target took the connection and held
	// the request) and 1211 (a dial timeout) once the Pod's
	// REQUEST_TIMEOUT has passed, others at once.
	errorCode string

	mu      sync.Mutex
	seen    map[string]bool
	results map[int]*agentResult
	wg      sync.WaitGroup
}

// agentResult is what one agent did, by phase: the test's ground truth.
type agentResult struct {
	sent, dropped map[string]int
	sentSlots     map[string][]int64 // the arrival each request sent served, in begin order
	scenarioStart map[string]time.Time
	lost          int  // lines its log never got (fakeK6.lose)
	copied        bool // tokex touched "copied" after copying its evidence file
}

// k6 v2.2.0 starts an iteration 1–3 ms after its slot and the script mints
// for ~3.3 ms with RS256 (issue 10).
const (
	fakeStartLag = 1500 * time.Microsecond
	fakeMint     = 3300 * time.Microsecond
)

func (f *fakeK6) watch(ctx context.Context, t *testing.T) {
	f.seen = map[string]bool{}
	f.results = map[int]*agentResult{}
	go func() {
		for ctx.Err() == nil {
			pods, err := f.c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: kube.LabelName + "=" + kube.NameValue})
			if err == nil {
				for _, p := range pods.Items {
					f.mu.Lock()
					if !f.seen[p.Name] {
						f.seen[p.Name] = true
						f.wg.Add(1)
						go f.agent(ctx, t, p.DeepCopy())
					}
					f.mu.Unlock()
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

// result is agent i's ground truth once its Pod is done.
func (f *fakeK6) result(i int) *agentResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.results[i]
}

// scenario is one constant-arrival-rate scenario of one agent.
type scenario struct {
	name      string
	start     time.Time
	period    time.Duration
	fired     int         // arrivals: slots 0 … fired-1
	vus       []time.Time // busy until
	started   int         // k6's iterationInTest: only started iterations
	dropped   int
	warned    bool
	durations []float64 // ms
	slots     []int64   // the arrival each started iteration served, in begin order
	// The loop is stalled in [stallFrom, stallTo): arrivals due then fire at stallTo.
	stallFrom, stallTo time.Time
}

// fireAt is when k6's loop fires the arrival due at at.
func (s *scenario) fireAt(at time.Time) time.Time {
	if !at.Before(s.stallFrom) && at.Before(s.stallTo) {
		return s.stallTo
	}
	return at
}

type line struct {
	at   time.Time
	text string
}

var vusRE = regexp.MustCompile(`const VUS = (\d+);`)

func (f *fakeK6) agent(ctx context.Context, t *testing.T, pod *corev1.Pod) {
	defer f.wg.Done()
	file := filepath.Join(f.c.Dir, "pod-logs", pod.Name+".log")
	out, err := os.Create(file)
	if err != nil {
		t.Error(err)
		return
	}
	defer out.Close()
	logs := fmt.Sprintf("apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Logs\nmetadata: {name: %s, namespace: default}\n"+
		"spec:\n  logs:\n  - containers: [k6]\n    logsFile: %s\n    follow: true\n", pod.Name, file)
	if err := f.c.Apply(ctx, []byte(logs), nil); err != nil {
		t.Error(err)
		return
	}
	// Wait until the Pod runs (kwok's pod-ready delay gave us time to attach).
	_ = poll(ctx, 30*time.Second, func() (bool, error) {
		p, err := f.c.Client.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	env := map[string]string{}
	for _, e := range pod.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	agent, _ := strconv.Atoi(pod.Annotations["batch.kubernetes.io/job-completion-index"])
	cm, err := f.c.Client.CoreV1().ConfigMaps("default").Get(ctx, pod.Spec.Volumes[0].ConfigMap.Name, metav1.GetOptions{})
	if err != nil {
		t.Error(err)
		return
	}
	m := vusRE.FindStringSubmatch(cm.Data["exchange.js"])
	if m == nil {
		t.Error("no VU count in the script")
		return
	}
	vus, _ := strconv.Atoi(m[1])
	milli, _ := strconv.ParseInt(env["RATE_MILLI"], 10, 64)
	warmup, _ := time.ParseDuration(env["WARMUP"])
	duration, _ := time.ParseDuration(env["DURATION"])
	period := time.Duration(float64(time.Second) * 1000 / float64(milli))
	start := time.Now().Add(50 * time.Millisecond)
	var scs []*scenario
	if warmup > 0 {
		scs = append(scs, newScenario("warmup", start, period, warmup, vus, agent))
	}
	scs = append(scs, newScenario("measured", start.Add(warmup), period, duration, vus, agent))
	res := &agentResult{sent: map[string]int{}, dropped: map[string]int{}, sentSlots: map[string][]int64{}, scenarioStart: map[string]time.Time{}}
	var ev *evidenceFile
	if pod.Annotations["tokex.dev/evidence-file"] != "" {
		if ev, err = f.evidenceFile(ctx, pod.Name); err != nil {
			t.Error(err)
			return
		}
	}
	loseFrom := start.Add(warmup + time.Duration(f.lose[0]*float64(duration)))
	loseTo := start.Add(warmup + time.Duration(f.lose[1]*float64(duration)))
	write := func(l string) {
		if ev != nil {
			ev.line(l)
		}
		if now := time.Now(); !now.Before(loseFrom) && now.Before(loseTo) {
			res.lost++
			return
		}
		fmt.Fprintf(out, "%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), l)
	}
	if f.stall != [2]float64{} {
		m := scs[len(scs)-1]
		m.stallFrom, m.stallTo = m.start.Add(time.Duration(f.stall[0]*float64(duration))), m.start.Add(time.Duration(f.stall[1]*float64(duration)))
	}
	timeout, _ := time.ParseDuration(env["REQUEST_TIMEOUT"])
	if !f.play(ctx, agent, scs, timeout, write) {
		return
	}
	for _, l := range fakeSummary(scs, env, pod.Spec.Containers[0].Args, f.errorCode != "") {
		write(l)
	}
	if ev != nil {
		res.copied = ev.finish(ctx, t, func(l string) { fmt.Fprintf(out, "%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), l) })
	}
	exit(ctx, t, f.c, pod.Name)
	for _, s := range scs {
		res.sent[s.name], res.dropped[s.name], res.sentSlots[s.name], res.scenarioStart[s.name] = s.started, s.dropped, s.slots, s.start
	}
	f.mu.Lock()
	f.results[agent] = res
	f.mu.Unlock()
}

// evidenceFile is what the agent wrapper of kube.evidence_file keeps in
// the Pod: k6's output, line for line, gzipped, in the Pod's own folder,
// which a per-Pod kwok Exec makes the working directory of exec.
type evidenceFile struct {
	dir string
	f   *os.File
	zw  *gzip.Writer
}

func (f *fakeK6) evidenceFile(ctx context.Context, pod string) (*evidenceFile, error) {
	dir := filepath.Join(f.c.Dir, "pod-fs", pod)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	exec := fmt.Sprintf("apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Exec\nmetadata: {name: %s, namespace: default}\n"+
		"spec:\n  execs:\n  - containers: [k6]\n    local:\n      workDir: %s\n", pod, dir)
	if err := f.c.Apply(ctx, []byte(exec), nil); err != nil {
		return nil, err
	}
	file, err := os.Create(filepath.Join(dir, "k6.log.gz.part"))
	if err != nil {
		return nil, err
	}
	return &evidenceFile{dir: dir, f: file, zw: gzip.NewWriter(file)}, nil
}

func (e *evidenceFile) line(l string) { _, _ = io.WriteString(e.zw, l+"\n") }

// finish completes the file as the wrapper does once k6 has exited, prints
// the wrapper's marker and waits (bounded) for tokex to touch "copied".
func (e *evidenceFile) finish(ctx context.Context, t *testing.T, log func(string)) bool {
	if err := errors.Join(e.zw.Close(), e.f.Close(), os.Rename(e.f.Name(), filepath.Join(e.dir, "k6.log.gz"))); err != nil {
		t.Error(err)
		log("tokex-agent: no evidence file: gzip failed")
		return false
	}
	log("tokex-agent: k6 output complete in k6.log.gz (k6 exit code 0)")
	return poll(ctx, 60*time.Second, func() (bool, error) {
		_, err := os.Stat(filepath.Join(e.dir, "copied"))
		return err == nil, nil
	}) == nil
}

// newScenario plans a scenario's arrivals: slots k with k × period < d, and
// on agent 0 the one more k6 fires when the last tick meets the end of the
// scenario (a race in its executor: 101 arrivals for 100 happen often).
func newScenario(name string, start time.Time, period, d time.Duration, vus, agent int) *scenario {
	n := int(math.Ceil(float64(d) / float64(period)))
	for n > 0 && time.Duration(n-1)*period >= d {
		n--
	}
	if agent == 0 && time.Duration(n)*period == d {
		n++
	}
	return &scenario{name: name, start: start, period: period, fired: n, vus: make([]time.Time, vus)}
}

// play runs the scenarios in real time; false when ctx ended.
func (f *fakeK6) play(ctx context.Context, agent int, scs []*scenario, timeout time.Duration, write func(string)) bool {
	type tick struct {
		sc   *scenario
		slot int
		at   time.Time
	}
	var ticks []tick
	for _, s := range scs {
		for k := 0; k < s.fired; k++ {
			ticks = append(ticks, tick{s, k, s.start.Add(time.Duration(k) * s.period)})
		}
	}
	sort.SliceStable(ticks, func(i, j int) bool { return ticks[i].at.Before(ticks[j].at) })
	latency := f.latency
	if latency == 0 {
		latency = 3 * time.Millisecond
	}
	var pending []line // printed when the response arrives
	flush := func(until time.Time) bool {
		for len(pending) > 0 && !pending[0].at.After(until) {
			if !sleepUntil(ctx, pending[0].at) {
				return false
			}
			write(pending[0].text)
			pending = pending[1:]
		}
		return true
	}
	for i := range ticks {
		ticks[i].at = ticks[i].sc.fireAt(ticks[i].at)
	}
	sort.SliceStable(ticks, func(i, j int) bool { return ticks[i].at.Before(ticks[j].at) })
	for _, tk := range ticks {
		if !flush(tk.at) || !sleepUntil(ctx, tk.at) {
			return false
		}
		s := tk.sc
		vu := slices.IndexFunc(s.vus, func(busy time.Time) bool { return !busy.After(tk.at) })
		if vu < 0 {
			s.dropped++
			if !s.warned {
				s.warned = true
				write(fmt.Sprintf("Insufficient VUs, reached %d active VUs and cannot initialize more", len(s.vus)))
			}
			continue
		}
		began := s.started // k6's exec.scenario.iterationInInstance
		s.started++
		begun := tk.at.Add(fakeStartLag)
		sent := begun.Add(fakeMint)
		dur := latency + time.Duration(tk.slot%7)*400*time.Microsecond
		status, outcome, detail := 200, "ok", ""
		done := sent.Add(dur)
		if f.errorCode != "" { // no response: k6's duration is 0, its status 0
			dur, status, outcome, detail, done = 0, 0, "conn_error", f.errorCode, sent
			switch f.errorCode {
			case "1050":
				outcome, done = "timeout", sent.Add(timeout)
			case "1211":
				done = sent.Add(timeout)
			}
		}
		s.vus[vu] = done.Add(time.Millisecond)
		s.durations = append(s.durations, float64(dur)/float64(time.Millisecond))
		s.slots = append(s.slots, int64(tk.slot))
		// What the script prints, on JavaScript's millisecond clock.
		startMS := s.start.UnixMilli()
		periodMS := float64(s.period) / float64(time.Millisecond)
		slot := k6.Slot(startMS, begun.UnixMilli(), periodMS)
		scheduled := float64(startMS) + float64(slot)*periodMS
		text := fmt.Sprintf("tokex3,%d,%s,%d,%d,%d,%d,%d,%s,%s,%d,%d,%d", agent, s.name, slot, int64(math.Round(scheduled*1000)),
			int64(math.Round((float64(sent.UnixMilli())-scheduled)*1000)), dur.Microseconds(), status, outcome, detail,
			int64(math.Round((float64(begun.UnixMilli())-scheduled)*1000)), (sent.UnixMilli()-begun.UnixMilli())*1000, began)
		i := sort.Search(len(pending), func(i int) bool { return pending[i].at.After(done) })
		pending = slices.Insert(pending, i, line{done, text})
	}
	return flush(time.Now().Add(time.Hour))
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	if d := time.Until(t); d > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
		}
	}
	return ctx.Err() == nil
}

// fakeSummary is k6 v2.2.0's end-of-test summary for the agent script (its
// checks all failed when every request failed), in
// the layout of testdata/k6/tokex-script-k6v2.2.0-drops-agent-0.log (compact)
// and testdata/k6/k6docs-next-summary-full.txt (--summary-mode=full adds one
// section per scenario), then the line k6 logs when thresholds failed.
func fakeSummary(scs []*scenario, env map[string]string, args []string, failed bool) []string {
	by := map[string]*scenario{"warmup": {}, "measured": {}}
	for _, s := range scs {
		by[s.name] = s
	}
	w, m := by["warmup"], by["measured"]
	p95max, _ := strconv.ParseFloat(env["P95_MS"], 64)
	maxDropped, _ := strconv.Atoi(env["MAX_DROPPED"])
	p95 := percentile(m.durations, 95)
	type th struct {
		metric, expr, actual string
		ok                   bool
	}
	ths := []th{
		{"checks{scenario:measured}", "'rate>=" + env["SUCCESS_RATIO"] + "'", map[bool]string{false: "rate=100.00%", true: "rate=0.00%"}[failed], !failed},
		{"dropped_iterations{scenario:measured}", fmt.Sprintf("'count<=%d'", maxDropped), fmt.Sprintf("count=%d", m.dropped), m.dropped <= maxDropped},
		{"dropped_iterations{scenario:warmup}", "'count>=0'", fmt.Sprintf("count=%d", w.dropped), true},
		{"http_req_duration{scenario:measured}", fmt.Sprintf("'p(95)<%s'", env["P95_MS"]), "p(95)=" + k6ms(p95), p95 < p95max},
		{"http_reqs{scenario:measured}", "'count>=0'", fmt.Sprintf("count=%d", m.started), true},
		{"http_reqs{scenario:warmup}", "'count>=0'", fmt.Sprintf("count=%d", w.started), true},
	}
	out := []string{"", "", "  █ THRESHOLDS ", ""}
	var crossed []string
	for _, t := range ths {
		mark := "✓"
		if !t.ok {
			mark = "✗"
			crossed = append(crossed, t.metric)
		}
		out = append(out, "    "+t.metric, fmt.Sprintf("    %s %s %s", mark, t.expr, t.actual), "")
	}
	out = append(out, "", "  █ TOTAL RESULTS ", "")
	out = append(out, summarySection("    ", scs, true)...)
	if slices.Contains(args, "--summary-mode=full") {
		for _, s := range scs {
			out = append(out, "", "  █ SCENARIO: "+s.name, "")
			out = append(out, summarySection("    ", []*scenario{s}, false)...)
		}
	}
	out = append(out, "", "")
	if len(crossed) > 0 {
		out = append(out, "thresholds on metrics '"+strings.Join(crossed, ", ")+"' have been crossed")
	}
	return out
}

// summarySection renders the metrics of some scenarios as k6 does.
func summarySection(ind string, scs []*scenario, total bool) []string {
	var durs []float64
	started, dropped := 0, 0
	secs := 0.0
	for _, s := range scs {
		durs = append(durs, s.durations...)
		started += s.started
		dropped += s.dropped
		secs = max(secs, time.Since(s.start).Seconds())
	}
	row := func(name, value string) string {
		return ind + name + strings.Repeat(".", max(2, 31-len([]rune(name)))) + ": " + value
	}
	trend := func(d []float64) string {
		return fmt.Sprintf("avg=%s min=%s med=%s max=%s p(90)=%s p(95)=%s p(99)=%s", k6ms(mean(d)), k6ms(percentile(d, 0)),
			k6ms(percentile(d, 50)), k6ms(percentile(d, 100)), k6ms(percentile(d, 90)), k6ms(percentile(d, 95)), k6ms(percentile(d, 99)))
	}
	rate := func(n int) string { return fmt.Sprintf("%-6d %.6f/s", n, float64(n)/secs) }
	out := []string{
		row("checks_total", rate(3*started)),
		row("checks_succeeded", fmt.Sprintf("100.00%% %d out of %d", 3*started, 3*started)),
		row("checks_failed", fmt.Sprintf("0.00%%  0 out of %d", 3*started)), "",
		ind + "✓ status is 200", ind + "✓ has access_token", ind + "✓ has issued_token_type", "",
		ind + "HTTP", row("http_req_duration", trend(durs)),
	}
	if total {
		out = append(out, row("  { expected_response:true }", trend(durs)))
	}
	out = append(out, row("http_req_failed", fmt.Sprintf("0.00%%  0 out of %d", started)), row("http_reqs", rate(started)))
	if total {
		for _, s := range scs {
			out = append(out, row("  { scenario:"+s.name+" }", rate(s.started)))
		}
	}
	out = append(out, "", ind+"EXECUTION")
	if dropped > 0 {
		out = append(out, row("dropped_iterations", rate(dropped)))
		if total {
			for _, s := range scs {
				out = append(out, row("  { scenario:"+s.name+" }", rate(s.dropped)))
			}
		}
	}
	return append(out, row("iteration_duration", trend(durs)), row("iterations", rate(started)))
}

func k6ms(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(math.Round(ms/10)/100, 'f', -1, 64) + "s"
	}
	return strconv.FormatFloat(math.Round(ms*100)/100, 'f', -1, 64) + "ms"
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	r := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(r))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (r-float64(lo))*(s[hi]-s[lo])
}

// exit ends the agent's Pod as k6's exit ends its container: after the
// summary (and the wrapper's copy, in evidence-file mode). kwok's pod-complete timer (campaign's annotation) is only a
// backstop: on a loaded machine the fake started up to 12.5 s after kwok
// ran the Pod (120 agents, -race, load 25), and a Pod ended on that timer
// while its fake k6 still writes is a log no kubelet serves: its rows and
// summary after the end are lost. A Pod already gone (an interrupted run)
// is left alone.
func exit(ctx context.Context, t *testing.T, c *Cluster, name string) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
			return err
		}
		cs := &p.Status.ContainerStatuses[0]
		var started metav1.Time
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt
		}
		cs.Ready, cs.Started = false, ptr(false)
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: metav1.Now()}}
		p.Status.Phase = corev1.PodSucceeded
		_, err = c.Client.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		t.Errorf("ending pod %s: %v", name, err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestFakeK6FiresLateInABurst holds the fake to what real k6 v2.2.0 did
// under a CPU stall (testdata/k6/tokex2-k6v2.2.0-late-starts-*): the
// arrivals due in the stall fire at its end, in a burst, each iteration
// begun then prints the begin-time slot (several the same) and the
// iterations begun before it, which is its true arrival when nothing was
// dropped. Needs no cluster.
func TestFakeK6FiresLateInABurst(t *testing.T) {
	f := &fakeK6{latency: time.Millisecond}
	start := time.Now().Add(20 * time.Millisecond)
	sc := newScenario("measured", start, 20*time.Millisecond, 600*time.Millisecond, 100, 1)
	sc.stallFrom, sc.stallTo = start.Add(100*time.Millisecond), start.Add(400*time.Millisecond)
	var lines []string
	if !f.play(context.Background(), 0, []*scenario{sc}, 0, func(l string) { lines = append(lines, l) }) {
		t.Fatal("cut short")
	}
	if sc.dropped != 0 || sc.started != 30 || len(lines) != 30 {
		t.Fatalf("%d started, %d dropped, %d lines", sc.started, sc.dropped, len(lines))
	}
	late, dup := 0, 0
	seen := map[int64]bool{}
	for _, text := range lines {
		l, ok, err := k6.ParseLine(text)
		if !ok || err != nil || l.Began < 0 {
			t.Fatalf("%q: %v", text, err)
		}
		if truth := sc.slots[l.Began]; truth != l.Began || l.Seq < truth {
			t.Errorf("%q: began %d, arrival %d", text, l.Began, truth)
		}
		if l.Seq > l.Began {
			late++
		}
		if seen[l.Seq] {
			dup++
		}
		seen[l.Seq] = true
	}
	// 15 arrivals were due in the 300 ms stall: all fire at its end.
	if late < 14 || dup < 13 {
		t.Errorf("%d lines late, %d begin-time slots claimed twice; the stall delayed 15 arrivals", late, dup)
	}
}
