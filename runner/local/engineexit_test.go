package local_test

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
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
)

// killedEngineCampaign is two short runs against a knowncost server on
// this host, sampled through target.pid.
func killedEngineCampaign(url string, pid int) config.Campaign {
	c := knownCostCampaign(40, url, pid)
	c.Name = "engine-exit"
	c.Rounds = 2
	c.Warmup = 300 * time.Millisecond
	c.Duration = 1200 * time.Millisecond
	c.Agents.Count = 2
	c.Request.Timeout = 2 * time.Second
	c.Thresholds.AllowWarnings = stats.InvalidatingCodes // a busy test machine
	c.Thresholds.P95Ms = 2000
	return c
}

// TestEngineKilledMidRunFailsTheRun (issue 23): a server killed in the
// middle of a measured run used to be sampled as if alive, its CPU per
// exchange extrapolated over the window (10.29 CPU-ms against ~3.2) and
// reported, and the campaign ran on into the next run until the target
// was unreachable for 10 s. Now the run stops when the sampled process
// exits, fails with the reason and no CPU figure, and the campaign stops
// there. Its server, restarted under a new PID on the same port, is
// refused by target.pid on resume (with the listening process named), and
// taken with --pid listen, the manifest saying which process was sampled
// and how it was found.
func TestEngineKilledMidRunFailsTheRun(t *testing.T) {
	t.Parallel()
	srv := knowncost.StartForTest(t, knowncost.Options{Cost: time.Millisecond})
	c := killedEngineCampaign(srv.URL, srv.PID)
	dir := filepath.Join(t.TempDir(), "exit")
	killed := false
	r := localtest.Run(t, context.Background(), c, dir, localtest.Options{Observe: func(e event.Event) {
		// 300 ms into the first run's measured phase.
		if p, ok := e.(event.PhaseChanged); ok && !killed && strings.HasPrefix(p.RunID, "00-") && p.Phase == stats.Measured {
			killed = true
			time.AfterFunc(time.Until(p.At.Add(300*time.Millisecond)), func() { _ = syscall.Kill(srv.PID, syscall.SIGKILL) })
		}
	}})
	if !killed {
		t.Fatal("the first run never reached its measured phase")
	}
	if !errors.Is(r.Err, runner.ErrEngineExited) || r.Summary == nil || r.Summary.Status != summary.CampaignFailed {
		t.Fatalf("campaign: err %v, want the engine gone", r.Err)
	}
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first, second := f.Manifest.Runs[0], f.Manifest.Runs[1]
	if first.Status != stats.StatusFailed || !strings.Contains(first.Reason, "exited") || second.Status != stats.StatusPending {
		t.Fatalf("runs: %s %s %q; %s %s (the campaign ran on after the engine died)", first.ID, first.Status, first.Reason, second.ID, second.Status)
	}
	st, err := f.RunStats(first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.EngineCPU != nil {
		t.Errorf("a dead engine's CPU was reported: %+v", *st.EngineCPU)
	}
	if !hasCode(st.Warnings, stats.WarnEngineExited) || !st.MeasuredEnd.Before(st.MeasuredStart.Add(c.Duration)) {
		t.Errorf("warnings %v; window %s–%s not cut where the engine died", st.Warnings, st.MeasuredStart, st.MeasuredEnd)
	}
	if p := f.Manifest.LastEngineProcess(); p == nil || p.PID != srv.PID || p.Found != "target.pid" || p.StartTicks == 0 {
		t.Errorf("recorded engine process %+v, want %d found by target.pid", p, srv.PID)
	}
	<-srv.Exited()
	resumeAfterRestart(t, c, dir, srv.URL, srv.PID, f)
}

// resumeAfterRestart restarts the server on the same port and resumes:
// target.pid names the dead process and is refused with a hint; --pid
// listen finds the new one and the campaign completes.
func resumeAfterRestart(t *testing.T, c config.Campaign, dir, srvURL string, oldPID int, f *evidence.Folder) {
	t.Helper()
	u, _ := url.Parse(srvURL)
	srv2 := knowncost.StartForTest(t, knowncost.Options{Cost: time.Millisecond, Addr: u.Host})
	done := map[string]*stats.Run{}
	r := localtest.Run(t, context.Background(), c, dir, localtest.Options{Resume: done})
	if r.Err == nil || !strings.Contains(r.Err.Error(), "--pid listen ("+strconv.Itoa(srv2.PID)) {
		t.Fatalf("resume with the dead target.pid %d: %v", oldPID, r.Err)
	}
	r = localtest.Run(t, context.Background(), c, dir, localtest.Options{Resume: done, Driver: func(d *local.Driver) { d.PID = local.PIDListen }})
	if r.Err != nil || r.Summary.Status != summary.CampaignDone {
		t.Fatalf("resume with --pid listen: %v", r.Err)
	}
	g, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ps := g.Manifest.EngineProcesses
	if len(ps) != 2 || ps[1].PID != srv2.PID || !strings.HasPrefix(ps[1].Found, "--pid listen: the process listening on port "+u.Port()) {
		t.Errorf("engine processes %+v", ps)
	}
	for _, run := range r.Summary.Stages[0].Runs {
		if run.Status != stats.StatusDone || run.EngineCPU == nil || run.EngineCPU.CPUMsPerExchange <= 0 {
			t.Errorf("resumed run %s: %s, engine CPU %+v", run.ID, run.Status, run.EngineCPU)
		}
	}
}

func hasCode(ws []stats.Warning, code stats.WarningCode) bool {
	for _, w := range ws {
		if w.Code == code {
			return true
		}
	}
	return false
}
