package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/exchange"
)

// reference computes the same definition the slow, obvious way.
func reference(values []int64, q float64) float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo, hi := math.Floor(pos), math.Ceil(pos)
	return float64(s[int(lo)]) + (pos-lo)*(float64(s[int(hi)])-float64(s[int(lo)]))
}

func TestPercentileAgainstSortedReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10, 101, 1000, 30008} {
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = int64(rng.ExpFloat64() * 5000)
		}
		sorted := slices.Clone(vals)
		slices.Sort(sorted)
		for _, q := range []float64{0, 0.5, 0.9, 0.95, 0.99, 0.999, 1} {
			if got, want := Percentile(sorted, q), reference(vals, q); math.Abs(got-want) > 1e-9 {
				t.Errorf("n=%d q=%v: got %v want %v", n, q, got, want)
			}
		}
	}
}

func TestPercentileKnownValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		vals []int64
		q    float64
		want float64
	}{
		{[]int64{1, 2, 3, 4}, 0.5, 2.5},
		{[]int64{10, 20, 30, 40, 50}, 0.95, 48},
		{[]int64{7}, 0.99, 7},
		{nil, 0.5, 0},
	}
	for _, c := range cases {
		if got := Percentile(c.vals, c.q); got != c.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", c.vals, c.q, got, c.want)
		}
	}
}

func TestSummarizeMilliseconds(t *testing.T) {
	t.Parallel()
	l := Summarize([]int64{4000, 1000, 3000, 2000})
	if l.Count != 4 || l.Avg != 2.5 || l.P50 != 2.5 || l.Max != 4 {
		t.Errorf("%+v", l)
	}
}

func TestComputeRunPhasesDroppedAndCPU(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	m := RunMeta{ID: "r", TargetRPS: 10, Status: StatusDone, Started: start,
		MeasuredStart: start.Add(2 * time.Second), MeasuredEnd: start.Add(12 * time.Second)}
	var reqs []Request
	for i := 0; i < 120; i++ {
		at := start.Add(time.Duration(i) * 100 * time.Millisecond)
		r := Request{Seq: int64(i), ScheduledUS: at.UnixMicro(), SendLagUS: 100, DurationUS: int64(1000 + i), Status: 200, Outcome: "ok", Phase: Measured}
		if at.Before(m.MeasuredStart) {
			r.Phase = Warmup
			r.DurationUS = 1e6 // warmup must not count
		}
		switch i {
		case 50:
			r.Outcome, r.Status, r.Detail = "oauth_error", 400, "invalid_grant"
		case 60:
			r.Outcome, r.Status, r.SendLagUS, r.DurationUS = "dropped", 0, 0, 0
		}
		reqs = append(reqs, r)
	}
	// Engine: 500 millicores steady, cumulative counter from 100 s.
	var res []sample.Resource
	for s := 0; s <= 13; s++ {
		at := start.Add(time.Duration(s)*time.Second + 300*time.Millisecond)
		res = append(res, sample.Resource{AtUS: at.UnixMicro(), Kind: "engine", Name: "e", CPUMillicores: 500,
			CPUSecondsTotal: 100 + 0.5*at.Sub(start).Seconds(), MemoryBytes: 1 << 20})
	}
	r := ComputeRun(m, reqs, res, Thresholds{P95Ms: 500, SuccessRatio: 0.99, MaxDropped: 0})
	if r.WarmupRequests != 20 || r.Requests != 99 || r.Dropped != 1 || r.OK != 98 {
		t.Fatalf("counts: warmup %d requests %d dropped %d ok %d", r.WarmupRequests, r.Requests, r.Dropped, r.OK)
	}
	if r.LatencyMs.Max >= 1000 {
		t.Error("warmup latency leaked into the measured figures")
	}
	if r.Errors["oauth_error:invalid_grant"] != 1 {
		t.Errorf("errors = %v", r.Errors)
	}
	if r.AchievedRatio != 0.99 {
		t.Errorf("achieved ratio = %v", r.AchievedRatio)
	}
	// 5 CPU-s in the window paid for the 99 measured responses and the 10
	// one-second warmup requests that completed inside it.
	if r.EngineCPU == nil || r.EngineCPU.Method != "cumulative" || r.EngineCPU.Exchanges != 109 || math.Abs(r.EngineCPU.CPUMsPerExchange-5000.0/109) > 0.01 {
		t.Errorf("engine cpu = %+v", r.EngineCPU)
	}
	if r.EngineCPU.AvgCores != 0.5 || r.EngineMemoryBytes != 1<<20 {
		t.Errorf("avg cores %v mem %v", r.EngineCPU.AvgCores, r.EngineMemoryBytes)
	}
	if r.ThresholdsPassed {
		t.Error("thresholds passed despite a dropped arrival and 98.99% success")
	}
	// Without cumulative counters, the rate method gives the same figure here.
	for i := range res {
		res[i].CPUSecondsTotal = 0
	}
	r2 := ComputeRun(m, reqs, res, Thresholds{P95Ms: 500})
	if r2.EngineCPU.Method != "rate" || math.Abs(r2.EngineCPU.CPUMsPerExchange-r.EngineCPU.CPUMsPerExchange) > 0.01 {
		t.Errorf("rate method = %+v", r2.EngineCPU)
	}
}

// Achieved counts answered requests: a target that refused every
// connection achieved nothing (it used to show 100 %), and a run cut short
// right after an arrival can no longer exceed its target (it showed 100.4 %).
func TestAchievedCountsResponses(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	rows := func(n int, outcome exchange.Outcome) []Request {
		var out []Request
		for k := 0; k < n; k++ {
			out = append(out, Request{Seq: int64(k), Phase: Measured, ScheduledUS: start.Add(time.Duration(k) * time.Second / 40).UnixMicro(),
				DurationUS: 300, Outcome: outcome})
		}
		return out
	}
	th := Thresholds{P95Ms: 500, SuccessRatio: 0.99}
	full := RunMeta{ID: "dead", TargetRPS: 40, Status: StatusDone, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(10 * time.Second)}
	dead := ComputeRun(full, rows(400, "conn_error"), nil, th)
	if dead.Requests != 400 || dead.Responses != 0 || dead.AchievedRatio != 0 || dead.AchievedRPS != 0 || dead.SuccessRatio != 0 {
		t.Errorf("dead target: requests %d responses %d achieved %v (%v/s) success %v", dead.Requests, dead.Responses, dead.AchievedRatio, dead.AchievedRPS, dead.SuccessRatio)
	}
	errs := ComputeRun(full, rows(400, "http_error"), nil, th)
	if errs.AchievedRatio != 1 || errs.SuccessRatio != 0 {
		t.Errorf("503s are answers: achieved %v success %v", errs.AchievedRatio, errs.SuccessRatio)
	}
	// Interrupted 6.26 s into the measured phase: 251 arrivals answered, one cut short.
	cut := RunMeta{ID: "cut", TargetRPS: 40, Status: StatusAborted, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(6260 * time.Millisecond)}
	rs := append(rows(251, "ok"), Request{Seq: 251, Phase: Measured, ScheduledUS: start.Add(6250 * time.Millisecond).UnixMicro(), Outcome: "aborted"})
	aborted := ComputeRun(cut, rs, nil, th)
	if aborted.AchievedRatio > 1 || aborted.AchievedRatio != Round4(251.0/252) {
		t.Errorf("aborted run achieved %v", aborted.AchievedRatio)
	}
}

// A run's most common failures carry what the server said about them, from
// the descriptions collected while it ran.
func TestTopErrorsCarryDescriptions(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	m := RunMeta{ID: "r", TargetRPS: 10, Status: StatusDone, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(10 * time.Second),
		ErrorDescriptions: []sample.ErrorDescription{
			{Error: "oauth_error:invalid_client", Text: "client authentication failed", Count: 60},
			{Error: "oauth_error:invalid_client", Text: "unknown client", Count: 10},
			{Error: "conn_error", Text: "dial tcp 127.0.0.1:1: connect: connection refused", Count: 5},
		}}
	var reqs []Request
	for k := 0; k < 100; k++ {
		r := Request{Seq: int64(k), Phase: Measured, ScheduledUS: start.Add(time.Duration(k) * 100 * time.Millisecond).UnixMicro(), DurationUS: 1000, Status: 200, Outcome: "ok"}
		switch {
		case k < 70:
			r.Outcome, r.Status, r.Detail = "oauth_error", 401, "invalid_client"
		case k < 75:
			r.Outcome, r.Status = "conn_error", 0
		case k < 76:
			r.Outcome, r.Status, r.Detail = "http_error", 503, "503"
		}
		reqs = append(reqs, r)
	}
	r := ComputeRun(m, reqs, nil, Thresholds{P95Ms: 500})
	if len(r.TopErrors) != 3 {
		t.Fatalf("top errors %+v", r.TopErrors)
	}
	kind := func(k ErrorKind) string { // collector/doc renders it; here what it holds
		var ds []string
		for _, d := range k.Descriptions {
			ds = append(ds, d.Text)
		}
		return fmt.Sprintf("%s ×%d %q", k.Error, k.Count, ds)
	}
	if got := kind(r.TopErrors[0]); got != `oauth_error:invalid_client ×70 ["client authentication failed" "unknown client"]` {
		t.Errorf("first: %s", got)
	}
	if got := kind(r.TopErrors[1]); got != `conn_error ×5 ["dial tcp 127.0.0.1:1: connect: connection refused"]` {
		t.Errorf("second: %s", got)
	}
	if got := kind(r.TopErrors[2]); got != "http_error:503 ×1 []" {
		t.Errorf("third: %s", got)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"top_errors":[{"error":"oauth_error:invalid_client","count":70,"descriptions":[{"text":"client authentication failed","count":60}`) {
		t.Errorf("stats.json: %s", b)
	}
}

// overloadedRun simulates a one-core server of cost ms per request that
// completes one request every cost (its capacity) while arrivals come at
// twice that rate: the backlog grows through the run, and requests
// scheduled in the measured window complete after it.
func overloadedRun(cost time.Duration, counter func(t time.Time) float64) (RunMeta, []Request, []sample.Resource) {
	start := time.Unix(1_700_000_000, 0)
	m := RunMeta{ID: "r", TargetRPS: 2 * float64(time.Second/cost), Status: StatusDone, Started: start,
		MeasuredStart: start.Add(2 * time.Second), MeasuredEnd: start.Add(12 * time.Second)}
	interval := cost / 2
	var reqs []Request
	free := start // when the server is next free
	for at := start; at.Before(m.MeasuredEnd); at = at.Add(interval) {
		begin := at
		if free.After(begin) {
			begin = free
		}
		free = begin.Add(cost)
		r := Request{ScheduledUS: at.UnixMicro(), SendLagUS: 50, DurationUS: free.Sub(at).Microseconds() - 50,
			Status: 200, Outcome: "ok", Phase: Measured}
		if at.Before(m.MeasuredStart) {
			r.Phase = Warmup
		}
		reqs = append(reqs, r)
	}
	var res []sample.Resource
	for at := start.Add(300 * time.Millisecond); at.Before(free.Add(2 * time.Second)); at = at.Add(time.Second) {
		res = append(res, sample.Resource{AtUS: at.UnixMicro(), Kind: "engine", Name: "e", CPUMillicores: 1000,
			CPUSecondsTotal: counter(at), MemoryBytes: 1 << 20, Source: "proc-tree"})
	}
	return m, reqs, res
}

// TestCPUPerExchangeUnderOverload is issue 16 item 1 in numbers: arrivals
// counted by schedule against CPU by wall clock gave half the true cost
// when the backlog grows; CPU and responses over one window give it.
func TestCPUPerExchangeUnderOverload(t *testing.T) {
	t.Parallel()
	const cost = 2 * time.Millisecond
	start := time.Unix(1_700_000_000, 0)
	busy := func(at time.Time) float64 { return 50 + at.Sub(start).Seconds() } // one core, always busy
	m, reqs, res := overloadedRun(cost, busy)
	r := ComputeRun(m, reqs, res, Thresholds{P95Ms: 1e9, SuccessRatio: 0.99})
	if r.Requests != 10000 {
		t.Fatalf("measured arrivals %d", r.Requests)
	}
	c := r.EngineCPU
	if c == nil || c.Method != "cumulative" || c.Source != "proc-tree" {
		t.Fatalf("engine cpu %+v", c)
	}
	if c.Exchanges != 5000 || math.Abs(c.CPUMsPerExchange-2) > 0.001 {
		t.Errorf("CPU per exchange %v ms over %d responses; the server spends 2 ms on each", c.CPUMsPerExchange, c.Exchanges)
	}
	// The rate method (no cumulative counters) divides the same way.
	for i := range res {
		res[i].CPUSecondsTotal = 0
	}
	if c := ComputeRun(m, reqs, res, Thresholds{}).EngineCPU; c.Method != "rate" || math.Abs(c.CPUMsPerExchange-2) > 0.001 {
		t.Errorf("rate method %+v", c)
	}
}

func TestImplausibleEngineCPUInvalidatesTheRun(t *testing.T) {
	t.Parallel()
	const cost = 2 * time.Millisecond
	cases := []struct {
		name    string
		counter func(time.Time) float64
		warn    bool
	}{
		{"a wrapper: zero CPU", func(time.Time) float64 { return 0.01 }, true},
		{"a launcher: 0.02 ms each", func(at time.Time) float64 { return 1 + at.Sub(time.Unix(1_700_000_000, 0)).Seconds()/100 }, true},
		{"the server", func(at time.Time) float64 { return 1 + at.Sub(time.Unix(1_700_000_000, 0)).Seconds() }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, reqs, res := overloadedRun(cost, tc.counter)
			r := ComputeRun(m, reqs, res, Thresholds{P95Ms: 1e9, SuccessRatio: 0.99, MaxDropped: 0})
			var got []Warning
			for _, w := range r.Warnings {
				if w.Code == WarnEngineCPUImplausible {
					got = append(got, w)
				}
			}
			if tc.warn != (len(got) == 1) || r.ThresholdsPassed == tc.warn {
				t.Fatalf("warnings %v, thresholds passed %v (cpu %+v)", r.Warnings, r.ThresholdsPassed, r.EngineCPU)
			}
			if tc.warn && (got[0].Run != "r" || !strings.Contains(got[0].Detail, "proc-tree") || !strings.Contains(got[0].Detail, "not the one serving")) {
				t.Errorf("warning %+v", got[0])
			}
		})
	}
}

// Samples faster than one a second are averaged within the second, not
// summed: 10 samples of 500 millicores are half a core.
func TestSubSecondSampling(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	m := RunMeta{ID: "r", Status: StatusDone, MeasuredStart: start, MeasuredEnd: start.Add(4 * time.Second)}
	var res []sample.Resource
	for i := 1; i <= 50; i++ {
		at := start.Add(time.Duration(i) * 100 * time.Millisecond)
		for _, name := range []string{"a", "b"} {
			res = append(res, sample.Resource{AtUS: at.UnixMicro(), Kind: "engine", Name: name, CPUMillicores: 500, MemoryBytes: 1000})
		}
	}
	reqs := []Request{{ScheduledUS: start.Add(time.Second).UnixMicro(), DurationUS: 10, Status: 200, Outcome: "ok", Phase: Measured}}
	r := ComputeRun(m, reqs, res, Thresholds{P95Ms: 1})
	if c := r.EngineCPU; c.AvgCores != 1 || c.PeakCores != 1 || r.EngineMemoryBytes != 2000 || c.CPUMsPerExchange != 4000 {
		t.Errorf("cpu %+v memory %d", c, r.EngineMemoryBytes)
	}
}

// Members sampled at different seconds are each counted: metrics-server
// stamps every Pod's sample with its own time, so two engines of 1 core each
// whose samples never share a second are 2 cores, not 1 (the kube e2e read
// 1.3 cores for engines burning 2.3-2.9).
func TestMembersSampledAtDifferentSeconds(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	m := RunMeta{ID: "r", Status: StatusDone, MeasuredStart: start, MeasuredEnd: start.Add(60 * time.Second)}
	var res []sample.Resource
	for i := 1; i <= 60; i++ {
		name, cpu := "a", 1000.0
		if i%2 == 0 {
			name, cpu = "b", 1500
		}
		at := start.Add(time.Duration(i) * time.Second)
		res = append(res, sample.Resource{AtUS: at.UnixMicro(), Kind: "engine", Name: name, CPUMillicores: cpu, MemoryBytes: 1000})
	}
	reqs := []Request{{ScheduledUS: start.Add(time.Second).UnixMicro(), DurationUS: 10, Status: 200, Outcome: "ok", Phase: Measured}}
	r := ComputeRun(m, reqs, res, Thresholds{P95Ms: 1})
	if c := r.EngineCPU; c.AvgCores != 2.5 || c.PeakCores != 2.5 || r.EngineMemoryBytes != 2000 || c.CPUMsPerExchange != 150000 {
		t.Errorf("cpu %+v memory %d, want 2.5 cores average and peak, 2000 bytes", c, r.EngineMemoryBytes)
	}
}

// A counter ticks in 10 ms: a run whose exchanges could all fit in one tick
// at a plausible cost is not judged, whatever it read.
func TestImplausibleCPUOnlyWhereTheCounterResolvesIt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		perEx     float64
		exchanges int64
		warn      bool
	}{
		{"20 exchanges read zero (one tick)", 0, 20, false},
		{"200 exchanges read zero: 10 ms could hide 0.05 ms each", 0, 200, false},
		{"201 exchanges read zero", 0, 201, true},
		{"5000 at 0.02 ms", 0.02, 5000, true},
		{"300 at 0.02 ms: within a tick of plausible", 0.02, 300, false},
		{"5000 at 0.06 ms", 0.06, 5000, false},
	}
	for _, tc := range cases {
		_, got := implausibleCPU(&CPU{CPUMsPerExchange: tc.perEx, Exchanges: tc.exchanges}, tc.exchanges)
		if got != tc.warn {
			t.Errorf("%s: warned %v, want %v", tc.name, got, tc.warn)
		}
	}
}
