package promql

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

func TestWindowArithmetic(t *testing.T) {
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		from, to time.Time
		rng      string
		wantFrom time.Time
		gapStep  time.Duration
	}{
		{"whole seconds", base, base.Add(300 * time.Second), "300s", base, time.Second},
		{"to truncated to the ms, length rounded", base.Add(123456 * time.Nanosecond), base.Add(5*time.Second + 250400*time.Microsecond),
			"5250ms", base, time.Second},
		{"a long window's gap step", base, base.Add(24 * time.Hour), "86400s", base, 87 * time.Second},
		{"never empty", base, base, "1ms", base, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWindow(tc.from, tc.to)
			if got := w.Range(); got != tc.rng {
				t.Errorf("range %s, want %s", got, tc.rng)
			}
			if !w.To.Equal(tc.to.Truncate(time.Millisecond)) {
				t.Errorf("to %v", w.To)
			}
			if w.Len() > 0 && !w.From.Equal(tc.wantFrom) {
				t.Errorf("from %v, want %v", w.From, tc.wantFrom)
			}
			if got := GapStep(w); got != tc.gapStep {
				t.Errorf("gap step %v, want %v", got, tc.gapStep)
			}
		})
	}
	w := NewWindow(base, base.Add(60*time.Second))
	for _, tc := range []struct {
		interval, want time.Duration
	}{
		{time.Second, 4 * time.Second}, {100 * time.Millisecond, 2 * time.Second}, {2500 * time.Millisecond, 10 * time.Second},
		{15 * time.Second, 0}, // two ranges of 60 s do not fit a 60 s window
	} {
		if got := PeakRange(w, tc.interval); got != tc.want {
			t.Errorf("peak range at a %v interval: %v, want %v", tc.interval, got, tc.want)
		}
	}
}

func TestQueryBuilder(t *testing.T) {
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	w := NewWindow(base, base.Add(300*time.Second))
	ca := CAdvisor("perf", []string{"engine-7d9f.a", "engine-2"})
	sel := `{namespace="perf",pod=~"engine-7d9f\\.a|engine-2",container!="",container!="POD"}`
	for _, tc := range []struct{ got, want string }{
		{ca.CPUQuery(w), `sum by (pod) (rate(container_cpu_usage_seconds_total` + sel + `[300s]))`},
		{ca.MemoryQuery(w), `sum by (pod) (avg_over_time(container_memory_working_set_bytes` + sel + `[300s]))`},
		{ca.SamplesQuery(w), `count_over_time(container_cpu_usage_seconds_total` + sel + `[300s])`},
		{ca.LastQuery(), `timestamp(container_cpu_usage_seconds_total` + sel + `)`},
		{ca.GapQuery(w), `max_over_time((time() - timestamp(container_cpu_usage_seconds_total` + sel + `))[300s:1s])`},
		{ca.PeakQuery(w, 15*time.Second), `max_over_time(sum(rate(container_cpu_usage_seconds_total` + sel + `[60s]))[240s:15s])`},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
	}
	proc, err := ParseSelector(`process_cpu_seconds_total{job="tokex-engine"}`)
	if err != nil {
		t.Fatal(err)
	}
	user := Target{CPU: proc, By: ByProcess}
	if got, want := user.CPUQuery(NewWindow(base, base.Add(5250*time.Millisecond))),
		`sum by (job, instance) (rate(process_cpu_seconds_total{job="tokex-engine"}[5250ms]))`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if user.MemoryQuery(w) != "" {
		t.Error("a memory query without a memory selector")
	}
}

// scene is a fake Prometheus with the engine Pods' cAdvisor series around
// a 60 s window that ended 10 s ago, scraped every second.
type scene struct {
	fake    *fakeProm
	client  *Client
	w       Window
	start   time.Time
	now     time.Time
	scrape  time.Duration
	members map[string]float64 // pod -> cores
}

func newScene(t *testing.T) *scene {
	now := time.Now().Truncate(time.Second)
	to := now.Add(-10 * time.Second)
	s := &scene{fake: &fakeProm{}, w: NewWindow(to.Add(-60*time.Second), to), now: now, scrape: time.Second,
		start: to.Add(-90 * time.Second), members: map[string]float64{"engine-0": 0.25, "engine-1": 0.5}}
	srv := s.fake.server(t)
	c, err := New(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.MaxWait, c.Poll = 300*time.Millisecond, 20*time.Millisecond
	s.client = c
	return s
}

func labels(name, pod, container string) map[string]string {
	return map[string]string{"__name__": name, "namespace": "perf", "pod": pod, "container": container}
}

// add puts a pod's CPU (one container) and memory series in.
func (s *scene) add(pod string, cores float64, from, to time.Time, every time.Duration) {
	s.fake.series = append(s.fake.series,
		counter(labels(CAdvisorCPU, pod, "engine"), from, to, every, cores),
		gauge(labels(CAdvisorMemory, pod, "engine"), from, to, every, 64<<20))
}

func (s *scene) standard() {
	for _, pod := range []string{"engine-0", "engine-1"} {
		s.add(pod, s.members[pod], s.start.Add(300*time.Millisecond), s.now, s.scrape)
	}
}

func (s *scene) measure(t *testing.T, pods ...string) (*sample.PromQL, []stats.Warning) {
	t.Helper()
	if pods == nil {
		pods = []string{"engine-0", "engine-1"}
	}
	return s.client.Measure(context.Background(), CAdvisor("perf", pods), s.w, "run-1")
}

func TestMeasureAgainstAFakePrometheus(t *testing.T) {
	s := newScene(t)
	s.standard()
	// The Pod-level sums and the pause container are left out by the
	// default selector: they would double the figure.
	s.fake.series = append(s.fake.series,
		counter(labels(CAdvisorCPU, "engine-0", ""), s.start, s.now, s.scrape, 0.25),
		counter(labels(CAdvisorCPU, "engine-0", "POD"), s.start, s.now, s.scrape, 0.01))
	rec, warns := s.measure(t)
	if len(warns) != 0 {
		t.Fatalf("warnings on good data: %v", warns)
	}
	if !rec.Valid() || len(rec.Members) != 2 {
		t.Fatalf("record %+v", rec)
	}
	for _, m := range rec.Members {
		if want := s.members[m.Name]; m.Cores != want || m.MemoryBytes != 64<<20 || m.Samples < 59 || m.Samples > 61 {
			t.Errorf("%s: %+v, want %.2f cores, 64 MiB, about 60 samples", m.Name, m, want)
		}
	}
	if rec.PeakCores != 0.75 || rec.IntervalSeconds != 1 {
		t.Errorf("peak %v interval %v", rec.PeakCores, rec.IntervalSeconds)
	}
	var names []string
	for _, q := range rec.Queries {
		names = append(names, q.Name)
	}
	if got := strings.Join(names, ","); got != "samples,cpu,last,first,gap,memory,peak" {
		t.Errorf("queries recorded: %s", got)
	}
	if rec.Server != s.client.server || !strings.HasPrefix(rec.Server, "http://127.0.0.1:") {
		t.Errorf("server %q", rec.Server)
	}
	for _, q := range rec.Queries { // what was recorded is what was sent
		if !contains(s.fake.queries, q.Query) {
			t.Errorf("recorded %q was never sent", q.Query)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestDataQualityWarnings holds each check to its code: the data that
// should raise it do, with a record that says what was asked.
func TestDataQualityWarnings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(s *scene)
		pods  []string
		code  stats.WarningCode
		says  string
		valid bool // a figure is still given
	}{
		{"no series at all", func(s *scene) {}, nil, stats.WarnPromQLNoData, "no series of container_cpu_usage_seconds_total", false},
		{"prometheus answers an error", func(s *scene) { s.standard(); s.fake.status = http.StatusInternalServerError }, nil,
			stats.WarnPromQLNoData, "server error: 500", false},
		{"an engine pod without series", func(s *scene) { s.standard() }, []string{"engine-0", "engine-1", "engine-2"},
			stats.WarnPromQLMissingSeries, "no CPU series for engine-2", true},
		{"cpu without memory", func(s *scene) {
			s.standard()
			s.fake.series = s.fake.series[:len(s.fake.series)-1]
		}, nil, stats.WarnPromQLMissingSeries, "no memory series for engine-1", true},
		{"a 15 s scrape interval for a 60 s run", func(s *scene) { s.scrape = 20 * time.Second; s.standard() }, nil,
			stats.WarnPromQLCoarse, "3 samples of the CPU counter in the 60s window", true},
		{"scrapes stop before the window ends", func(s *scene) {
			s.add("engine-0", 0.25, s.start, s.w.To.Add(-15*time.Second), s.scrape)
			s.add("engine-1", 0.5, s.start, s.now, s.scrape)
		}, nil, stats.WarnPromQLStale, "engine-0: its last sample is 15.0 s before the window's end", true},
		{"a pod that started inside the window", func(s *scene) {
			s.add("engine-0", 0.25, s.w.From.Add(20*time.Second), s.now, s.scrape)
			s.add("engine-1", 0.5, s.start, s.now, s.scrape)
		}, nil, stats.WarnPromQLStale, "engine-0: no sample near the window's start", true},
		{"missed scrapes inside the window", func(s *scene) {
			s.standard()
			cpu := &s.fake.series[0] // engine-0's: 12 s of missed scrapes
			var kept []fakeSample
			for _, x := range cpu.samples {
				if x.t < seconds(s.w.From.Add(20*time.Second)) || x.t > seconds(s.w.From.Add(31*time.Second)) {
					kept = append(kept, x)
				}
			}
			cpu.samples = kept
		}, nil, stats.WarnPromQLStale, "engine-0: 12 s without a sample inside the window", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScene(t)
			tc.setup(s)
			rec, warns := s.measure(t, tc.pods...)
			var found bool
			for _, w := range warns {
				if w.Code == tc.code && strings.Contains(w.Detail, tc.says) && w.Run == "run-1" {
					found = true
				}
			}
			if !found {
				t.Fatalf("no %s warning saying %q: %v", tc.code, tc.says, warns)
			}
			if rec == nil || len(rec.Queries) == 0 && tc.code != stats.WarnPromQLNoData {
				t.Fatalf("no queries recorded: %+v", rec)
			}
			if rec.Valid() != tc.valid {
				t.Errorf("valid %v, want %v: %+v", rec.Valid(), tc.valid, rec)
			}
		})
	}
}

func TestClientIsBoundedAndKeepsCredentials(t *testing.T) {
	var auth string
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[` + strings.Repeat(`{"metric":{},"value":[1,"1"]},`, MaxResponseBytes/28) + `]}}`))
	}))
	defer big.Close()
	u := strings.Replace(big.URL, "http://", "http://scraper:s3cret@", 1)
	c, err := New(u+"/?token=abc", nil)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWindow(time.Now().Add(-time.Minute), time.Now())
	rec, warns := c.Measure(context.Background(), CAdvisor("perf", nil), w, "r")
	if auth == "" || !strings.HasPrefix(auth, "Basic ") {
		t.Errorf("no basic authentication sent: %q", auth)
	}
	if len(warns) != 1 || warns[0].Code != stats.WarnPromQLNoData || !strings.Contains(warns[0].Detail, "larger than 8 MiB") {
		t.Errorf("an 8 MiB answer: %v", warns)
	}
	for _, s := range append([]string{rec.Server}, warns[0].Detail) {
		if strings.Contains(s, "s3cret") || strings.Contains(s, "token=abc") {
			t.Errorf("credentials in %q", s)
		}
	}
	redirect := httptest.NewServer(http.RedirectHandler(big.URL, http.StatusTemporaryRedirect))
	defer redirect.Close()
	auth = ""
	c, _ = New(redirect.URL, nil)
	if _, warns := c.Measure(context.Background(), CAdvisor("perf", nil), w, "r"); len(warns) != 1 || auth != "" {
		t.Errorf("a redirect was followed (auth %q) or not said: %v", auth, warns)
	}
	for _, bad := range []string{"ftp://prom:9090", "prom:9090", "http://", "::"} {
		if _, err := New(bad, nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
