package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/internal/knowncost"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/local"
	"github.com/tokex-dev/tokex/runner/local/localtest"
	"github.com/tokex-dev/tokex/runner/replay"
)

// TestMain lets this test binary stand in for tokex-engine (the local
// driver starts "<exe> engine --config … --ready-fd 3" as its embedded
// server) and for a server of known CPU cost (knowncost).
func TestMain(m *testing.M) {
	knowncost.RunIfServer()
	localtest.RunIfServer()
	if len(os.Args) > 1 && os.Args[1] == "embedded-until-killed" {
		embeddedUntilKilled()
	}
	os.Exit(m.Run())
}

const secret = localtest.Secret

type campaignRun struct {
	dir     string
	summary *summary.Summary
	err     error
	events  []event.Event
	drv     *local.Driver
}

func tinyCampaign() config.Campaign { return localtest.Tiny() }

func runCampaign(t *testing.T, ctx context.Context, c config.Campaign, dir string, resume map[string]*stats.Run, cancelAfter func(event.Event) bool, cancel func()) campaignRun {
	t.Helper()
	r := localtest.Run(t, ctx, c, dir, localtest.Options{Resume: resume, Observe: func(e event.Event) {
		if cancelAfter != nil && cancelAfter(e) {
			cancel()
		}
	}})
	return campaignRun{dir: r.Dir, summary: r.Summary, err: r.Err, events: r.Events, drv: r.Driver}
}

func TestCampaignInterruptKeepsEvidenceAndResumes(t *testing.T) {
	c := tinyCampaign()
	c.Rounds, c.Warmup, c.Duration = 1, 0, time.Second // sanity, 20/s, 40/s: 1 s each
	dir := filepath.Join(t.TempDir(), "c2")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Stop in the middle of the last run (01 and 00 are finished).
	r := runCampaign(t, ctx, c, dir, nil, func(e event.Event) bool {
		p, ok := e.(event.PhaseChanged)
		return ok && strings.HasPrefix(p.RunID, "02-") && p.Phase == stats.Measured
	}, cancel)
	if r.summary == nil || r.summary.Status != "aborted" {
		t.Fatalf("status: %+v err %v", r.summary, r.err)
	}
	// The child server is gone.
	pid := int(lastEnginePID.Load())
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
	statuses := map[string]stats.RunStatus{}
	for _, e := range f.Manifest.Runs {
		statuses[e.ID] = e.Status
	}
	if statuses["00-sanity"] != "done" || statuses["01-r1-20rps"] != "done" || statuses["02-r1-40rps"] != "aborted" || len(statuses) != 3 {
		t.Fatalf("statuses %v", statuses)
	}
	first, _ := f.RunStats("01-r1-20rps")
	// An aborted folder replays as far as it got and says what is missing.
	src, err := replay.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(src.Notes, "\n"), "campaign aborted: 2 of 3 runs finished") {
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
	if n := len(r2.summary.Stages[0].Runs) + len(r2.summary.Stages[1].Runs); n != 2 {
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

// lastEnginePID is the pid of the latest embedded server child (read by
// a test that does not run in parallel).
var lastEnginePID atomic.Int64

func init() {
	local.OnEmbeddedStart = func(pid int) { lastEnginePID.Store(int64(pid)) }
}

func mustJSON(t *testing.T, v any) string { return localtest.MustJSON(t, v) }

func assertNoSecret(t *testing.T, dir, secret string) { localtest.AssertNoSecret(t, dir, secret) }
