package runner

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/search"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/runner/config"
)

// queueDriver simulates a server of capacity mu exchanges/s costing
// costMs of engine CPU each on top of fixed cores: each run is two seconds
// of rows just past (latency base/(1−ρ), spread over the run) with engine
// samples whose cumulative counter grows at the engine's cores. Before the
// first run it emits the engine at rest.
type queueDriver struct {
	mu, baseMs, costMs, fixed float64
	dieAt                     float64 // runs at or above this rate fail (0: never)

	mtx   sync.Mutex
	ran   []string
	stop  chan struct{}
	doneC chan struct{}
	cpu   float64 // the engine's cumulative CPU seconds
}

func (d *queueDriver) Name() string    { return "queue" }
func (d *queueDriver) Target() string  { return "http://127.0.0.1:1/token" }
func (d *queueDriver) InFlight() int64 { return 0 }
func (d *queueDriver) Close() error    { d.stopIdle(); return nil }
func (d *queueDriver) ranIDs() []string {
	d.mtx.Lock()
	defer d.mtx.Unlock()
	return slices.Clone(d.ran)
}

func (d *queueDriver) Start(_ context.Context, out Output) error {
	d.stop, d.doneC = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(d.doneC)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		last := time.Now()
		// Only while the campaign measures it, and done before its first
		// run can begin (Idle + Sampling, 600 ms after Start at the
		// earliest): a sample of this clock inside a run's synthetic past
		// breaks the run's counter, and its CPU falls back to the rates.
		quit := time.After(450 * time.Millisecond)
		for {
			select {
			case <-d.stop:
				return
			case <-quit:
				return
			case now := <-tick.C:
				d.mtx.Lock()
				d.cpu += d.fixed * now.Sub(last).Seconds()
				cpu := d.cpu
				d.mtx.Unlock()
				last = now
				out.Emit(event.Resource{At: now, Role: "engine", Name: "sim", CPUMillicores: d.fixed * 1000, CPUSecondsTotal: cpu, Source: "proc"})
			}
		}
	}()
	return nil
}

func (d *queueDriver) stopIdle() {
	if d.stop != nil {
		select {
		case <-d.stop:
		default:
			close(d.stop)
			<-d.doneC
		}
	}
}

// latencyMs is the latency of arrival k (counted from the warmup's start)
// at rate: below capacity the base over the idle share, times 1–1.5 across
// the run; beyond it the server completes mu a second and a backlog grows.
func (d *queueDriver) latencyMs(rate float64, k int) float64 {
	rho := rate / d.mu
	if rho >= 1 {
		return 100*d.baseMs + 1000*(float64(k)/d.mu-float64(k)/rate)
	}
	return d.baseMs / (1 - rho) * (1 + 0.5*float64(k%20)/20)
}

func (d *queueDriver) Run(_ context.Context, p event.PlannedRun, out Output) (RunResult, error) {
	d.stopIdle()
	d.mtx.Lock()
	d.ran = append(d.ran, p.ID)
	d.mtx.Unlock()
	if d.dieAt > 0 && p.TargetRPS >= d.dieAt {
		return RunResult{}, errors.New("target stopped answering")
	}
	end := time.Now()
	start := end.Add(-2 * time.Second)
	warm := int(p.TargetRPS) // one second of warmup, so the window's completions are whole
	for k := range warm + int(p.TargetRPS*2) {
		at := start.Add(time.Duration(float64(k-warm) / p.TargetRPS * float64(time.Second)))
		phase := stats.Measured
		if k < warm {
			phase = stats.Warmup
		}
		out.Record(&stats.Request{Agent: 0, Seq: int64(k), Phase: phase, ScheduledUS: at.UnixMicro(),
			SendLagUS: 100, DurationUS: int64(d.latencyMs(p.TargetRPS, k) * 1000), Status: 200, Outcome: "ok"})
	}
	cores := d.fixed + d.costMs*math.Min(p.TargetRPS, d.mu)/1000
	d.mtx.Lock()
	defer d.mtx.Unlock()
	for t := start.Add(-200 * time.Millisecond); t.Before(end.Add(300 * time.Millisecond)); t = t.Add(100 * time.Millisecond) {
		d.cpu += cores * 0.1
		out.Emit(event.Resource{At: t, Role: "engine", Name: "sim", CPUMillicores: cores * 1000, CPUSecondsTotal: d.cpu, Source: "proc"})
	}
	return RunResult{Started: start, MeasuredStart: start, MeasuredEnd: end}, nil
}

// searchCampaign is the simulated search; its tests run in a bubble of
// testing/synctest, where the engine at rest, each run's wait for one
// more sample and the cool-downs take no wall time.
func searchCampaign() config.Campaign {
	c := config.Article()
	c.Name = "search"
	c.Stages, c.Sanity.Enabled = []float64{50}, false
	c.Warmup, c.Duration, c.Pause, c.Sampling = 0, 2*time.Second, 0, 100*time.Millisecond
	c.Idle = 500 * time.Millisecond
	c.Thresholds = stats.Thresholds{P95Ms: 50, SuccessRatio: 0.99}
	c.Capacity = config.Capacity{Rounds: 1, Resolution: 0.05, CoolDown: time.Millisecond}
	return c
}

type searchRun struct {
	sum      *summary.Summary
	err      error
	dir      string
	searches []event.Search
	started  *event.CampaignStarted
}

func runSearchCampaign(t *testing.T, d *queueDriver, c config.Campaign, dir string, done map[string]*stats.Run) searchRun {
	t.Helper()
	var w *evidence.Writer
	var err error
	if done == nil {
		w, err = evidence.Create(dir, []byte("name: search\n"), evidence.Manifest{CampaignID: "search"})
	} else {
		w, err = evidence.Resume(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	bus := &event.Bus{}
	bus.Subscribe(w.Consume)
	var res searchRun
	bus.Subscribe(func(e event.Event) {
		switch v := e.(type) {
		case event.Search:
			res.searches = append(res.searches, v)
		case event.CampaignStarted:
			res.started = &v
		}
	})
	camp := &Campaign{Cfg: c, ID: "search", Driver: d, Bus: bus, Evidence: w, Tool: "test", Search: true, Done: done}
	res.sum, res.err = camp.Run(context.Background())
	_ = d.Close()
	res.dir = dir
	return res
}

// passes is the objective at rate against the simulated server, computed
// like the run's p95 (exact, over the run's rows).
func (d *queueDriver) passes(rate float64) bool {
	warm := int(rate)
	v := make([]int64, int(rate*2))
	for i := range v {
		v[i] = int64(d.latencyMs(rate, warm+i) * 1000)
	}
	return stats.Summarize(v).P95 < 50
}

func TestCampaignSearchesCapacity(t *testing.T) { synctest.Test(t, testCampaignSearchesCapacity) }

func testCampaignSearchesCapacity(t *testing.T) {
	d := &queueDriver{mu: 400, baseMs: 5, costMs: 2.5, fixed: 0.2}
	c := searchCampaign()
	r := runSearchCampaign(t, d, c, filepath.Join(t.TempDir(), "c"), nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	res := r.sum.Capacity
	if res == nil || res.Status != curve.StatusFound {
		t.Fatalf("capacity %+v", res)
	}
	t.Log(res.Line())
	if !d.passes(res.Capacity) || d.passes(res.Upper) || res.Upper-res.Capacity > 0.05*res.Capacity {
		t.Errorf("bracket %s: the simulated server passes at %v: %v, at %v: %v", res.Bracket(), res.Capacity, d.passes(res.Capacity), res.Upper, d.passes(res.Upper))
	}
	// Every probe round is a run of the evidence, named by probe, round, rate.
	ran := d.ranIDs()
	if len(ran) != len(res.Probes) || ran[0] != "00-p1-r1-50rps" || ran[1] != "01-p2-r1-100rps" {
		t.Errorf("runs %v for %d probes", ran, len(res.Probes))
	}
	f, err := evidence.Open(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Manifest.Runs) != len(ran) || f.Manifest.Runs[len(ran)-1].Status != "done" {
		t.Errorf("manifest runs %d, want %d done", len(f.Manifest.Runs), len(ran))
	}
	// The campaign says it is a search from its first event.
	if st := r.started; st == nil || st.Search == nil || !reflect.DeepEqual(*st.Search, SearchSpec(&c)) {
		t.Errorf("campaign_started without the search: %+v", st)
	}
	// One search event per judged probe, the bracket narrowing to the end.
	if len(r.searches) != len(res.Probes) || r.searches[len(r.searches)-1].Next != 0 || r.searches[0].Next != 100 {
		t.Errorf("%d search events for %d probes", len(r.searches), len(res.Probes))
	}
	// The marginal cost, the engine at rest beside the intercept.
	fit := r.sum.Cost.Fit
	if !fit.OK() {
		t.Fatalf("fit %s", fit.Line())
	}
	// Runs beyond capacity burn the engine's cores at the capacity's rate:
	// still the same line.
	if math.Abs(fit.MarginalCPUMs/2.5-1) > 0.01 || math.Abs(fit.FixedCores-0.2) > 0.01 {
		t.Errorf("fit %s, want 2.5 CPU-ms and 0.2 cores", fit.Line())
	}
	if idle := r.sum.Cost.Idle; idle == nil || math.Abs(idle.Cores-0.2) > 0.02 || f.Manifest.Idle == nil {
		t.Errorf("idle %+v, want 0.2 cores, in the manifest too", idle)
	}
	if sum, err := f.Summary(); err != nil || sum.Capacity == nil || sum.Capacity.Line() != res.Line() || sum.Cost == nil {
		t.Errorf("summary.json: %v", err)
	}
}

// A search interrupted after some runs resumes by replaying them: it runs
// exactly the runs it had not finished, and ends where an uninterrupted
// one ends.
func TestCampaignSearchResumes(t *testing.T) { synctest.Test(t, testCampaignSearchResumes) }

func testCampaignSearchResumes(t *testing.T) {
	full := runSearchCampaign(t, &queueDriver{mu: 400, baseMs: 5, costMs: 2.5, fixed: 0.2}, searchCampaign(), filepath.Join(t.TempDir(), "a"), nil)
	if full.err != nil {
		t.Fatal(full.err)
	}
	all := full.sum.Capacity.Probes
	f, err := evidence.Open(full.dir)
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]*stats.Run{}
	var ids []string
	for _, e := range f.Manifest.Runs {
		ids = append(ids, e.ID)
	}
	for _, id := range ids[:4] {
		if done[id], err = f.RunStats(id); err != nil {
			t.Fatal(err)
		}
	}
	d := &queueDriver{mu: 400, baseMs: 5, costMs: 2.5, fixed: 0.2}
	again := runSearchCampaign(t, d, searchCampaign(), full.dir, done)
	if again.err != nil {
		t.Fatal(again.err)
	}
	if ran := d.ranIDs(); !slices.Equal(ran, ids[4:]) {
		t.Errorf("resumed search ran %v, want %v", ran, ids[4:])
	}
	if again.sum.Capacity.Line() != full.sum.Capacity.Line() || len(again.sum.Capacity.Probes) != len(all) {
		t.Errorf("resumed: %s; uninterrupted: %s", again.sum.Capacity.Line(), full.sum.Capacity.Line())
	}
}

func TestCampaignSearchStopsOnHardFailure(t *testing.T) {
	synctest.Test(t, testCampaignSearchStopsOnHardFailure)
}

func testCampaignSearchStopsOnHardFailure(t *testing.T) {
	d := &queueDriver{mu: 400, baseMs: 5, costMs: 2.5, fixed: 0.2, dieAt: 200}
	c := searchCampaign()
	c.Idle = 0
	r := runSearchCampaign(t, d, c, filepath.Join(t.TempDir(), "c"), nil)
	if r.err == nil || r.sum.Status != "failed" {
		t.Fatalf("campaign %v, status %s", r.err, r.sum.Status)
	}
	res := r.sum.Capacity
	if res == nil || res.Status != curve.StatusHard || res.Capacity != 100 || !strings.Contains(res.Reason, "target stopped answering") {
		t.Fatalf("capacity %+v", res)
	}
	if ran := d.ranIDs(); len(ran) != 3 {
		t.Errorf("ran %v: the search went on after the failure", ran)
	}
}

// TestLoadResumeKnowsASearch: an unfinished capacity campaign resumes as a
// search, not as stages (issue 13: `tokex run --resume` reran it as
// stages): the manifest records the search, and a folder from before it
// did is known by its probes' run ids.
func TestLoadResumeKnowsASearch(t *testing.T) { synctest.Test(t, testLoadResumeKnowsASearch) }

func testLoadResumeKnowsASearch(t *testing.T) {
	c := searchCampaign()
	c.Idle = 0
	r := runSearchCampaign(t, &queueDriver{mu: 400, baseMs: 5, costMs: 2.5, fixed: 0.2, dieAt: 200}, c, filepath.Join(t.TempDir(), "s"), nil)
	if r.sum == nil || r.sum.Status != summary.CampaignFailed {
		t.Fatalf("campaign %v", r.err)
	}
	f, err := evidence.Open(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	spec := f.Manifest.Search
	f.Close()
	if spec == nil || spec.Policy != SearchPolicy(&c) || spec.Objective != SearchObjective(&c) {
		t.Fatalf("manifest search %+v", spec)
	}
	res, err := LoadResume(r.dir)
	if err != nil || !res.Search || res.Stages || len(res.Done) != 2 {
		t.Fatalf("resume %+v, %v", res, err)
	}
	man := filepath.Join(r.dir, evidence.ManifestFile)
	b, err := os.ReadFile(man)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "search")
	b, _ = json.Marshal(m)
	if err := os.WriteFile(man, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err = LoadResume(r.dir); err != nil || !res.Search || res.Stages {
		t.Fatalf("resume of a folder without the record %+v, %v", res, err)
	}
}

// TestRecomputeReplaysTheSearch: a summary recomputed from the evidence
// (a report of a folder without summary.json) has the capacity the
// campaign found, replayed from its runs with the recorded search (issue
// 13: it had none); a hostile record gives none rather than a wrong one.
func TestRecomputeReplaysTheSearch(t *testing.T) { synctest.Test(t, testRecomputeReplaysTheSearch) }

func testRecomputeReplaysTheSearch(t *testing.T) {
	full := runSearchCampaign(t, &queueDriver{mu: 400, baseMs: 5, costMs: 2.5, fixed: 0.2}, searchCampaign(), filepath.Join(t.TempDir(), "a"), nil)
	if full.err != nil {
		t.Fatal(full.err)
	}
	if err := os.Remove(filepath.Join(full.dir, evidence.SummaryJSON)); err != nil {
		t.Fatal(err)
	}
	f, err := evidence.Open(full.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := f.Recompute(stats.Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	want := full.sum.Capacity
	if s.Capacity == nil || s.Capacity.Line() != want.Line() || len(s.Capacity.Probes) != len(want.Probes) || s.Capacity.Status != curve.StatusFound {
		t.Fatalf("recomputed capacity %+v, the campaign's %s", s.Capacity, want.Line())
	}
	// The runs up to the third probe: the search as it stood then.
	var runs []*stats.Run
	for _, st := range full.sum.Stages {
		runs = append(runs, st.Runs...)
	}
	slices.SortFunc(runs, func(a, b *stats.Run) int { return a.Index - b.Index })
	part := search.Replay(*f.Manifest.Search, runs[:3])
	if then := full.searches[2].Result; part.Status != curve.StatusRunning || part.Line() != then.Line() || len(part.Probes) != 3 {
		t.Errorf("replay of three runs: %s, %d probes; the search said %s", part.Line(), len(part.Probes), then.Line())
	}
	bad := *f.Manifest.Search
	bad.Policy.Start = math.NaN()
	if r := search.Replay(bad, runs); r != nil {
		t.Errorf("a NaN start replayed: %s", r.Line())
	}
}
