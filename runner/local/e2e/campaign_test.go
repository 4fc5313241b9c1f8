// Package e2e holds the local driver's end-to-end tests that span runner,
// collector and tui: a campaign on the embedded server whose live dashboard
// must equal its replay from disk, and a starved generator flagged on every
// surface.
package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/local/localtest"
	"github.com/tokex-dev/tokex/runner/replay"
	"github.com/tokex-dev/tokex/tui"
)

// TestMain lets this test binary stand in for tokex-engine.
func TestMain(m *testing.M) {
	localtest.RunIfServer()
	os.Exit(m.Run())
}

type campaignRun struct {
	localtest.Result
	dash *tui.Model // the dashboard, fed live
}

// runCampaign runs c with a live dashboard fed by the event stream.
func runCampaign(t *testing.T, c config.Campaign, dir string) campaignRun {
	t.Helper()
	dash := tui.New(tui.Options{Live: true})
	r := localtest.Run(t, context.Background(), c, dir, localtest.Options{Observe: func(e event.Event) {
		dash.Update(tui.EventMsg{Event: e})
	}})
	return campaignRun{Result: r, dash: dash}
}

func TestCampaignEndToEndOnEmbeddedServer(t *testing.T) {
	c := localtest.Tiny()
	c.Rounds, c.Duration = 1, time.Second // a sanity run, then 20/s and 40/s
	dir := filepath.Join(t.TempDir(), "c1")
	r := runCampaign(t, c, dir)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	s := r.Summary
	if s.Status != "done" || !s.ThresholdsPassed || len(s.Stages) != 2 || s.Sanity == nil {
		t.Fatalf("summary: %+v", s)
	}
	for _, st := range s.Stages {
		if len(st.Runs) != 1 || st.ReportedRun == "" {
			t.Errorf("stage %v: %d runs, reported %q", st.TargetRPS, len(st.Runs), st.ReportedRun)
		}
		for _, run := range st.Runs {
			want := int64(st.TargetRPS)
			if run.Requests != want || run.OK != want || run.Dropped != 0 {
				t.Errorf("%s: requests %d ok %d dropped %d, want %d", run.ID, run.Requests, run.OK, run.Dropped, want)
			}
			if run.EngineCPU == nil || run.EngineCPU.CPUMsPerExchange <= 0 || run.GeneratorCPU == nil {
				t.Errorf("%s: cpu %+v generator %+v", run.ID, run.EngineCPU, run.GeneratorCPU)
			}
			if run.WarmupRequests != int64(st.TargetRPS) {
				t.Errorf("%s: warmup requests %d", run.ID, run.WarmupRequests)
			}
		}
	}
	// Every figure is reproducible from the folder.
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.Recompute(c.Thresholds)
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := f.Summary()
	if err != nil {
		t.Fatal(err)
	}
	if a, b := localtest.MustJSON(t, again.Stages), localtest.MustJSON(t, onDisk.Stages); a != b {
		t.Errorf("recomputed stages differ from summary.json:\n%s\n%s", a, b)
	}
	for _, name := range []string{evidence.SummaryMD, evidence.ConfigFile, evidence.ManifestFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, evidence.SummaryMD))
	if !strings.Contains(string(md), "| 20/s | 100.0% achieved | 20 |") {
		t.Errorf("summary.md:\n%s", md)
	}
	localtest.AssertNoSecret(t, dir, localtest.Secret)
	// Replayed from disk, the dashboard ends on exactly the live screen.
	src, err := replay.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Notes) != 0 {
		t.Errorf("replay notes for a finished campaign: %v", src.Notes)
	}
	again2 := tui.New(tui.Options{Source: "replay"})
	if err := src.Play(context.Background(), 0, func(e event.Event) { again2.Update(tui.EventMsg{Event: e}) }); err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 60}} {
		r.dash.SetSize(size[0], size[1])
		again2.SetSize(size[0], size[1])
		if live, replayed := r.dash.View(), again2.View(); live != replayed {
			t.Errorf("%dx%d: live and replayed screens differ:\n--- live\n%s\n--- replay\n%s", size[0], size[1], live, replayed)
		}
	}
	// A finished run picked from the ladder shows the same charts too.
	for _, m := range []*tui.Model{r.dash, again2} {
		m.Update(tea.KeyMsg{Type: tea.KeyUp})
		m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	}
	if live, replayed := r.dash.View(), again2.View(); live != replayed || !strings.Contains(live, "» showing") {
		t.Errorf("history: live and replayed screens differ:\n--- live\n%s\n--- replay\n%s", live, replayed)
	}
	// Windows were live: measured windows for every counted run.
	windows := map[string]int{}
	for _, e := range r.Events {
		if w, ok := e.(event.Window); ok && w.Phase == stats.Measured {
			windows[w.RunID]++
		}
	}
	if len(windows) != 3 {
		t.Errorf("measured windows per run: %v", windows)
	}
}

// A generator that competes for its only CPU (GOMAXPROCS=1 and a goroutine
// burning it, as when pinned to one core beside another process) carries
// generator_starved or generator_late, fails its verdict, and says so in
// summary.json, summary.md, the dashboard and on a recompute from the
// folder; allowing the warnings lets the same evidence pass.
func TestStarvedGeneratorFailsTheRun(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	stop := make(chan struct{})
	var hog sync.WaitGroup
	hog.Add(1)
	go func() {
		defer hog.Done()
		x := 1
		for {
			select {
			case <-stop:
				return
			default:
			}
			for i := 0; i < 1e5; i++ {
				x = x*31 + i
			}
		}
	}()
	defer func() { close(stop); hog.Wait() }()

	c := localtest.Tiny()
	c.Stages, c.Rounds, c.Duration, c.Warmup = []float64{100}, 1, 3*time.Second, time.Second
	c.Sanity.Enabled = false
	c.Thresholds.AllowWarnings = nil
	dir := filepath.Join(t.TempDir(), "starved")
	r := runCampaign(t, c, dir)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	run := r.Summary.Stages[0].Runs[0]
	var codes []string
	for _, w := range run.Warnings {
		codes = append(codes, string(w.Code))
	}
	// At GOMAXPROCS=1 the hog holds the only P until Go preempts it (10 ms):
	// the schedule slips (late), and the process sits at its one core
	// (starved) unless other load on the machine takes that core away.
	if !slices.Contains(codes, string(stats.WarnGeneratorStarved)) && !slices.Contains(codes, string(stats.WarnGeneratorLate)) {
		t.Fatalf("neither generator_starved nor generator_late in %v", run.Warnings)
	}
	t.Logf("warnings: %v", run.Warnings)
	if run.ThresholdsPassed || r.Summary.ThresholdsPassed {
		t.Errorf("a starved run passed: %+v", run.Thresholds)
	}
	md, _ := os.ReadFile(filepath.Join(dir, evidence.SummaryMD))
	if !strings.Contains(string(md), "**generator_starved**") && !strings.Contains(string(md), "**generator_late**") {
		t.Errorf("summary.md lacks the warning:\n%s", md)
	}
	// The live dashboard flagged the run on the ladder.
	r.dash.SetSize(120, 40)
	if v := r.dash.View(); !strings.Contains(v, "00-r1-100rps") || !strings.Contains(v, "⚠") {
		t.Errorf("no badge on the dashboard:\n%s", v)
	}
	// Recomputed from the folder: the same warnings; allowed, it passes.
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.Recompute(c.Thresholds)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := localtest.MustJSON(t, again.Stages[0].Runs[0].Warnings), localtest.MustJSON(t, run.Warnings); a != b {
		t.Errorf("recomputed warnings differ:\n%s\n%s", a, b)
	}
	allowed := c.Thresholds
	allowed.AllowWarnings = stats.InvalidatingCodes
	if s, _ := f.Recompute(allowed); s == nil || !s.Stages[0].Runs[0].ThresholdsPassed {
		t.Errorf("allowed warnings still fail: %+v", s.Stages[0].Runs[0].Thresholds)
	}
	// The pre-flight estimate was measured and recorded.
	var fc *event.Forecast
	for _, e := range r.Events {
		if v, ok := e.(event.Forecast); ok {
			fc = &v
		}
	}
	if fc == nil || fc.Estimate.SustainableRPS <= 0 || fc.Estimate.ServerCPUMs <= 0 || !strings.Contains(fc.Estimate.Method, "calibration exchanges") {
		t.Errorf("pre-flight: %+v", fc)
	}
}
