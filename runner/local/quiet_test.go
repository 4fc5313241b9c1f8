package local

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// events keeps what a driver emits.
type events struct {
	mu  sync.Mutex
	all []event.Event
}

func (e *events) Emit(ev event.Event)   { e.mu.Lock(); e.all = append(e.all, ev); e.mu.Unlock() }
func (e *events) Record(*stats.Request) {}

func (e *events) checks() []event.HostCheck {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []event.HostCheck
	for _, ev := range e.all {
		if h, ok := ev.(event.HostCheck); ok {
			out = append(out, h)
		}
	}
	return out
}

// script is an othersSampler that answers the cores others used, one
// figure a call (the last one again when they run out).
func script(cores ...float64) othersSampler {
	var mu sync.Mutex
	i := 0
	return func(ctx context.Context, _ time.Duration) (float64, int, error) {
		mu.Lock()
		defer mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		v := cores[min(i, len(cores)-1)]
		i++
		return v, 2, ctx.Err()
	}
}

// TestHostCheckBeforeTheFirstRun (issue 27 item 2): tokex samples the
// machine before the first run and says at once when other processes use
// most of its cores; with --wait-quiet it waits, saying so, until they use
// less or the wait runs out. On main a busy machine was said nowhere until
// every run had failed.
func TestHostCheckBeforeTheFirstRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		wait   time.Duration
		others []float64
		states []event.HostState // the states said, in order, a wait's seconds as one
		last   float64           // the cores others used, said last
	}{
		{"quiet", 0, []float64{0.3}, []event.HostState{event.HostQuiet}, 0.3},
		{"busy, no wait", 0, []float64{1.6}, []event.HostState{event.HostBusy}, 1.6},
		{"busy, no wait asked, quiet later", 0, []float64{1.6, 0.1}, []event.HostState{event.HostBusy}, 1.6},
		// The mean of the last two seconds (--host-check 2s): 1.6 1.7 → 1.65, 1.7 0.2 → 0.95.
		{"waits until quiet", time.Hour, []float64{1.6, 1.7, 0.2, 0.1}, []event.HostState{event.HostWaiting, event.HostQuiet}, 0.95},
		{"the wait runs out", 30 * time.Millisecond, []float64{1.9}, []event.HostState{event.HostWaiting, event.HostStillBusy}, 1.9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := &Driver{HostCheck: 2 * time.Second, WaitQuiet: c.wait}
			var out events
			if err := d.checkHost(context.Background(), &out, script(c.others...)); err != nil {
				t.Fatal(err)
			}
			got := out.checks()
			if len(got) == 0 {
				t.Fatal("nothing said")
			}
			var states []event.HostState
			for i, h := range got {
				if i == 0 || h.State != got[i-1].State || h.State != event.HostWaiting {
					states = append(states, h.State)
				}
				if h.CPUs != 2 || h.QuietBelow != 1 || h.Sampled != 2*time.Second || h.WaitLimit != c.wait {
					t.Errorf("event %d: %+v", i, h)
				}
			}
			if strings.Join(stateNames(states), ",") != strings.Join(stateNames(c.states), ",") {
				t.Errorf("said %v, want %v", stateNames(states), stateNames(c.states))
			}
			if last := got[len(got)-1]; last.OthersCores != c.last || last.Busy() != (last.State != event.HostQuiet) {
				t.Errorf("last %+v", last)
			}
		})
	}
	// Ctrl-C during the wait stops it.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := &Driver{HostCheck: time.Second, WaitQuiet: time.Hour}
	if err := d.checkHost(ctx, &events{}, script(1.9)); err == nil {
		t.Error("a cancelled wait went on")
	}
	// --host-check 0 does not sample.
	var out events
	if err := (&Driver{}).checkHost(context.Background(), &out, script(1.9)); err != nil || len(out.checks()) != 0 {
		t.Errorf("no check asked, yet %v %v", out.checks(), err)
	}
}

func stateNames(s []event.HostState) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = string(v)
	}
	return out
}

// The host's own figures: a process of the test's that spins a core is
// another process to a host check of tokex (this test's process). Whatever
// else the machine runs, the host was busy at least that core's worth, so
// others used at least most of a core.
func TestHostCheckCountsOtherProcesses(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc/stat: the host is not sampled here")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hog := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
	if err := hog.Start(); err != nil {
		t.Skip("no sh to spin a core:", err)
	}
	defer func() { cancel(); _ = hog.Wait() }()
	others, cpus, err := procOthers(os.Getpid())(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if cpus < 1 || others < 0.8 || others > float64(cpus)+0.05 {
		t.Errorf("others used %.2f of %d cores while one spun", others, cpus)
	}
}
