package local_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/truth"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/local/localtest"
)

// busyServer starts testdata/busy-server.js: one node thread that burns
// costMs of CPU per request and serves the requests its clients abandoned.
func busyServer(t *testing.T, costMs int) (url string, pid int) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		truth.Unavailable(t, "node is not on PATH: the single-threaded server of this test is a node script")
	}
	cmd := exec.Command(node, filepath.Join("testdata", "busy-server.js"))
	cmd.Env = append(os.Environ(), fmt.Sprintf("COST_MS=%d", costMs))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case line <- sc.Text():
			default:
			}
		}
	}()
	select {
	case l := <-line:
		var port int
		if _, err := fmt.Sscanf(l, "listening %d %d", &port, &pid); err != nil {
			t.Fatalf("busy server said %q", l)
		}
		return fmt.Sprintf("http://127.0.0.1:%d", port), pid
	case <-time.After(30 * time.Second):
		t.Fatal("the busy server did not start")
	}
	return "", 0
}

// backlogSearch is a capacity search of two probes of one round against a
// 20 ms node server (about 50/s): 150/s breaks it and leaves seconds of
// abandoned requests behind; 30/s, below its capacity, passes once they
// are served.
func backlogSearch(url string, pid int, bound time.Duration) config.Campaign {
	c := config.Article()
	c.Name = "cool-down"
	c.Target.URL, c.Target.PID = url+"/token", pid
	c.Stages, c.Sanity.Enabled = []float64{150}, false
	c.Idle = 2 * time.Second
	c.Sampling = 250 * time.Millisecond
	c.Warmup, c.Duration = 500*time.Millisecond, 3500*time.Millisecond
	c.Agents.Count, c.Agents.MaxInFlight = 2, 200
	c.Request.Timeout = time.Second
	c.Subject.Alg = jose.ES256
	c.Capacity = config.Capacity{Start: 150, Factor: 5, Rounds: 1, MaxProbes: 2, Resolution: 0.05, CoolDown: bound}
	c.Thresholds = stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99, AllowWarnings: stats.InvalidatingCodes}
	return c
}

// TestTruthCoolDownOutlastsANodeBacklog (issue 23): against a single-
// threaded node server that keeps serving abandoned requests, the fixed
// cool-down (the warmup, at least 5 s) started the lower probe into the
// backlog and it failed on timeouts; the cool-down that waits until the
// engine is back at rest lets it pass. Both are run here: a 5 s bound
// stands for the old fixed time.
func TestTruthCoolDownOutlastsANodeBacklog(t *testing.T) {
	truth.Require(t)
	for _, tc := range []struct {
		name  string
		bound time.Duration
	}{{"the old fixed 5 s", 5 * time.Second}, {"until at rest", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			url, pid := busyServer(t, 20)
			c := backlogSearch(url, pid, tc.bound)
			var progress []string
			r := localtest.Run(t, context.Background(), c, filepath.Join(t.TempDir(), "cd"), localtest.Options{Search: true,
				Observe: func(e event.Event) {
					if l, ok := e.(event.Log); ok && l.Source == event.CoolDownSource {
						progress = append(progress, l.Message)
					}
				}})
			if r.Err != nil || r.Summary.Capacity == nil || len(r.Summary.Capacity.Probes) != 2 {
				t.Fatalf("search: %v %+v", r.Err, r.Summary.Capacity)
			}
			probes := r.Summary.Capacity.Probes
			lower := probes[1].Rounds[0]
			st := findRun(t, r.Dir, lower.RunID)
			cd := st.CoolDown
			if probes[0].Verdict != curve.Broken || cd == nil {
				t.Fatalf("probe 1 %s (want broken), probe 2's cool-down %+v", probes[0].Verdict, cd)
			}
			t.Logf("cool-down %.1f s (bound %.0f s) settled %v: %s; engine %v cores, probe %v ms (unloaded %v ms, %d probe requests); then %s: %s, success %.4f, p95 %.1f ms, errors %v",
				cd.Seconds, cd.BoundSeconds, cd.Settled, cd.Reason, deref(cd.EngineCores), deref(cd.ProbeMs), deref(cd.UnloadedMs), cd.Probes,
				curve.RateLabel(probes[1].Rate), probes[1].Verdict, st.SuccessRatio, st.LatencyMs.P95, st.Errors)
			t.Logf("progress: %s", strings.Join(progress, " | "))
			// A lower probe the host starved (the node server or the
			// generator without its core) is the machine's, not the backlog's.
			if codes := hostCodes(st.Warnings); codes != "" && probes[1].Verdict != curve.Pass {
				t.Skipf("invalid: the lower probe ran on a saturated host (%s): whether the backlog was served cannot be told", codes)
			}
			switch {
			case tc.bound > 0 && cd.Settled:
				t.Skipf("the backlog drained within the old 5 s: this machine served it faster than planned; nothing to contrast")
			case tc.bound > 0 && probes[1].Verdict != curve.Broken:
				t.Errorf("the lower probe passed after the old 5 s cool-down: the scenario does not reproduce issue 23")
			case tc.bound == 0 && (!cd.Settled || cd.Seconds <= 5):
				t.Errorf("the cool-down did not wait for the backlog (%.1f s, settled %v)", cd.Seconds, cd.Settled)
			case tc.bound == 0 && probes[1].Verdict != curve.Pass:
				t.Errorf("the lower probe, %s, did not pass after the cool-down: %s", curve.RateLabel(probes[1].Rate), probes[1].Reason)
			}
		})
	}
}

// hostCodes are the warnings that say the host, not the server, set a
// run's figures.
func hostCodes(ws []stats.Warning) string {
	var out []string
	for _, w := range ws {
		if w.Code == stats.WarnHostSaturated || w.Code == stats.WarnGeneratorStarved || w.Code == stats.WarnGeneratorLate {
			out = append(out, string(w.Code))
		}
	}
	return strings.Join(out, ",")
}

func deref(p *float64) any {
	if p == nil {
		return "n/a"
	}
	return *p
}

func findRun(t *testing.T, dir, id string) *stats.Run {
	t.Helper()
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.RunStats(id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
