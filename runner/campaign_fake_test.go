package runner_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/runnertest"
)

type fakeRun struct {
	summary *summary.Summary
	err     error
	events  []event.Event
	dir     string
}

func runFake(t *testing.T, ctx context.Context, c config.Campaign, d runner.Driver, dir string, done map[string]*stats.Run) fakeRun {
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
	camp := &runner.Campaign{Cfg: c, ID: "c", Driver: d, Bus: bus, Evidence: w, Tool: "test", Done: done}
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
func TestCampaignStagesTimesRounds(t *testing.T) { synctest.Test(t, testCampaignStagesTimesRounds) }

func testCampaignStagesTimesRounds(t *testing.T) {
	d := &runnertest.Driver{N: 40}
	r := runFake(t, context.Background(), runnertest.Campaign(), d, filepath.Join(t.TempDir(), "c"), nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	ids := []string{"00-sanity", "01-r1-10rps", "02-r1-20rps", "03-r2-10rps", "04-r2-20rps"}
	if d.Starts() != 1 || !slices.Equal(d.Runs(), ids) || !slices.Equal(d.Rates(), []float64{5, 10, 20, 10, 20}) {
		t.Fatalf("driver: %d starts, runs %v at %v", d.Starts(), d.Runs(), d.Rates())
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
		if st.TargetRPS != runnertest.Campaign().Stages[i] || len(st.Runs) != 2 || st.ReportedRun == "" {
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
func TestCampaignInterruptAndResume(t *testing.T) { synctest.Test(t, testCampaignInterruptAndResume) }

func testCampaignInterruptAndResume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &runnertest.Driver{N: 40, During: func(p event.PlannedRun) {
		if p.ID == "02-r1-20rps" {
			cancel()
		}
	}}
	dir := filepath.Join(t.TempDir(), "c")
	r := runFake(t, ctx, runnertest.Campaign(), d, dir, nil)
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

	d2 := &runnertest.Driver{N: 40}
	r2 := runFake(t, context.Background(), runnertest.Campaign(), d2, dir, done)
	if r2.err != nil || r2.summary.Status != "done" {
		t.Fatalf("resume: %+v %v", r2.summary, r2.err)
	}
	if want := []string{"02-r1-20rps", "03-r2-10rps", "04-r2-20rps"}; !slices.Equal(d2.Runs(), want) {
		t.Errorf("resume ran %v, want %v", d2.Runs(), want)
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
		d      *runnertest.Driver
		ran    []string
		reason string
	}{
		{"start", &runnertest.Driver{N: 10, StartErr: boom}, nil, "boom"},
		{"run", &runnertest.Driver{N: 10, RunErr: map[string]error{"01-r1-10rps": boom}}, []string{"00-sanity", "01-r1-10rps"}, "boom"},
		{"sanity", &runnertest.Driver{N: 10, Status: func(event.PlannedRun) int { return 503 }}, []string{"00-sanity"}, "sanity run failed: 0 of 10 exchanges succeeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := runFake(t, context.Background(), runnertest.Campaign(), c.d, filepath.Join(t.TempDir(), "c"), nil)
				if r.err == nil || r.summary == nil || r.summary.Status != "failed" || !strings.HasPrefix(r.summary.Reason, c.reason) {
					t.Fatalf("summary %+v, err %v", r.summary, r.err)
				}
				if !slices.Equal(c.d.Runs(), c.ran) {
					t.Errorf("ran %v, want %v", c.d.Runs(), c.ran)
				}
				if got := sequence(r.events); got[len(got)-1] != "finished failed" {
					t.Errorf("events: %v", got)
				}
			})
		})
	}
}

// TestCampaignPlanRefusedFinishesTheFolder: when the manifest cannot take
// the plan (here more runs than a folder holds), the campaign does not
// leave its folder "running" with nothing saying why: it ends failed, the
// reason recorded, and says so on the bus.
func TestCampaignPlanRefusedFinishesTheFolder(t *testing.T) {
	t.Parallel()
	c := runnertest.Campaign()
	c.Rounds = stats.MaxRuns // 2 stages a round: twice as many runs as a folder holds
	d := &runnertest.Driver{N: 40}
	dir := filepath.Join(t.TempDir(), "c")
	r := runFake(t, context.Background(), c, d, dir, nil)
	if r.err == nil || !strings.Contains(r.err.Error(), "at most") {
		t.Fatalf("error %v, want the plan refused", r.err)
	}
	if d.Starts() != 0 {
		t.Errorf("the driver was started %d times", d.Starts())
	}
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Manifest.Status != summary.CampaignFailed || !strings.Contains(f.Manifest.Reason, "at most") {
		t.Errorf("manifest says %q (%q), want failed with the reason", f.Manifest.Status, f.Manifest.Reason)
	}
	if seq := sequence(r.events); !slices.Equal(seq, []string{"finished failed"}) {
		t.Errorf("events %v", seq)
	}
}
