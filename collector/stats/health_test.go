package stats

import (
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/sample"
)

func TestLateBound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rate, p50, want float64
	}{
		{500, 5, LateFloorMs},    // interval 2 ms: the floor
		{100, 2, LateFloorMs},    // p50 below the floor
		{100, 40, 10},            // interval 10 ms < p50
		{10, 30, 30},             // p50 30 ms < interval 100 ms
		{10, 0, 100},             // no latency yet: the interval
		{0.5, 5000, 2000},        // slow rate, slow server
		{2000, 0.8, LateFloorMs}, // docs/benchmarks.md's 2,000/s benchmark: lag p99 7–13 ms is late
	}
	for _, c := range cases {
		if got := LateBound(c.rate, c.p50); got != c.want {
			t.Errorf("LateBound(%v, %v) = %v, want %v", c.rate, c.p50, got, c.want)
		}
	}
}

func f64(v float64) *float64 { return &v }

func TestPerSampleRules(t *testing.T) {
	t.Parallel()
	ok := sample.HostMetrics{CPUs: 2, BusyCores: 1.2, StealCores: 0.01, MemTotalBytes: 8 << 30, MemAvailableBytes: 4 << 30,
		PSI: &sample.Pressure{CPUSome: 0.3}, GeneratorLimitCores: 2, GeneratorWaitCores: f64(0.3), GeneratorWaitPerSliceMs: f64(0.08)}
	if s := Saturation(&ok); s != "" {
		t.Errorf("healthy host: %q", s)
	}
	if s := Starvation(&ok, 0.5); s != "" {
		t.Errorf("healthy generator: %q", s)
	}
	sat := []struct {
		edit func(*sample.HostMetrics)
		want string
	}{
		{func(h *sample.HostMetrics) { h.BusyCores = 1.9 }, "CPU 95% busy"},
		{func(h *sample.HostMetrics) { h.StealCores = 0.4 }, "steal 20%"},
		{func(h *sample.HostMetrics) { h.MemAvailableBytes = 200 << 20 }, "memory 2.4% available"},
		{func(h *sample.HostMetrics) { h.PSI = &sample.Pressure{MemoryFull: 0.2} }, "memory stalls 20% of the time"},
	}
	for _, c := range sat {
		h := ok
		c.edit(&h)
		if got := Saturation(&h); got != c.want {
			t.Errorf("saturation = %q, want %q", got, c.want)
		}
	}
	h := ok
	h.GeneratorLimitCores = 1 // GOMAXPROCS=1, or pinned to one core
	if got := Starvation(&h, 0.95); got != "used 0.95 of the 1 cores it may use" {
		t.Errorf("starvation at the limit = %q", got)
	}
	h.GeneratorWaitPerSliceMs = f64(2.5)
	if got := Starvation(&h, 0.4); got != "its threads waited 2.5 ms for a CPU each time" {
		t.Errorf("starvation by waiting = %q", got)
	}
	h.GeneratorWaitPerSliceMs = nil
	h.GeneratorCPUs, h.GeneratorCPUsBusyCores = 1, 0.97 // pinned to one of two CPUs, and it is full
	if got := Starvation(&h, 0.4); got != "the 1 of 2 CPUs it may run on were 97% busy" {
		t.Errorf("starvation on its pinned CPU = %q", got)
	}
	h.GeneratorCPUs, h.GeneratorCPUsBusyCores = 2, 1.97 // all CPUs: that is the host rule's to say
	if got := Starvation(&h, 0.4); got != "" {
		t.Errorf("unpinned = %q", got)
	}
	h.GeneratorWaitCores, h.GeneratorWaitPerSliceMs = nil, nil // kernel without schedstat: the limit rule still works
	if got := Starvation(&h, 0.4); got != "" {
		t.Errorf("unknown wait = %q", got)
	}
}

// run10 is a 10-second measured run at 100/s with the given send lag and
// latency, plus per-second generator samples and host samples from host(i).
func run10(lagUS, durUS int64, genCores float64, host func(i int) sample.HostMetrics, th Thresholds) *Run {
	start := time.Unix(1_700_000_000, 0)
	m := RunMeta{ID: "r", TargetRPS: 100, Status: StatusDone, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(10 * time.Second)}
	var reqs []Request
	for i := 0; i < 1000; i++ {
		reqs = append(reqs, Request{Seq: int64(i), Phase: Measured, ScheduledUS: start.UnixMicro() + int64(i)*10_000,
			SendLagUS: lagUS, DurationUS: durUS, Status: 200, Outcome: "ok"})
	}
	var res []sample.Resource
	var hs []sample.Host
	for i := 1; i <= 10; i++ {
		at := start.Add(time.Duration(i)*time.Second - 200*time.Millisecond).UnixMicro()
		res = append(res, sample.Resource{AtUS: at, Kind: "engine", Name: "e", CPUMillicores: 300},
			sample.Resource{AtUS: at, Kind: "generator", Name: "g", CPUMillicores: genCores * 1000})
		if host != nil {
			hs = append(hs, sample.Host{AtUS: at, HostMetrics: host(i)})
		}
	}
	return ComputeRun(m, reqs, res, th, hs...)
}

func codes(ws []Warning) string {
	var c []string
	for _, w := range ws {
		c = append(c, string(w.Code))
	}
	return strings.Join(c, ",")
}

func TestRunHealthWarnings(t *testing.T) {
	t.Parallel()
	th := Thresholds{P95Ms: 500, SuccessRatio: 0.99}
	healthy := func(int) sample.HostMetrics {
		return sample.HostMetrics{CPUs: 2, BusyCores: 0.8, Runnable: 1, MemTotalBytes: 8 << 30, MemAvailableBytes: 4 << 30,
			GeneratorLimitCores: 2, GeneratorWaitCores: f64(0.3), GeneratorWaitPerSliceMs: f64(0.05)}
	}
	cases := []struct {
		name     string
		lag, dur int64
		gen      float64
		host     func(int) sample.HostMetrics
		want     string
		detail   string
	}{
		{"healthy", 300, 2000, 0.3, healthy, "", ""},
		{"no host samples (old evidence, kube)", 300, 2000, 0.3, nil, "", ""},
		{"late", 20_000, 2000, 0.3, healthy, "generator_late", "send lag p99 20.0 ms exceeds 5.0 ms"},
		{"lag below the interval and a slow server's latency", 8_000, 50_000, 0.3, healthy, "", ""},
		{"same lag, fast server", 8_000, 2000, 0.3, healthy, "generator_late", "send lag p99 8.0 ms exceeds 5.0 ms"},
		{"one busy second is not saturation", 300, 2000, 0.3, func(i int) sample.HostMetrics {
			h := healthy(i)
			if i == 3 {
				h.BusyCores = 2
			}
			return h
		}, "host_saturated", "host saturated in 1 of 10"}, // 1 of 10 is the 10 % bound
		{"saturated by others", 300, 2000, 0.3, func(i int) sample.HostMetrics {
			h := healthy(i)
			if i > 5 {
				h.BusyCores, h.Runnable = 2, 7
			}
			return h
		}, "host_saturated", "host saturated in 5 of 10 measured seconds (CPU ≥ 90% busy in 5 s, mean 100%; up to 7 runnable threads on 2 CPUs; processes other than the generator and the engine used 1.40 cores"},
		{"generator at GOMAXPROCS=1", 300, 2000, 0.97, func(i int) sample.HostMetrics {
			h := healthy(i)
			h.GeneratorLimitCores = 1
			return h
		}, "generator_starved", "starved of CPU in 10 of 10 measured seconds (≥ 90% of the 1 cores it may use in 10 s, mean 0.97 cores)"},
		{"generator waiting for a CPU", 300, 2000, 0.3, func(i int) sample.HostMetrics {
			h := healthy(i)
			h.GeneratorWaitPerSliceMs = f64(3)
			return h
		}, "generator_starved", "its threads waiting ≥ 1 ms for a CPU each time in 10 s, mean 3.00 ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run10(c.lag, c.dur, c.gen, c.host, th)
			var got []Warning
			for _, w := range r.Warnings {
				if w.Code.Invalidating() {
					got = append(got, w)
				}
			}
			if codes(got) != c.want {
				t.Fatalf("warnings %q, want %q: %+v", codes(got), c.want, got)
			}
			if c.want == "" {
				if !r.ThresholdsPassed {
					t.Errorf("a healthy run failed: %+v", r.Thresholds)
				}
				return
			}
			if !strings.Contains(got[0].Detail, c.detail) {
				t.Errorf("detail %q lacks %q", got[0].Detail, c.detail)
			}
			if r.ThresholdsPassed {
				t.Error("a run with an invalidating warning passed")
			}
			allowed := th
			allowed.AllowWarnings = []WarningCode{got[0].Code}
			if r := run10(c.lag, c.dur, c.gen, c.host, allowed); !r.ThresholdsPassed {
				t.Errorf("allowed warning still fails: %+v", r.Thresholds)
			}
		})
	}
}

// TestTimeoutsHeavy: a run where a large share of requests ended in the
// client's timeout carries timeouts_heavy (its p95 is then the timeout),
// so its figures are never shown as fine; a few timeouts do not.
func TestTimeoutsHeavy(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_800_000_000, 0)
	m := RunMeta{ID: "r", TargetRPS: 10, Status: StatusDone, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(20 * time.Second)}
	for _, tc := range []struct {
		timeouts int
		want     string // "" none, else a part of the detail
	}{{0, ""}, {9, ""}, {10, "10 of 200 requests (5.0%)"}, {60, "from about p70 up"}, {200, "200 of 200"}} {
		var reqs []Request
		for i := range 200 {
			q := Request{Seq: int64(i), ScheduledUS: start.Add(time.Duration(i) * 100 * time.Millisecond).UnixMicro(), DurationUS: 2000,
				Status: 200, Outcome: "ok", Phase: Measured}
			if i < tc.timeouts {
				q.Status, q.Outcome, q.DurationUS = 0, "timeout", 10_000_000
				if i%2 == 0 {
					q.Detail = "awaiting headers"
				}
			}
			reqs = append(reqs, q)
		}
		r := ComputeRun(m, reqs, nil, Thresholds{P95Ms: 500, SuccessRatio: 0.99})
		var got *Warning
		for i, w := range r.Warnings {
			if w.Code == WarnTimeoutsHeavy {
				got = &r.Warnings[i]
			}
		}
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%d timeouts: %s", tc.timeouts, got)
		case tc.want != "" && (got == nil || !strings.Contains(got.Detail, tc.want)):
			t.Errorf("%d timeouts: %v, want a timeouts_heavy saying %q", tc.timeouts, got, tc.want)
		}
	}
}
