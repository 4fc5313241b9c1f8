package local

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/truth"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
)

// Others above this many cores beside the campaign make the comparison
// the machine's, not the engines': the test skips, saying so.
const busyOthers = 0.3

// TestTruthScalingEfficiency (issue 28 item 4): a server of known cost
// (knowncost, 20 ms of CPU a request on GOMAXPROCS 1) run as one engine,
// then two sharing the port, each pinned to its own core: two serve twice
// what one does, so the scaling efficiency tokex reports from its two
// capacity searches must be 1 within 10 % (20 % on two CPUs, where the
// generator shares the engines' cores), and each engine core must serve
// 1 ÷ the cost within 10 %. The agents open a connection
// per request, so SO_REUSEPORT spreads requests, not a few long
// connections, evenly over the engines; the objective (p95 < 30 × the
// cost, over 20 s runs) is loose enough that the burstier arrivals a
// random spread gives each engine cost a few percent at most
// (docs/scaling.md). On a machine busy with other work it skips, saying
// how busy; it never passes without judging.
func TestTruthScalingEfficiency(t *testing.T) {
	truth.Require(t)
	if cpus := allowedCPUs(); len(cpus) < 2 {
		t.Skipf("two engines each on its own core need two CPUs; this process may use %v", cpus)
	}
	if o, err := othersBusy(3 * time.Second); err != nil || o > busyOthers {
		t.Skipf("this machine is busy: other processes used %.2f cores over 3 s (%v); one engine against two each on its own core cannot be measured", o, err)
	}
	// 20 ms, not less: on two cores the generator shares the engines' cores,
	// and its CPU grows with the rate, not with the cost.
	const cost = 20 * time.Millisecond
	ctx := context.Background()
	fleet, err := startKnownFleet(ctx, cost)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.close()
	c := scalingTruthCampaign(cost)
	dir := filepath.Join(t.TempDir(), "scaling")
	s := runFleetCampaign(t, ctx, c, fleet, dir)
	sc := s.Scaling
	if sc == nil || len(sc.Counts) != 2 {
		t.Fatalf("no scaling section: %+v (%s %s)", sc, s.Status, s.Reason)
	}
	one, two := sc.Counts[0], sc.Counts[1]
	// Each count's figures first, so that a skip below still shows them.
	for _, p := range sc.Counts {
		var capa string
		if p.Capacity != nil {
			capa = p.Capacity.Bracket()
		}
		t.Logf("%d engine(s): capacity %s, efficiency %v, %v exchanges/s per engine core at %v/s, engine CPU balance %.2f, connections %s",
			p.Replicas, capa, p.Efficiency, p.PerCore, p.At, p.Balance, p.Connections.Line())
	}
	if others, run := busiestRun(t, dir); others > busyOthers {
		t.Skipf("other processes used %.2f cores during run %s: the capacities are the machine's, not the engines' (not judged)", others, run)
	}
	truth1 := 1000 / float64(cost.Milliseconds())
	if one.Capacity == nil || one.Capacity.Capacity < 0.8*truth1 || one.Capacity.Capacity > 1.1*truth1 {
		t.Errorf("one engine of %s a request on its own core: capacity %v, the truth about %.0f/s", cost, one.Capacity, truth1)
	}
	e := two.Efficiency
	if e == nil {
		t.Fatalf("no efficiency: capacities %v and %v", one.Capacity, two.Capacity)
	}
	t.Logf("scaling efficiency of 2 engines %s: capacity %s against %s for one", e, two.Capacity.Bracket(), one.Capacity.Bracket())
	for _, p := range sc.Counts {
		if p.PerCore == nil || math.Abs(p.PerCore.Value/truth1-1) > 0.1 {
			t.Errorf("%d engine(s): %v exchanges/s per engine core, the truth %.0f", p.Replicas, p.PerCore, truth1)
		}
	}
	want := 0.9
	if n := len(allowedCPUs()); n < 3 {
		// The generator runs on the engines' two cores and takes more of them
		// at twice the rate: two engines get less than two cores, while each
		// core they get serves what one engine's does (held above).
		want = 0.8
		t.Logf("%d CPUs: the generator shares the engines' cores; the efficiency is held within 20 %%", n)
	}
	if e.Value < want || e.Value > 1.1 {
		t.Errorf("two engines each on its own core serve %.3g of twice one's: want 1 within %.0f %%", e.Value, 100*(1-want))
	}
}

// scalingTruthCampaign is a capacity search per engine count 1, 2.
func scalingTruthCampaign(cost time.Duration) config.Campaign {
	c := config.Article()
	c.Name = "scaling-truth"
	c.Target.Embedded.Engines = []int{1, 2}
	keep := false
	c.Target.KeepAlive = &keep
	c.Agents.Count, c.Agents.MaxInFlight = 20, 100
	c.Subject.Alg, c.Subject.Premint = jose.ES256, true
	c.Idle, c.Pause = 0, 0
	c.Sanity.Rate, c.Sanity.Duration = 10, 2*time.Second
	c.Warmup, c.Duration = 2*time.Second, 20*time.Second
	c.Sampling = 500 * time.Millisecond
	c.Request.Timeout = 30 * time.Second
	c.Capacity = config.Capacity{Start: 250 / float64(cost.Milliseconds()), Factor: 2, Resolution: 0.03, Rounds: 1, MaxProbes: 20, CoolDown: 3 * time.Second}
	c.Thresholds.P95Ms = 30 * float64(cost.Milliseconds())
	// Two engines at their capacity keep both cores busy: the host is
	// saturated by the engines themselves, and the generator's timer late.
	c.Thresholds.AllowWarnings = []stats.WarningCode{stats.WarnHostSaturated, stats.WarnGeneratorLate}
	return c
}

// runFleetCampaign runs c as tokex capacity does, with fleet as the engines.
func runFleetCampaign(t *testing.T, ctx context.Context, c config.Campaign, fleet Fleet, dir string) *summary.Summary {
	t.Helper()
	key, err := jose.GenerateKey(c.Subject.Alg)
	if err != nil {
		t.Fatal(err)
	}
	y, _ := c.Redacted()
	w, err := evidence.Create(dir, y, evidence.Manifest{Tool: "tokex", Version: "test", CampaignID: filepath.Base(dir), Name: c.Name, Driver: "local", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	bus := &event.Bus{}
	bus.Subscribe(w.Consume)
	bus.Subscribe(func(e event.Event) {
		if l, ok := e.(event.Log); ok && l.Level != "info" {
			t.Logf("%s: %s", l.Level, l.Message)
		}
	})
	drv := &Driver{Cfg: c, CampaignID: filepath.Base(dir), Secret: "s", SubjectKey: key, Fleet: fleet}
	camp := &runner.Campaign{Cfg: c, ID: filepath.Base(dir), Driver: drv, Bus: bus, Evidence: w, Tool: "tokex test", Search: true}
	s, err := camp.Run(ctx)
	if cerr := drv.Close(); cerr != nil {
		t.Errorf("close: %v", cerr)
	}
	if err != nil || s == nil {
		t.Fatalf("campaign: %v", err)
	}
	return s
}

// busiestRun is the most CPU other processes used (cores, mean over a
// measured window) during a counted run, from the evidence: the host's busy
// cores less the generator's and the engines'.
func busiestRun(t *testing.T, dir string) (float64, string) {
	t.Helper()
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	top, which := 0.0, ""
	for _, e := range f.Manifest.Runs {
		if e.Meta == nil || e.Plan.Sanity {
			continue
		}
		host, _, err1 := f.Host(e.ID)
		res, _, err2 := f.Resources(e.ID)
		if err1 != nil || err2 != nil {
			continue
		}
		own := map[int64]float64{}
		for _, r := range res {
			if r.Kind == "generator" || r.Kind == "engine" {
				own[r.AtUS/1e6] += r.CPUMillicores / 1000
			}
		}
		var sum float64
		n := 0
		for _, h := range host {
			if h.AtUS > e.Meta.MeasuredStart.UnixMicro() && h.AtUS <= e.Meta.MeasuredEnd.UnixMicro() {
				sum += max(0, h.BusyCores-own[h.AtUS/1e6])
				n++
			}
		}
		if n > 0 && sum/float64(n) > top {
			top, which = sum/float64(n), e.ID
		}
	}
	return top, which
}

// othersBusy is the cores the rest of the machine used over d while this
// process waited: /proc/stat's busy time less this process's own.
func othersBusy(d time.Duration) (float64, error) {
	busy0, total0, err := procStat()
	if err != nil {
		return 0, err
	}
	self0 := selfCPU()
	time.Sleep(d)
	busy1, total1, err := procStat()
	if err != nil {
		return 0, err
	}
	if total1 <= total0 {
		return 0, fmt.Errorf("/proc/stat did not advance")
	}
	cores := float64(runtime.NumCPU()) * float64(busy1-busy0) / float64(total1-total0)
	return max(0, cores-(selfCPU()-self0)/d.Seconds()), nil
}

// procStat is the aggregate cpu line's busy and total ticks.
func procStat() (busy, total uint64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("unexpected /proc/stat: %q", line)
	}
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, nil
}

// selfCPU is this process's CPU seconds (utime + stime).
func selfCPU() float64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100
}
