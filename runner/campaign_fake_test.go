package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/config"
)

// fakeDriver answers every run at once with rows of its own making: n
// measured exchanges (status from status, default 200) spaced a
// millisecond apart. It records what the campaign asked of it.
type fakeDriver struct {
	n        int
	status   func(p event.PlannedRun) int
	startErr error
	runErr   map[string]error
	// during, when set, is called in the middle of each run.
	during func(p event.PlannedRun)

	mu      sync.Mutex
	starts  int
	runs    []string
	targets []float64
}

func (d *fakeDriver) Name() string    { return "fake" }
func (d *fakeDriver) Target() string  { return "http://127.0.0.1:1/token" }
func (d *fakeDriver) InFlight() int64 { return 0 }
func (d *fakeDriver) Close() error    { return nil }
func (d *fakeDriver) started() int    { d.mu.Lock(); defer d.mu.Unlock(); return d.starts }
func (d *fakeDriver) ran() []string   { d.mu.Lock(); defer d.mu.Unlock(); return slices.Clone(d.runs) }
func (d *fakeDriver) rates() []float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.targets)
}

func (d *fakeDriver) Start(context.Context, Output) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.starts++
	return d.startErr
}

func (d *fakeDriver) Run(ctx context.Context, p event.PlannedRun, out Output) (RunResult, error) {
	d.mu.Lock()
	d.runs = append(d.runs, p.ID)
	d.targets = append(d.targets, p.TargetRPS)
	d.mu.Unlock()
	start := time.Now().Add(-time.Duration(d.n+1) * time.Millisecond)
	if s, ok := out.(Scheduler); ok {
		s.Schedule(start)
	}
	status := 200
	if d.status != nil {
		status = d.status(p)
	}
	for i := 0; i < d.n; i++ {
		if i == d.n/2 && d.during != nil {
			d.during(p)
		}
		r := &stats.Request{Seq: int64(i), Phase: stats.Measured, ScheduledUS: start.Add(time.Duration(i) * time.Millisecond).UnixMicro(),
			DurationUS: int64(1000 + i), Status: status, Outcome: "ok"}
		if status != 200 {
			r.Outcome, r.Detail = "http_error", fmt.Sprint(status)
		}
		out.Record(r)
	}
	end := start.Add(time.Duration(d.n) * time.Millisecond)
	return RunResult{Started: start, MeasuredStart: start, MeasuredEnd: end}, d.runErr[p.ID]
}

// fakeCampaign is stages 10/s and 20/s × 2 rounds after a sanity run, with
// a short sampling interval (each run waits one past its end).
func fakeCampaign() config.Campaign {
	c := config.Article()
	c.Name = "fake"
	c.Stages, c.Rounds = []float64{10, 20}, 2
	c.Duration, c.Warmup, c.Pause, c.Sampling = time.Second, 0, 0, 10*time.Millisecond
	c.Sanity.Enabled, c.Sanity.Rate, c.Sanity.Duration = true, 5, time.Second
	c.Thresholds.AllowWarnings = stats.InvalidatingCodes
	return c
}

type fakeRun struct {
	summary *stats.Summary
	err     error
	events  []event.Event
	dir     string
}

func runFake(t *testing.T, ctx context.Context, c config.Campaign, d Driver, dir string, done map[string]*stats.Run) fakeRun {
	t.Helper()
	var w *evidence.Writer
	var err error
	if done == nil {
		w, err = evidence.Create(dir, []byte("name: fake\n"), evidence.Manifest{CampaignID: "c", Name: c.Name, Driver: "fake", Started: time.Now()})
	} else {
		w, err = evidence.Resume(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	r := fakeRun{dir: dir}
	bus := &event.Bus{}
	bus.Subscribe(w.Consume)
	bus.Subscribe(func(e event.Event) { r.events = append(r.events, e) })
	camp := &Campaign{Cfg: c, ID: "c", Driver: d, Bus: bus, Evidence: w, Tool: "test", Done: done}
	r.summary, r.err = camp.Run(ctx)
	return r
}

// sequence is the campaign-level events, in order: "campaign", "start ID",
// "end ID status", "finished status".
func sequence(events []event.Event) []string {
	var s []string
	for _, e := range events {
		switch e := e.(type) {
		case event.CampaignStarted:
			s = append(s, "campaign")
		case event.RunStarted:
			s = append(s, "start "+e.Run.ID)
		case event.RunFinished:
			s = append(s, "end "+e.RunID+" "+string(e.Status))
		case event.CampaignFinished:
			s = append(s, "finished "+string(e.Status))
		}
	}
	return s
}

// TestCampaignStagesTimesRounds: the driver is started once, then given
// the sanity run and every stage of every round in order; the events come
// in that order; the summary groups the runs by stage.
func TestCampaignStagesTimesRounds(t *testing.T) {
	d := &fakeDriver{n: 40}
	r := runFake(t, context.Background(), fakeCampaign(), d, filepath.Join(t.TempDir(), "c"), nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	ids := []string{"00-sanity", "01-r1-10rps", "02-r1-20rps", "03-r2-10rps", "04-r2-20rps"}
	if d.started() != 1 || !slices.Equal(d.ran(), ids) || !slices.Equal(d.rates(), []float64{5, 10, 20, 10, 20}) {
		t.Fatalf("driver: %d starts, runs %v at %v", d.started(), d.ran(), d.rates())
	}
	want := []string{"campaign"}
	for _, id := range ids {
		want = append(want, "start "+id, "end "+id+" done")
	}
	want = append(want, "finished done")
	if got := sequence(r.events); !slices.Equal(got, want) {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s := r.summary
	if s.Status != "done" || s.Sanity == nil || len(s.Stages) != 2 {
		t.Fatalf("summary: %+v", s)
	}
	for i, st := range s.Stages {
		if st.TargetRPS != fakeCampaign().Stages[i] || len(st.Runs) != 2 || st.ReportedRun == "" {
			t.Errorf("stage %d: %v/s, %d runs, reported %q", i, st.TargetRPS, len(st.Runs), st.ReportedRun)
		}
		for _, run := range st.Runs {
			if run.Requests != 40 || run.OK != 40 || run.Status != stats.StatusDone {
				t.Errorf("%s: %d requests, %d ok, %s", run.ID, run.Requests, run.OK, run.Status)
			}
		}
	}
}

// TestCampaignInterruptAndResume: cancelled in the middle of the third
// run, the campaign is aborted with two runs done; resumed, the driver gets
// only the runs left and the finished ones are announced, not re-run.
func TestCampaignInterruptAndResume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &fakeDriver{n: 40, during: func(p event.PlannedRun) {
		if p.ID == "02-r1-20rps" {
			cancel()
		}
	}}
	dir := filepath.Join(t.TempDir(), "c")
	r := runFake(t, ctx, fakeCampaign(), d, dir, nil)
	if r.summary == nil || r.summary.Status != "aborted" || r.summary.Reason != "interrupted" {
		t.Fatalf("summary %+v, err %v", r.summary, r.err)
	}
	if got := sequence(r.events); got[len(got)-2] != "end 02-r1-20rps aborted" || got[len(got)-1] != "finished aborted" {
		t.Errorf("events: %v", got)
	}
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]*stats.Run{}
	var statuses []string
	for _, e := range f.Manifest.Runs {
		statuses = append(statuses, e.ID+" "+string(e.Status))
		if e.Status == "done" {
			done[e.ID], _ = f.RunStats(e.ID)
		}
	}
	if want := []string{"00-sanity done", "01-r1-10rps done", "02-r1-20rps aborted", "03-r2-10rps pending", "04-r2-20rps pending"}; !slices.Equal(statuses, want) {
		t.Fatalf("manifest: %v", statuses)
	}

	d2 := &fakeDriver{n: 40}
	r2 := runFake(t, context.Background(), fakeCampaign(), d2, dir, done)
	if r2.err != nil || r2.summary.Status != "done" {
		t.Fatalf("resume: %+v %v", r2.summary, r2.err)
	}
	if want := []string{"02-r1-20rps", "03-r2-10rps", "04-r2-20rps"}; !slices.Equal(d2.ran(), want) {
		t.Errorf("resume ran %v, want %v", d2.ran(), want)
	}
	got := sequence(r2.events)
	if want := []string{"campaign", "end 00-sanity done", "end 01-r1-10rps done", "start 02-r1-20rps"}; !slices.Equal(got[:4], want) {
		t.Errorf("resumed events begin %v, want %v", got[:4], want)
	}
	if n := len(r2.summary.Stages[0].Runs) + len(r2.summary.Stages[1].Runs); n != 4 {
		t.Errorf("%d runs in the summary", n)
	}
}

// TestCampaignFailures: a driver that cannot start runs nothing; a failed
// run stops the campaign with its reason; a sanity run that shows the
// target cannot be measured stops it before the stages.
func TestCampaignFailures(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		name   string
		d      *fakeDriver
		ran    []string
		reason string
	}{
		{"start", &fakeDriver{n: 10, startErr: boom}, nil, "boom"},
		{"run", &fakeDriver{n: 10, runErr: map[string]error{"01-r1-10rps": boom}}, []string{"00-sanity", "01-r1-10rps"}, "boom"},
		{"sanity", &fakeDriver{n: 10, status: func(event.PlannedRun) int { return 503 }}, []string{"00-sanity"}, "sanity run failed: 0 of 10 exchanges succeeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runFake(t, context.Background(), fakeCampaign(), c.d, filepath.Join(t.TempDir(), "c"), nil)
			if r.err == nil || r.summary == nil || r.summary.Status != "failed" || !strings.HasPrefix(r.summary.Reason, c.reason) {
				t.Fatalf("summary %+v, err %v", r.summary, r.err)
			}
			if !slices.Equal(c.d.ran(), c.ran) {
				t.Errorf("ran %v, want %v", c.d.ran(), c.ran)
			}
			if got := sequence(r.events); got[len(got)-1] != "finished failed" {
				t.Errorf("events: %v", got)
			}
		})
	}
}
