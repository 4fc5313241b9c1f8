package runner_test

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
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/runnertest"
)

// scalingDriver is the fake driver with engine counts: it records every
// scale and restore in order with the runs, and can fail a scale.
type scalingDriver struct {
	*runnertest.Driver
	scaleErr   map[int]error
	restoreErr error

	smu      sync.Mutex
	log      []string // "scale 2", run ids, "restore 3"
	current  int
	original int
}

func newScalingDriver(n int) *scalingDriver {
	d := &scalingDriver{Driver: &runnertest.Driver{N: n}, current: 3, original: 3}
	return d
}

func (d *scalingDriver) Run(ctx context.Context, p event.PlannedRun, out runner.Output) (runner.RunResult, error) {
	d.smu.Lock()
	d.log = append(d.log, p.ID)
	cur := d.current
	d.smu.Unlock()
	if p.Replicas != cur {
		return runner.RunResult{}, fmt.Errorf("run %s of %d engines with %d running", p.ID, p.Replicas, cur)
	}
	return d.Driver.Run(ctx, p, out)
}

func (d *scalingDriver) Scale(ctx context.Context, n int, _ runner.Output) (summary.Scale, error) {
	d.smu.Lock()
	defer d.smu.Unlock()
	d.log = append(d.log, fmt.Sprintf("scale %d", n))
	if err := d.scaleErr[n]; err != nil {
		return summary.Scale{}, err
	}
	s := summary.Scale{At: time.Now(), Replicas: n, From: d.current, Workload: "deployment/fake", Engines: make([]string, n)}
	d.current = n
	return s, ctx.Err()
}

func (d *scalingDriver) Restore(context.Context, runner.Output) (summary.Scale, bool, error) {
	d.smu.Lock()
	defer d.smu.Unlock()
	if d.current == d.original {
		return summary.Scale{}, false, nil
	}
	d.log = append(d.log, fmt.Sprintf("restore %d", d.original))
	if d.restoreErr != nil {
		return summary.Scale{}, false, d.restoreErr
	}
	s := summary.Scale{At: time.Now(), Replicas: d.original, From: d.current, Restore: true, Workload: "deployment/fake"}
	d.current = d.original
	return s, true, nil
}

func (d *scalingDriver) steps() []string {
	d.smu.Lock()
	defer d.smu.Unlock()
	return slices.Clone(d.log)
}

func scalingCampaign(counts ...int) config.Campaign {
	c := runnertest.Campaign()
	c.Stages, c.Rounds = []float64{10}, 2
	c.Target.Embedded.Engines = counts
	return c
}

// TestCampaignOverEngineCounts (issue 28 item 1): each count is scaled to
// before its runs, whose ids and plans carry it; the original count is
// restored at the end; the manifest records every scale; the summary has a
// stage per count and rate, and reads back the same from the evidence.
func TestCampaignOverEngineCounts(t *testing.T) {
	d := newScalingDriver(30)
	dir := filepath.Join(t.TempDir(), "c")
	r := runFake(t, context.Background(), scalingCampaign(1, 2), d, dir, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := []string{"scale 1", "00-n1-sanity", "01-n1-r1-10rps", "02-n1-r2-10rps", "scale 2", "03-n2-sanity", "04-n2-r1-10rps", "05-n2-r2-10rps", "restore 3"}
	if got := d.steps(); !slices.Equal(got, want) {
		t.Fatalf("steps %v\nwant  %v", got, want)
	}
	s := r.summary
	if len(s.Stages) != 2 || s.Stages[0].Replicas != 1 || s.Stages[1].Replicas != 2 || s.Stages[1].Label() != "10/s, 2 engines" {
		t.Fatalf("stages %+v", s.Stages)
	}
	if s.Scaling == nil || s.Scaling.Base != 1 || len(s.Scaling.Counts) != 2 || s.Scaling.Counts[1].Runs != 2 {
		t.Fatalf("scaling %+v", s.Scaling)
	}
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var scales []string
	for _, sc := range f.Manifest.Scaling {
		scales = append(scales, fmt.Sprintf("%d→%d %v", sc.From, sc.Replicas, sc.Restore))
	}
	if !slices.Equal(scales, []string{"3→1 false", "1→2 false", "2→3 true"}) {
		t.Errorf("manifest scaling %v", scales)
	}
	for _, e := range f.Manifest.Runs {
		if e.Plan.Replicas == 0 || !strings.Contains(e.ID, fmt.Sprintf("-n%d-", e.Plan.Replicas)) || e.Meta == nil || e.Meta.Replicas != e.Plan.Replicas {
			t.Errorf("run %s: plan replicas %d, meta %+v", e.ID, e.Plan.Replicas, e.Meta)
		}
	}
	again, err := f.Recompute(s.Thresholds)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Stages) != 2 || again.Scaling == nil || len(again.Scaling.Counts) != 2 {
		t.Errorf("recomputed: %d stages, scaling %+v", len(again.Stages), again.Scaling)
	}
}

// TestCampaignRestoresEngines: the original count is restored whatever
// ends the campaign — a failed run, Ctrl-C, a scale that fails — and a
// driver that cannot scale is refused before any run.
func TestCampaignRestoresEngines(t *testing.T) {
	boom := errors.New("boom")
	t.Run("failed run", func(t *testing.T) {
		d := newScalingDriver(10)
		d.RunErr = map[string]error{"04-n2-r1-10rps": boom}
		r := runFake(t, context.Background(), scalingCampaign(1, 2), d, filepath.Join(t.TempDir(), "c"), nil)
		if r.err == nil || r.summary.Status != "failed" {
			t.Fatalf("%+v %v", r.summary, r.err)
		}
		if got := d.steps(); got[len(got)-1] != "restore 3" || got[len(got)-2] != "04-n2-r1-10rps" {
			t.Errorf("steps %v", got)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		d := newScalingDriver(10)
		d.During = func(p event.PlannedRun) {
			if p.ID == "01-n1-r1-10rps" {
				cancel()
			}
		}
		r := runFake(t, ctx, scalingCampaign(1, 2), d, filepath.Join(t.TempDir(), "c"), nil)
		if r.summary.Status != "aborted" {
			t.Fatalf("%+v %v", r.summary, r.err)
		}
		if got := d.steps(); !slices.Equal(got, []string{"scale 1", "00-n1-sanity", "01-n1-r1-10rps", "restore 3"}) {
			t.Errorf("steps %v", got)
		}
	})
	t.Run("scale fails", func(t *testing.T) {
		d := newScalingDriver(10)
		d.scaleErr = map[int]error{2: boom}
		r := runFake(t, context.Background(), scalingCampaign(1, 2), d, filepath.Join(t.TempDir(), "c"), nil)
		if r.err == nil || !strings.Contains(r.summary.Reason, "scale the engines to 2: boom") {
			t.Fatalf("%+v %v", r.summary, r.err)
		}
		if got := d.steps(); got[len(got)-1] != "restore 3" {
			t.Errorf("steps %v", got)
		}
	})
	t.Run("restore fails: said", func(t *testing.T) {
		d := newScalingDriver(10)
		d.restoreErr = boom
		r := runFake(t, context.Background(), scalingCampaign(2), d, filepath.Join(t.TempDir(), "c"), nil)
		said := false
		for _, e := range r.events {
			if l, ok := e.(event.Log); ok && l.Level == "error" && strings.Contains(l.Message, "restoring the engines: boom") {
				said = true
			}
		}
		if !said {
			t.Error("a failed restore is not said")
		}
	})
	t.Run("driver cannot scale", func(t *testing.T) {
		d := &runnertest.Driver{N: 10}
		r := runFake(t, context.Background(), scalingCampaign(1, 2), d, filepath.Join(t.TempDir(), "c"), nil)
		if r.err == nil || !strings.Contains(r.err.Error(), "cannot set the engine count") || len(d.Runs()) != 0 {
			t.Fatalf("err %v, ran %v", r.err, d.Runs())
		}
	})
}

// TestCampaignOverEngineCountsResumes: a resumed campaign skips the counts
// it measured and scales only to those left.
func TestCampaignOverEngineCountsResumes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := newScalingDriver(10)
	d.During = func(p event.PlannedRun) {
		if p.ID == "04-n2-r1-10rps" {
			cancel()
		}
	}
	dir := filepath.Join(t.TempDir(), "c")
	runFake(t, ctx, scalingCampaign(1, 2), d, dir, nil)
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]*stats.Run{}
	for _, e := range f.Manifest.Runs {
		if e.Status == "done" {
			done[e.ID], _ = f.RunStats(e.ID)
		}
	}
	d2 := newScalingDriver(10)
	r := runFake(t, context.Background(), scalingCampaign(1, 2), d2, dir, done)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := d2.steps(); !slices.Equal(got, []string{"scale 2", "04-n2-r1-10rps", "05-n2-r2-10rps", "restore 3"}) {
		t.Errorf("resumed steps %v", got)
	}
	if len(r.summary.Stages) != 2 || len(r.summary.Stages[0].Runs) != 2 {
		t.Errorf("stages %+v", r.summary.Stages)
	}
}
