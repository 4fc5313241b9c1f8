package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// recorded is a new folder of testPlan with a recorder announcing on a bus
// the writer consumes, and what the bus carried.
type recorded struct {
	dir string
	w   *Writer
	rec *Recorder
	mu  sync.Mutex
	evs []event.Event
}

func newRecorded(t *testing.T) *recorded {
	t.Helper()
	r := &recorded{dir: filepath.Join(t.TempDir(), "c")}
	var err error
	r.w, err = Create(r.dir, []byte("name: t\n"), Manifest{CampaignID: "c", Started: time.Unix(1_800_000_000, 0)})
	must(t, err)
	must(t, r.w.SetPlan(testPlan))
	bus := &event.Bus{}
	bus.Subscribe(r.w.Consume)
	bus.Subscribe(func(e event.Event) {
		r.mu.Lock()
		r.evs = append(r.evs, e)
		r.mu.Unlock()
	})
	r.rec = NewRecorder(r.w, bus.Emit)
	return r
}

func (r *recorded) kinds() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ks []string
	for _, e := range r.evs {
		ks = append(ks, string(e.Kind()))
	}
	return strings.Join(ks, ",")
}

func row(at time.Time, i int) *stats.Request {
	return &stats.Request{Seq: int64(i), Phase: stats.Measured, ScheduledUS: at.Add(time.Duration(i) * 10 * time.Millisecond).UnixMicro(),
		DurationUS: 1000, Status: 200, Outcome: "ok"}
}

func meta(p event.PlannedRun, start time.Time) stats.RunMeta {
	return stats.RunMeta{ID: p.ID, Round: p.Round, TargetRPS: p.TargetRPS, Started: start, MeasuredStart: start,
		MeasuredEnd: start.Add(time.Second), Status: stats.StatusDone}
}

// The recorder writes each step and announces it, in the order the folder
// and the other consumers see: the run's start lands in the run's events,
// its end and the campaign's end in the campaign's; the manifest's status,
// reason and end are the summary's.
func TestRecorderAnnouncesEachStepInOrder(t *testing.T) {
	r := newRecorded(t)
	start := time.Unix(1_800_000_000, 0)
	var runs []*stats.Run
	for i, p := range testPlan {
		at := start.Add(time.Duration(i) * 2 * time.Second)
		run, err := r.rec.Begin(p, at)
		must(t, err)
		if run.ID() != p.ID {
			t.Errorf("run id %q, want %q", run.ID(), p.ID)
		}
		for k := range 10 {
			run.Record(row(at, k))
		}
		note := stats.Warn(stats.WarnMalformedInput, p.ID, "a remark on the input")
		st, err := run.End(at.Add(time.Second), meta(p, at), stats.Thresholds{P95Ms: 10, SuccessRatio: 1}, note)
		must(t, err)
		if st.Requests != 10 || !strings.Contains(fmt.Sprint(st.Warnings), "a remark on the input") {
			t.Fatalf("run %s: %d requests, warnings %v", p.ID, st.Requests, st.Warnings)
		}
		runs = append(runs, st)
	}
	s := &summary.Summary{CampaignID: "c", Status: summary.CampaignFailed, Reason: "sanity run failed", Finished: start.Add(time.Minute)}
	summary.BuildSummary(s, runs, false)
	must(t, r.rec.Finish(s))
	if got, want := r.kinds(), "run_started,run_finished,run_started,run_finished,campaign_finished"; got != want {
		t.Errorf("announced %s, want %s", got, want)
	}
	f, err := Open(r.dir)
	must(t, err)
	m := f.Manifest
	if m.Status != summary.CampaignFailed || m.Reason != "sanity run failed" || !m.Finished.Equal(s.Finished) {
		t.Errorf("manifest %q %q %v", m.Status, m.Reason, m.Finished)
	}
	for _, e := range m.Runs {
		if e.Status != stats.StatusDone || e.Meta == nil {
			t.Errorf("manifest run %+v", e)
		}
	}
	perFile := map[string][]string{}
	for _, name := range []string{EventsFile, filepath.Join(RunsDir, testPlan[0].ID, EventsFile), filepath.Join(RunsDir, testPlan[1].ID, EventsFile)} {
		b, err := os.ReadFile(filepath.Join(r.dir, name))
		must(t, err)
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e struct{ Kind string }
			must(t, json.Unmarshal([]byte(l), &e))
			perFile[name] = append(perFile[name], e.Kind)
		}
	}
	if got := fmt.Sprint(perFile); got != "map[events.jsonl:[run_finished run_finished campaign_finished] runs/01-r1-10rps/events.jsonl:[run_started] runs/02-r1-20rps/events.jsonl:[run_started]]" {
		t.Errorf("events by file: %s", got)
	}
	sum, err := f.Summary()
	if err != nil || sum.Status != summary.CampaignFailed || sum.Reason != "sanity run failed" {
		t.Errorf("summary.json %+v %v", sum, err)
	}
}

// Every step out of order is refused with ErrOrder, and writes nothing:
// the folder and the announcements stay those of the steps in order.
func TestRecorderRefusesStepsOutOfOrder(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	done := &summary.Summary{CampaignID: "c", Status: summary.CampaignDone, Finished: start.Add(time.Minute)}
	cases := []struct {
		name     string
		steps    func(t *testing.T, r *recorded) error
		announce string // what the bus carried, the refused step included
	}{
		{"a run begun while another is open", func(t *testing.T, r *recorded) error {
			_, err := r.rec.Begin(testPlan[0], start)
			must(t, err)
			_, err = r.rec.Begin(testPlan[1], start)
			return err
		}, "run_started"},
		{"a run begun twice", func(t *testing.T, r *recorded) error {
			run, err := r.rec.Begin(testPlan[0], start)
			must(t, err)
			_, err = run.End(start, meta(testPlan[0], start), stats.Thresholds{})
			must(t, err)
			_, err = r.rec.Begin(testPlan[0], start)
			return err
		}, "run_started,run_finished"},
		{"a run not in the plan", func(t *testing.T, r *recorded) error {
			_, err := r.rec.Begin(event.PlannedRun{ID: "03-r1-30rps"}, start)
			return err
		}, ""},
		{"a run ended twice", func(t *testing.T, r *recorded) error {
			run, err := r.rec.Begin(testPlan[0], start)
			must(t, err)
			_, err = run.End(start, meta(testPlan[0], start), stats.Thresholds{})
			must(t, err)
			_, err = run.End(start, meta(testPlan[0], start), stats.Thresholds{})
			return err
		}, "run_started,run_finished"},
		{"a run ended with another's statistics", func(t *testing.T, r *recorded) error {
			run, err := r.rec.Begin(testPlan[0], start)
			must(t, err)
			_, err = run.End(start, meta(testPlan[1], start), stats.Thresholds{})
			return err
		}, "run_started"},
		{"finished while a run is open", func(t *testing.T, r *recorded) error {
			_, err := r.rec.Begin(testPlan[0], start)
			must(t, err)
			return r.rec.Finish(done)
		}, "run_started"},
		{"finished without a summary", func(t *testing.T, r *recorded) error { return r.rec.Finish(nil) }, ""},
		{"finished without a status", func(t *testing.T, r *recorded) error {
			return r.rec.Finish(&summary.Summary{CampaignID: "c", Finished: start})
		}, ""},
		{"finished still running", func(t *testing.T, r *recorded) error {
			return r.rec.Finish(&summary.Summary{CampaignID: "c", Status: summary.CampaignRunning, Finished: start})
		}, ""},
		{"finished twice", func(t *testing.T, r *recorded) error {
			must(t, r.rec.Finish(done))
			return r.rec.Finish(done)
		}, "campaign_finished"},
		{"a run begun after the end", func(t *testing.T, r *recorded) error {
			must(t, r.rec.Finish(done))
			_, err := r.rec.Begin(testPlan[0], start)
			return err
		}, "campaign_finished"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRecorded(t)
			err := c.steps(t, r)
			if !errors.Is(err, ErrOrder) {
				t.Fatalf("err = %v, want ErrOrder", err)
			}
			if got := r.kinds(); got != c.announce {
				t.Errorf("announced %q, want %q", got, c.announce)
			}
			if r.w.Err() != nil {
				t.Errorf("a refused step failed the writer: %v", r.w.Err())
			}
		})
	}
}

// A row recorded on a run that ended (a driver's straggler) never lands in
// the run begun after it; the next step logs how many there were.
func TestRowsOfAnEndedRunNeverReachTheNext(t *testing.T) {
	r := newRecorded(t)
	start := time.Unix(1_800_000_000, 0)
	first, err := r.rec.Begin(testPlan[0], start)
	must(t, err)
	for k := range 3 {
		first.Record(row(start, k))
	}
	_, err = first.End(start.Add(time.Second), meta(testPlan[0], start), stats.Thresholds{})
	must(t, err)
	first.Record(row(start, 3))
	second, err := r.rec.Begin(testPlan[1], start.Add(2*time.Second))
	must(t, err)
	first.Record(row(start, 4))
	first.Record(row(start, 5))
	for k := range 5 {
		second.Record(row(start.Add(2*time.Second), k))
	}
	st, err := second.End(start.Add(3*time.Second), meta(testPlan[1], start.Add(2*time.Second)), stats.Thresholds{})
	must(t, err)
	if st.Requests != 5 {
		t.Errorf("the second run holds %d rows, want its own 5", st.Requests)
	}
	must(t, r.rec.Finish(&summary.Summary{CampaignID: "c", Status: summary.CampaignDone, Finished: start.Add(time.Minute)}))
	var logs []string
	for _, e := range r.evs {
		if l, ok := e.(event.Log); ok {
			logs = append(logs, l.Message)
		}
	}
	want := []string{"run 01-r1-10rps: 1 row(s) came after the run ended and are not in its evidence",
		"run 01-r1-10rps: 2 row(s) came after the run ended and are not in its evidence"}
	if fmt.Sprint(logs) != fmt.Sprint(want) {
		t.Errorf("logs %q, want %q", logs, want)
	}
	f, err := Open(r.dir)
	must(t, err)
	for id, n := range map[string]int64{testPlan[0].ID: 3, testPlan[1].ID: 5} {
		var got int64
		_, err := f.Requests(id, func(*stats.Request) { got++ })
		if err != nil || got != n {
			t.Errorf("run %s: %d rows (%v), want %d", id, got, err, n)
		}
	}
}

// Rows recorded from many goroutines while the run ends are each either
// in the run's evidence or counted late: none is lost without a trace.
func TestRowsRacingTheEndAreWrittenOrCounted(t *testing.T) {
	r := newRecorded(t)
	start := time.Unix(1_800_000_000, 0)
	run, err := r.rec.Begin(testPlan[0], start)
	must(t, err)
	const workers, each = 4, 500
	var wg sync.WaitGroup
	began := make(chan struct{}, workers)
	for g := range workers {
		wg.Go(func() {
			began <- struct{}{}
			for k := range each {
				run.Record(row(start, g*each+k))
			}
		})
	}
	for range workers {
		<-began
	}
	_, err = run.End(start.Add(time.Second), meta(testPlan[0], start), stats.Thresholds{})
	must(t, err)
	wg.Wait()
	f, err := Open(r.dir)
	must(t, err)
	var written int64
	_, err = f.Requests(testPlan[0].ID, func(*stats.Request) { written++ })
	must(t, err)
	if late := run.late.Load(); written+late != workers*each {
		t.Errorf("%d written + %d late, want %d", written, late, workers*each)
	}
}
