package local_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tokex-dev/tokex/cmd/tokex/cli"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/internal/knowncost"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/local"
	"github.com/tokex-dev/tokex/runner/replay"
	"github.com/tokex-dev/tokex/subject"
	"github.com/tokex-dev/tokex/tui"
)

// TestMain lets this test binary stand in for the tokex binary (the local
// driver starts "<exe> serve --config …" as its embedded server) and for a
// server of known CPU cost (knowncost).
func TestMain(m *testing.M) {
	knowncost.RunIfServer()
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "embedded-until-killed" {
		embeddedUntilKilled()
	}
	os.Exit(m.Run())
}

const secret = "campaign-secret-Zq9"

type campaignRun struct {
	dash    *tui.Model // the dashboard, fed live
	dir     string
	summary *stats.Summary
	err     error
	events  []event.Event
	drv     *local.Driver
}

func tinyCampaign() config.Campaign {
	c := config.Article()
	c.Name = "tiny"
	c.Stages = []float64{20, 40}
	c.Rounds = 2
	c.Duration = 2 * time.Second
	c.Warmup = time.Second
	c.Sanity.Duration = time.Second
	c.Agents.Count = 3
	c.Subject.Alg, c.Target.Embedded.SigningAlg = subject.ES256, subject.ES256
	// These tests check the mechanics on shared 2-core machines, where the
	// suite itself saturates the host; TestStarvedGeneratorFailsTheRun
	// checks the warnings.
	c.Thresholds.AllowWarnings = stats.InvalidatingCodes
	return c
}

func runCampaign(t *testing.T, ctx context.Context, c config.Campaign, dir string, resume map[string]*stats.Run, cancelAfter func(event.Event) bool, cancel func()) campaignRun {
	t.Helper()
	exe, _ := os.Executable()
	key, err := subject.GenerateKey(c.Subject.Alg)
	if err != nil {
		t.Fatal(err)
	}
	var w *evidence.Writer
	id := filepath.Base(dir)
	if resume == nil {
		y, _ := c.Redacted()
		w, err = evidence.Create(dir, y, evidence.Manifest{Tool: "tokex", Version: "test", CampaignID: id, Name: c.Name, Driver: "local", Started: time.Now()})
	} else {
		w, err = evidence.Resume(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	bus := &event.Bus{}
	bus.Subscribe(w.Consume)
	res := campaignRun{dir: dir, dash: tui.New(tui.Options{Live: true})}
	bus.Subscribe(func(e event.Event) { res.dash.Update(tui.EventMsg{Event: e}) })
	bus.Subscribe(func(e event.Event) {
		res.events = append(res.events, e)
		if cancelAfter != nil && cancelAfter(e) {
			cancel()
		}
	})
	drv := &local.Driver{Cfg: c, CampaignID: id, Secret: secret, SubjectKey: key, Exe: exe}
	camp := &runner.Campaign{Cfg: c, ID: id, Driver: drv, Bus: bus, Evidence: w, Tool: "tokex test", Done: resume}
	res.summary, res.err = camp.Run(ctx)
	if err := drv.Close(); err != nil {
		t.Errorf("driver close: %v", err)
	}
	res.drv = drv
	return res
}

func TestCampaignEndToEndOnEmbeddedServer(t *testing.T) {
	c := tinyCampaign()
	dir := filepath.Join(t.TempDir(), "c1")
	r := runCampaign(t, context.Background(), c, dir, nil, nil, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	s := r.summary
	if s.Status != "done" || !s.ThresholdsPassed || len(s.Stages) != 2 || s.Sanity == nil {
		t.Fatalf("summary: %+v", s)
	}
	for _, st := range s.Stages {
		if len(st.Runs) != 2 || st.ReportedRun == "" {
			t.Errorf("stage %v: %d runs, reported %q", st.TargetRPS, len(st.Runs), st.ReportedRun)
		}
		for _, run := range st.Runs {
			want := int64(st.TargetRPS * 2)
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
	if a, b := mustJSON(t, again.Stages), mustJSON(t, onDisk.Stages); a != b {
		t.Errorf("recomputed stages differ from summary.json:\n%s\n%s", a, b)
	}
	for _, name := range []string{evidence.SummaryMD, evidence.ConfigFile, evidence.ManifestFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, evidence.SummaryMD))
	if !strings.Contains(string(md), "| 20/s | 100.0% achieved | 40 |") {
		t.Errorf("summary.md:\n%s", md)
	}
	assertNoSecret(t, dir, secret)
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
	for _, e := range r.events {
		if w, ok := e.(event.Window); ok && w.Phase == stats.Measured {
			windows[w.RunID]++
		}
	}
	if len(windows) != 5 {
		t.Errorf("measured windows per run: %v", windows)
	}
}

func TestCampaignInterruptKeepsEvidenceAndResumes(t *testing.T) {
	c := tinyCampaign()
	dir := filepath.Join(t.TempDir(), "c2")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Stop in the middle of the third run (01 and 00 are finished).
	r := runCampaign(t, ctx, c, dir, nil, func(e event.Event) bool {
		w, ok := e.(event.Window)
		return ok && strings.HasPrefix(w.RunID, "02-") && w.Phase == stats.Measured
	}, cancel)
	if r.summary == nil || r.summary.Status != "aborted" {
		t.Fatalf("status: %+v err %v", r.summary, r.err)
	}
	// The child server is gone.
	pid := lastEnginePID
	if pid == 0 {
		t.Fatal("no embedded server started")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("embedded server %d still running: %v", pid, err)
	}
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]string{}
	for _, e := range f.Manifest.Runs {
		statuses[e.ID] = e.Status
	}
	if statuses["00-sanity"] != "done" || statuses["01-r1-20rps"] != "done" || statuses["02-r1-40rps"] != "aborted" || statuses["03-r2-20rps"] != "pending" {
		t.Fatalf("statuses %v", statuses)
	}
	first, _ := f.RunStats("01-r1-20rps")
	// An aborted folder replays as far as it got and says what is missing.
	src, err := replay.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(src.Notes, "\n"), "campaign aborted: 2 of 5 runs finished") {
		t.Errorf("replay notes: %v", src.Notes)
	}

	// Resume: finished runs are not redone.
	done := map[string]*stats.Run{}
	for _, e := range f.Manifest.Runs {
		if e.Status == "done" {
			done[e.ID], _ = f.RunStats(e.ID)
		}
	}
	r2 := runCampaign(t, context.Background(), c, dir, done, nil, nil)
	if r2.err != nil || r2.summary.Status != "done" || !r2.summary.ThresholdsPassed {
		t.Fatalf("resume: %+v %v", r2.summary, r2.err)
	}
	for _, e := range r2.events {
		if rs, ok := e.(event.RunStarted); ok && (rs.Run.ID == "00-sanity" || rs.Run.ID == "01-r1-20rps") {
			t.Errorf("resume re-ran %s", rs.Run.ID)
		}
	}
	f2, _ := evidence.Open(dir)
	kept, _ := f2.RunStats("01-r1-20rps")
	if mustJSON(t, kept) != mustJSON(t, first) {
		t.Error("a finished run's evidence changed on resume")
	}
	if n := len(r2.summary.Stages[0].Runs) + len(r2.summary.Stages[1].Runs); n != 4 {
		t.Errorf("%d runs in summary", n)
	}
}

func TestSanityFailsOnUnreachableTarget(t *testing.T) {
	c := tinyCampaign()
	c.Target.URL = "http://127.0.0.1:1/as/token.oauth2"
	dir := filepath.Join(t.TempDir(), "c3")
	r := runCampaign(t, context.Background(), c, dir, nil, nil, nil)
	if !errors.Is(r.err, runner.ErrSanity) || !strings.Contains(r.err.Error(), "conn_error") {
		t.Fatalf("err = %v", r.err)
	}
	for _, e := range r.events {
		if rs, ok := e.(event.RunStarted); ok && !rs.Run.Sanity {
			t.Errorf("ran %s after a failed sanity run", rs.Run.ID)
		}
	}
}

// lastEnginePID is the pid of the latest embedded server child.
var lastEnginePID int

func init() {
	local.OnEmbeddedStart = func(pid int) { lastEnginePID = pid }
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// assertNoSecret searches every file of the folder, decompressed.
func assertNoSecret(t *testing.T, dir, secret string) {
	t.Helper()
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Errorf("%s: %v", p, err)
				return nil
			}
			b, _ = io.ReadAll(zr)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s contains the client secret", p)
		}
		return nil
	})
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

	c := tinyCampaign()
	c.Stages, c.Rounds, c.Duration, c.Warmup = []float64{100}, 1, 3*time.Second, time.Second
	c.Sanity.Enabled = false
	c.Thresholds.AllowWarnings = nil
	dir := filepath.Join(t.TempDir(), "starved")
	r := runCampaign(t, context.Background(), c, dir, nil, nil, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	run := r.summary.Stages[0].Runs[0]
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
	if run.ThresholdsPassed || r.summary.ThresholdsPassed {
		t.Errorf("a starved run passed: %+v", run.Thresholds)
	}
	md, _ := os.ReadFile(filepath.Join(dir, evidence.SummaryMD))
	if !strings.Contains(string(md), "[generator_starved]") && !strings.Contains(string(md), "[generator_late]") {
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
	if a, b := mustJSON(t, again.Stages[0].Runs[0].Warnings), mustJSON(t, run.Warnings); a != b {
		t.Errorf("recomputed warnings differ:\n%s\n%s", a, b)
	}
	allowed := c.Thresholds
	allowed.AllowWarnings = stats.InvalidatingCodes
	if s, _ := f.Recompute(allowed); s == nil || !s.Stages[0].Runs[0].ThresholdsPassed {
		t.Errorf("allowed warnings still fail: %+v", s.Stages[0].Runs[0].Thresholds)
	}
	// The pre-flight estimate was measured and recorded.
	var capa *event.Capacity
	for _, e := range r.events {
		if v, ok := e.(event.Capacity); ok {
			capa = &v
		}
	}
	if capa == nil || capa.Estimate.SustainableRPS <= 0 || capa.Estimate.ServerCPUMs <= 0 || !strings.Contains(capa.Estimate.Method, "calibration exchanges") {
		t.Errorf("pre-flight: %+v", capa)
	}
}
