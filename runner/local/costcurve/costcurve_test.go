// Package costcurve_test is issue 13's end-to-end goal against a server of
// known CPU cost: the capacity search, the marginal-cost fit and latency
// periodicity through the local driver. Its own package, so that its
// minutes of load have their own test binary and timeout.
package costcurve_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/knowncost"
	"github.com/tokex-dev/tokex/internal/truth"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/local"
)

func TestMain(m *testing.M) {
	knowncost.RunIfServer()
	os.Exit(m.Run())
}

const secret = "costcurve-secret-Zq9"

// knownCostCampaign drives rate against the server through the local
// driver, sampling its pid ten times a second; the warnings of a busy host
// are allowed so that runs go on, and judged by the tests.
func knownCostCampaign(rate float64, url string, pid int) config.Campaign {
	c := config.Article()
	c.Name, c.Idle = "known-cost", 0
	c.Target.URL, c.Target.PID = url+"/as/token.oauth2", pid
	c.Stages, c.Rounds, c.Warmup, c.Duration = []float64{rate}, 1, time.Second, 10*time.Second
	c.Sampling = 100 * time.Millisecond
	c.Sanity.Enabled = false
	c.Agents.Count, c.Agents.MaxInFlight = 4, 100
	c.Request.Timeout = time.Minute
	c.Subject.Alg = jose.ES256
	c.Thresholds.AllowWarnings = []stats.WarningCode{stats.WarnGeneratorLate, stats.WarnGeneratorStarved, stats.WarnHostSaturated}
	return c
}

// runKnownCostSearch runs a campaign (a capacity search when search is
// set) through the local driver.
func runKnownCostSearch(t *testing.T, c config.Campaign, search bool) *summary.Summary {
	t.Helper()
	key, err := jose.GenerateKey(c.Subject.Alg)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kc")
	y, _ := c.Redacted()
	w, err := evidence.Create(dir, y, evidence.Manifest{Tool: "tokex", Version: "test", CampaignID: "kc", Name: c.Name, Driver: "local", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	bus := &event.Bus{}
	bus.Subscribe(w.Consume)
	bus.Subscribe(func(e event.Event) {
		if s, ok := e.(event.Search); ok {
			t.Logf("search: %s, next %v", s.Result.Bracket(), s.Next)
		}
	})
	drv := &local.Driver{Cfg: c, CampaignID: "kc", Secret: secret, SubjectKey: key} // the target is knowncost's: no embedded server
	camp := &runner.Campaign{Cfg: c, ID: "kc", Driver: drv, Bus: bus, Evidence: w, Tool: "tokex test", Search: search}
	sum, err := camp.Run(context.Background())
	if cerr := drv.Close(); cerr != nil {
		t.Errorf("driver close: %v", cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// hostCodes lists the runs' warnings that say the machine, not the server,
// set the figures.
func hostCodes(runs []*stats.Run) string {
	var out []string
	for _, r := range runs {
		for _, w := range r.Warnings {
			if w.Code == stats.WarnHostSaturated || w.Code == stats.WarnGeneratorStarved {
				out = append(out, w.String())
				break
			}
		}
	}
	return strings.Join(out, "; ")
}

func allRuns(sum *summary.Summary) []*stats.Run {
	var runs []*stats.Run
	for _, st := range sum.Stages {
		runs = append(runs, st.Runs...)
	}
	return runs
}

// windowTruth is the server's own account of the runs' measured windows
// (read at its completions nearest their edges): the CPU-ms per request
// inside its burns (the known cost: Burn spends it by the thread's CPU
// clock) and all its CPU per request (the burn, HTTP, and the Go runtime's
// own work under load, which an idle server does not do).
func windowTruth(t *testing.T, p *knowncost.Process, runs []*stats.Run) (burnMs, cpuMs float64) {
	t.Helper()
	var total knowncost.Stats
	for _, r := range runs {
		w, err := p.Window(r.MeasuredStart, r.MeasuredEnd)
		if err != nil {
			continue // a window the server completed nothing in
		}
		total.Requests += w.Requests
		total.CPUSeconds += w.CPUSeconds
		total.BurnSeconds += w.BurnSeconds
	}
	return knowncost.BurnPerRequest(knowncost.Stats{}, total), knowncost.CPUPerRequest(knowncost.Stats{}, total)
}

// knownCost is the CPU the test server burns per request, by its thread's
// CPU clock: large beside its other work per request (HTTP, ~0.2–0.7 ms on
// a busy 2-core machine), which the known cost does not count. One core:
// a capacity of about 50/s.
const knownCost = 20 * time.Millisecond

// checkFit asserts issue 13's marginal-cost goal: the fit's slope within
// 10 % of the server's own (its getrusage CPU over each fitted run's
// window, through the same least-squares line: the known cost, logged
// beside it, plus its HTTP and runtime work, which a busy host makes
// larger), its fixed cost within 0.05 cores of the engine at rest.
func checkFit(t *testing.T, p *knowncost.Process, sum *summary.Summary) {
	t.Helper()
	cc := sum.Cost
	if cc == nil || cc.Idle == nil {
		t.Fatalf("summary without cost or idle: %+v", cc)
	}
	var fitted []*stats.Run
	for _, r := range allRuns(sum) {
		if !slices.ContainsFunc(cc.LeftOut, func(l summary.LeftOut) bool { return l.Run == r.ID }) {
			fitted = append(fitted, r)
		}
	}
	burnMs, cpuMs := windowTruth(t, p, fitted)
	var xs, bs, cs []float64
	for _, r := range truthRuns(t, p, fitted) {
		xs, bs, cs = append(xs, r.rate), append(bs, r.burn), append(cs, r.cpu)
	}
	burn, own := slope(xs, bs)*1000, slope(xs, cs)*1000
	t.Logf("the server's own CPU per request over the fitted runs' windows: %.3f ms in its burns (the known cost), %.3f ms in all; its marginal cost %.3f CPU-ms, of which its burns %.3f",
		burnMs, cpuMs, own, burn)
	for _, l := range doc.CostLines(sum) {
		t.Log(l)
	}
	fit := cc.Fit
	if !fit.OK() {
		t.Fatalf("%s", fit.Line())
	}
	if !(math.Abs(fit.MarginalCPUMs/own-1) <= 0.10) {
		t.Errorf("marginal cost %.3f CPU-ms, the server's own %.3f: off by more than 10 %%", fit.MarginalCPUMs, own)
	}
	if d := fit.FixedCores - cc.Idle.Cores; math.Abs(d) > 0.05 {
		t.Errorf("fixed cost %.3f cores, the engine at rest %.3f: %+.3f, more than 0.05 cores apart", fit.FixedCores, cc.Idle.Cores, d)
	}
}

// TestTruthMarginalCostKnownCost: over five stages from 16 % to 80 % of a
// known-cost server's core, the fit finds its marginal CPU per request
// within 10 % and its fixed cost within 0.05 cores of the engine at rest
// (issue 13). Tokex and the server account for the same runs, so a busy
// machine, which moves the server's CPU, does not part them: always
// asserted.
func TestTruthMarginalCostKnownCost(t *testing.T) {
	truth.Require(t) // five 8 s runs against a server process
	p := knowncost.StartForTest(t, knowncost.Options{Cost: knownCost, Procs: 1})
	c := knownCostCampaign(8, p.URL, p.PID)
	c.Name = "known-marginal"
	c.Stages, c.Duration, c.Idle = []float64{8, 16, 24, 32, 40}, 8*time.Second, 3*time.Second
	checkFit(t, p, runKnownCostSearch(t, c, false))
}

// TestTruthCapacityKnownCost is issue 13's capacity goal: against a server of
// known CPU cost on one core, the search finds the theoretical capacity
// (one core ÷ the server's CPU per request) within 10 %. The objective,
// p95 < 200 ms, is ten times the service time, so it breaks where the core
// runs out. The capacity is the machine's when the server could not have
// its core (the host saturated, the generator starved, the server below
// 0.9 cores where a probe broke): then the test is skipped, saying why (it
// used to log "capacity not judged" and pass); when it is judged, so is the
// fit over the probes.
func TestTruthCapacityKnownCost(t *testing.T) {
	truth.Require(t) // a capacity search of about a minute against a server process
	p := knowncost.StartForTest(t, knowncost.Options{Cost: knownCost, Procs: 1})
	c := knownCostCampaign(20, p.URL, p.PID)
	c.Name = "known-capacity"
	c.Duration, c.Warmup, c.Idle = 5*time.Second, time.Second, 3*time.Second
	c.Thresholds.P95Ms, c.Thresholds.SuccessRatio = 200, 0.99
	// At least 10/s: a host that cannot serve half the start rate is busy,
	// not worth a walk down to 1/s.
	c.Capacity = config.Capacity{Start: 20, Min: 10, Resolution: 0.05, Rounds: 1, MaxProbes: 10, CoolDown: 4 * time.Second}
	sum := runKnownCostSearch(t, c, true)
	runs := allRuns(sum)
	_, cpuMs := windowTruth(t, p, runs)
	theoretical := 1000 / cpuMs
	res := sum.Capacity
	if res == nil {
		t.Fatal("summary without capacity")
	}
	t.Logf("%s; the server's own CPU per request %.3f ms: theoretical capacity %.1f/s", res.Line(), cpuMs, theoretical)
	if cc := sum.Cost; cc != nil {
		t.Logf("cost: %s; curve bent %v; %d runs of broken probes left out", cc.Fit.Line(), cc.Curve.Bent(), len(cc.LeftOut))
	}
	if why := capacityInvalid(res, runs); why != "" {
		t.Skipf("invalid: the machine, not the server, set the capacity: %s", why)
	}
	if res.Status != curve.StatusFound {
		t.Fatalf("search ended %s: %s", res.Status, res.Reason)
	}
	if math.Abs(res.Capacity/theoretical-1) > 0.10 {
		t.Errorf("capacity %s, theoretical %.1f/s: off by more than 10 %%", res.Bracket(), theoretical)
	}
	// The probes that broke held the engine at its one core: they measure
	// the ceiling, not the cost, and are left out of the fit, which must
	// then find the server's cost (with them in, the curve bent at the
	// capacity).
	t.Run("fit", func(t *testing.T) {
		broken := 0
		for _, pr := range res.Probes {
			if pr.Verdict == curve.Broken {
				broken += len(pr.Rounds)
			}
		}
		if sum.Cost == nil || len(sum.Cost.LeftOut) != broken {
			t.Fatalf("%d rounds of broken probes, left out of the fit: %+v", broken, sum.Cost)
		}
		checkFit(t, p, sum)
	})
}

// starvedEngine is how many cores the engine must have used at a broken
// probe for the break to be the server's: a server that shared its core
// with other processes broke early, and that is the host's capacity.
const starvedEngine = 0.9

// capacityInvalid says why a search's capacity is the host's, or "".
func capacityInvalid(res *curve.Result, runs []*stats.Run) string {
	if codes := hostCodes(runs); codes != "" {
		return "host saturated or generator starved during the search: " + codes
	}
	for _, pr := range res.Probes {
		switch {
		case pr.Verdict == curve.Broken && pr.EngineCores < starvedEngine:
			return fmt.Sprintf("the server used %.2f cores of its one when %s broke", pr.EngineCores, curve.RateLabel(pr.Rate))
		case pr.Verdict == curve.Pass && pr.Rate == res.Capacity && pr.AchievedRPS < 0.95*pr.Rate:
			return fmt.Sprintf("the generator sent %s of %s", curve.RateLabel(pr.AchievedRPS), curve.RateLabel(pr.Rate))
		}
	}
	return ""
}

// TestTruthLatencyPeriodKnownCost: a server that stalls 400 ms every 3 s has its
// latency period found within 10 % (issue 13). When none is found on a
// host whose warnings say it was saturated, the test is skipped naming
// them; a wrong period always fails.
func TestTruthLatencyPeriodKnownCost(t *testing.T) {
	truth.Require(t) // drives a server process for ~30 s
	const every = 3 * time.Second
	p := knowncost.StartForTest(t, knowncost.Options{Cost: 2 * time.Millisecond, Procs: 1, StallEvery: every, StallFor: 400 * time.Millisecond})
	c := knownCostCampaign(25, p.URL, p.PID)
	c.Duration, c.Warmup = 30*time.Second, time.Second
	c.Thresholds.AllowWarnings = []stats.WarningCode{stats.WarnGeneratorLate, stats.WarnGeneratorStarved, stats.WarnHostSaturated}
	sum := runKnownCostSearch(t, c, false)
	run := sum.Stages[0].Runs[0]
	w := run.LatencyPeriod
	if w == nil {
		if codes := hostCodes([]*stats.Run{run}); codes != "" {
			t.Skipf("invalid: no latency period found on a saturated host: %s", codes)
		}
		t.Fatalf("no latency period found (p95 %.1f ms, p99 %.1f ms)", run.LatencyMs.P95, run.LatencyMs.P99)
	}
	t.Logf("%s (injected: 400 ms every %s)", w.Line(), every)
	if math.Abs(w.Seconds/every.Seconds()-1) > 0.10 {
		t.Errorf("period %.2f s, injected %s: off by more than 10 %%", w.Seconds, every)
	}
	found := false
	for _, wn := range run.Warnings {
		found = found || wn.Code == stats.WarnLatencyPeriodic
	}
	if !found {
		t.Error("no latency_periodic warning")
	}
}

// falling is issue 23's server whose cost falls with the rate: one more
// request costs 12 CPU-ms up to 10/s, falling to 4 by 16/s, so its cost per
// request falls 48 % from 5/s to 50/s (zitadel and oidc-provider: 37–48 %),
// on 0.30 of its core at 50/s: a busy machine starves it less.
var falling = knowncost.Profile{High: 12 * time.Millisecond, Low: 4 * time.Millisecond, From: 10, To: 16}

// truthRun is one run as the server accounts for it: tokex's served rate,
// and the server's burn cores (the known cost) and all its cores over the
// run's measured window.
type truthRun struct{ target, rate, burn, cpu float64 }

func truthRuns(t *testing.T, p *knowncost.Process, runs []*stats.Run) []truthRun {
	t.Helper()
	var out []truthRun
	for _, r := range runs {
		pt, ok := summary.CostPoint(r)
		if !ok {
			continue
		}
		w, err := p.Window(r.MeasuredStart, r.MeasuredEnd)
		if err != nil {
			t.Fatalf("%s: the server's window: %v", r.ID, err)
		}
		tr := truthRun{target: r.TargetRPS, rate: pt.Rate, burn: w.BurnSeconds / r.MeasuredSeconds, cpu: w.CPUSeconds / r.MeasuredSeconds}
		out = append(out, tr)
		var codes []string
		for _, wn := range r.Warnings {
			codes = append(codes, string(wn.Code))
		}
		t.Logf("%s: tokex %.3f/s %.4f cores (achieved %.3f/s, %d dropped %v); the server %d requests, %.4f cores burnt, %.4f in all",
			r.ID, pt.Rate, pt.Cores, r.AchievedRPS, r.Dropped, codes, w.Requests, tr.burn, tr.cpu)
	}
	return out
}

// medianRates is each target rate's median served rate, where the cost
// curve places that measured rate, ordered by it.
func medianRates(rs []truthRun) (targets, rates []float64) {
	by := map[float64][]float64{}
	for _, r := range rs {
		if by[r.target] == nil {
			targets = append(targets, r.target)
		}
		by[r.target] = append(by[r.target], r.rate)
	}
	for _, tg := range targets {
		v := slices.Sorted(slices.Values(by[tg]))
		rates = append(rates, (v[(len(v)-1)/2]+v[len(v)/2])/2)
	}
	order := make([]int, len(targets))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(rates[a], rates[b]) })
	ts, ms := make([]float64, len(order)), make([]float64, len(order))
	for n, i := range order {
		ts[n], ms[n] = targets[i], rates[i]
	}
	return ts, ms
}

// ownSlope is the server's own marginal cost between the measured rates
// nearest a and b, in CPU-ms, of its burns and of all its CPU: the
// least-squares slope of its account of every run at those rates and the
// ones between, the estimator tokex applies to its samples (for two
// neighbouring rates, the secant between their runs' means, which the
// curve with a break at every measured rate passes through).
func ownSlope(rs []truthRun, a, b float64) (burn, cpu float64) {
	targets, rates := medianRates(rs)
	nearest := func(x float64) int {
		best := 0
		for i, r := range rates {
			if math.Abs(r-x) < math.Abs(rates[best]-x) {
				best = i
			}
		}
		return best
	}
	in := targets[nearest(a) : nearest(b)+1]
	var xs, bs, cs []float64
	for _, r := range rs {
		if slices.Contains(in, r.target) {
			xs, bs, cs = append(xs, r.rate), append(bs, r.burn), append(cs, r.cpu)
		}
	}
	return slope(xs, bs) * 1000, slope(xs, cs) * 1000
}

// slope is the least-squares slope of y on x.
func slope(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx, my = mx+x[i], my+y[i]
	}
	mx, my = mx/float64(len(x)), my/float64(len(y))
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	return sxy / sxx
}

// TestTruthCostCurveKnownCost is issue 23's goal for servers whose cost
// falls with load: against a server of known rate-dependent cost on one
// core, three rounds at five rates, the cost curve is bent and falls;
// every band's and every segment's marginal cost is within 10 % of the
// server's own (its getrusage CPU over each run's window, through the
// estimator tokex uses: the known burns, logged beside it, plus its HTTP
// work), and so is the marginal cost at the operating rate (--project
// 40); the campaign carries the marginal_cost_varies warning and a
// projection beyond the measured rates says it extrapolates. The server's
// cost follows the rate it sees arrive: when the host starves it (a median
// run served below 90 % of its target) arrivals and completions part, and
// the test is skipped, saying so. A saturated host (host_saturated) is no
// reason to skip: it moves the server's CPU from run to run, by 10 % at
// times, but tokex and the server account for the same runs.
func TestTruthCostCurveKnownCost(t *testing.T) {
	truth.Require(t)
	p := knowncost.StartForTest(t, knowncost.Options{Cost: falling.High, CostLow: falling.Low, FallFrom: falling.From, FallTo: falling.To, Procs: 1})
	c := knownCostCampaign(5, p.URL, p.PID)
	c.Name = "known-falling"
	// The warmup outlasts the server's 2 s rate window: each run measures
	// at its own rate, not the last run's.
	c.Stages, c.Rounds, c.Warmup, c.Duration, c.Idle = []float64{5, 10, 16, 30, 50}, 3, 3*time.Second, 8*time.Second, 3*time.Second
	c.Capacity.Project = 40
	sum := runKnownCostSearch(t, c, false)
	rs := truthRuns(t, p, allRuns(sum))
	for _, l := range doc.CostLines(sum) {
		t.Log(l)
	}
	// The rates are the design: a median run served well below its target
	// (the host gave the generator or the server too little CPU) leaves
	// measured rates other than the ones the bands were planned between.
	targets, rates := medianRates(rs)
	for i, tg := range targets {
		if rates[i] < 0.9*tg {
			t.Skipf("invalid: the median run at %g/s served %.2f/s: the host starved the campaign (%s)", tg, rates[i], hostCodes(allRuns(sum)))
		}
	}
	cc := sum.Cost.Curve
	if !cc.Bent() || cc.Direction() != "falls" {
		t.Fatalf("the cost curve is not bent and falling: %+v", cc)
	}
	check := func(what string, e *curve.Estimate, a, b float64) {
		burn, cpu := ownSlope(rs, a, b)
		known := (falling.Cores(b) - falling.Cores(a)) / (b - a) * 1000
		if e == nil {
			t.Errorf("%s %s: no marginal cost", what, curve.RangeLabel(a, b))
			return
		}
		t.Logf("%s %s: %.3f CPU-ms (95%% CI %.3f–%.3f); the server's own %.3f (%+.1f %%), of which its burns %.3f (the profile's %.3f)",
			what, curve.RangeLabel(a, b), e.CPUMs, e.CI[0], e.CI[1], cpu, (e.CPUMs/cpu-1)*100, burn, known)
		if !(math.Abs(e.CPUMs/cpu-1) <= 0.10) { // NaN fails too
			t.Errorf("%s %s: %.3f CPU-ms, the server's own %.3f: off by more than 10 %%", what, curve.RangeLabel(a, b), e.CPUMs, cpu)
		}
	}
	for _, b := range cc.Bands {
		check("band", b.Marginal, b.From, b.To)
	}
	for _, s := range cc.Segments {
		check("segment", s.Marginal, s.From, s.To)
	}
	pr := sum.Projection
	if pr == nil || pr.Marginal == nil || pr.Extrapolated != "" || cc.Bands[len(cc.Bands)-1].To < 40 {
		t.Fatalf("projection at 40/s: %+v", pr)
	}
	check("at the operating rate 40/s, band", pr.Marginal, cc.Bands[len(cc.Bands)-1].From, cc.Bands[len(cc.Bands)-1].To)
	if far := curve.ProjectCurve(cc, 100, 0, ""); far == nil || !strings.Contains(far.Extrapolated, "beyond the measured") {
		t.Errorf("a projection to 100/s does not say it extrapolates: %+v", far)
	}
	found := false
	for _, w := range sum.Warnings {
		found = found || w.Code == stats.WarnMarginalCostVaries
	}
	if !found {
		t.Error("no marginal_cost_varies warning")
	}
}
