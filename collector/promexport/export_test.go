package promexport

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// stream is a campaign of one 100/s run: 1 s of warmup, 2 s measured.
func stream(at time.Time) []event.Event {
	run := event.PlannedRun{ID: "01-r1-100rps", Index: 1, Round: 1, TargetRPS: 100, Warmup: time.Second, Duration: 2 * time.Second}
	buckets := func(ok, slow int64) []int64 {
		b := make([]int64, len(event.LatencyBoundsMs)+1)
		b[3], b[6] = ok, slow // ≤ 5 ms and ≤ 50 ms
		return b
	}
	return []event.Event{
		event.CampaignStarted{At: at, ID: "20261201-quick", Runs: []event.PlannedRun{{ID: "00-sanity", Sanity: true, TargetRPS: 100}, run}},
		event.RunStarted{At: at, Run: run},
		event.Resource{At: at, Role: "engine", Name: "tokex-serve", CPUMillicores: 250, MemoryBytes: 30 << 20, Source: "proc"},
		event.Window{At: at, Seconds: 1, RunID: run.ID, Phase: stats.Warmup, TargetRPS: 100, Completed: 100, OK: 100, LatencyBuckets: buckets(100, 0),
			Latency: stats.Latency{Count: 100, Avg: 3}},
		event.PhaseChanged{At: at.Add(time.Second), RunID: run.ID, Phase: stats.Measured},
		event.Window{At: at.Add(time.Second), Seconds: 1, RunID: run.ID, Phase: stats.Measured, TargetRPS: 100, Completed: 99, OK: 96, Errors: 3,
			NoResponse: 1, ErrorKinds: map[string]int64{"oauth_error:invalid_grant": 1, "timeout": 1}, Dropped: 1, InFlight: 4,
			LatencyBuckets: buckets(90, 9), Latency: stats.Latency{Count: 99, Avg: 8}, SendLagP99: 0.5},
		event.Resource{At: at.Add(time.Second), Role: "engine", Name: "tokex-serve", CPUMillicores: 500, MemoryBytes: 31 << 20, Source: "proc"},
		event.Resource{At: at.Add(time.Second), Role: "generator", Name: "tokex-generator", CPUMillicores: 120},
		event.Window{At: at.Add(2 * time.Second), Seconds: 0.5, RunID: run.ID, Phase: stats.Measured, TargetRPS: 100, Completed: 50, OK: 50,
			LatencyBuckets: buckets(50, 0), Latency: stats.Latency{Count: 50, Avg: 2}},
		// The warmup's last window, flushed a second late.
		event.Window{At: at.Add(900 * time.Millisecond), Seconds: 0.1, RunID: run.ID, Phase: stats.Warmup, TargetRPS: 100, Completed: 10, OK: 10,
			LatencyBuckets: buckets(10, 0), Latency: stats.Latency{Count: 10, Avg: 3}},
	}
}

func gather(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// value is the value of name's series whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// TestExporterServesTheStream: every figure a stream carries is served,
// labelled by campaign, stage, run and phase; a run's live gauges go when
// it finishes and its figures stay.
func TestExporterServesTheStream(t *testing.T) {
	e := New()
	at := time.Unix(1_800_000_000, 0)
	for _, ev := range stream(at) {
		e.Consume(ev)
	}
	fams := gather(t, e)
	run := map[string]string{"campaign": "20261201-quick", "stage": "100", "run": "01-r1-100rps"}
	measured := with(run, "phase", "measured")
	// The warmup's live gauges went with it: a sum by run is the measured
	// phase's alone.
	for _, g := range []string{TargetRate, AchievedRate, InFlight, SendLagP99} {
		if v, ok := value(fams, g, with(run, "phase", "warmup")); ok {
			t.Errorf("%s still has the warmup's %v in the measured phase", g, v)
		}
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{TargetRate, measured, 100},
		{Responses, measured, 98 + 50},
		{Responses, with(run, "phase", "warmup"), 110},
		{Exchanges, with(measured, "outcome", "ok"), 146},
		{Exchanges, with(measured, "outcome", "oauth_error"), 1},
		{Exchanges, with(measured, "outcome", "timeout"), 1},
		{Exchanges, with(measured, "outcome", "other"), 1}, // an error the kinds did not name
		{Dropped, measured, 1},
		{WindowSeconds, measured, 1.5},
		{AchievedRate, measured, 100}, // the last window: 50 in half a second
		{InFlight, measured, 0},
		{SendLagP99, measured, 0},
		{Latency, measured, 149},
		{EngineCPU, with(measured, "engine", "tokex-serve"), 0.5},
		{EngineMemory, with(with(measured, "engine", "tokex-serve"), "source", "pid"), 31 << 20},
		{GeneratorCPU, measured, 0.12},
	} {
		got, ok := value(fams, tc.name, tc.labels)
		if !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	h := fams[Latency].GetMetric()
	for _, m := range h {
		if lv := labelValue(m, "phase"); lv != "measured" {
			continue
		}
		hist := m.GetHistogram()
		// cumulative: ≤ 5 ms 140, ≤ 50 ms 149; the sum from the averages.
		if b := hist.GetBucket(); b[3].GetCumulativeCount() != 140 || b[6].GetCumulativeCount() != 149 || b[len(b)-1].GetUpperBound() != 10 {
			t.Errorf("buckets %v", b)
		}
		if s := hist.GetSampleSum(); s < 0.891 || s > 0.893 { // 99 × 8 ms + 50 × 2 ms
			t.Errorf("sum %v", s)
		}
	}
	e.Consume(event.RunFinished{At: at.Add(3 * time.Second), RunID: "01-r1-100rps", Status: stats.StatusDone, Stats: &stats.Run{
		ThresholdsPassed: true, AchievedRPS: 98.7, LatencyMs: stats.Latency{P95: 12, P99: 40},
		EngineCPU: &stats.CPU{CPUMsPerExchange: 2.5, Source: "promql"}}})
	fams = gather(t, e)
	for _, gone := range []string{TargetRate, AchievedRate, InFlight, SendLagP99} {
		if _, ok := value(fams, gone, run); ok {
			t.Errorf("%s still served for a finished run", gone)
		}
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{Responses, measured, 148}, {RunPassed, measured, 1}, {RunAchievedRate, measured, 98.7},
		{RunLatency, with(measured, "quantile", "0.95"), 0.012}, {RunCPUMs, with(measured, "source", "promql"), 2.5},
		{CampaignRunsDone, map[string]string{"campaign": "20261201-quick"}, 1},
	} {
		if got, ok := value(fams, tc.name, tc.labels); !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		if a != k {
			out[a] = b
		}
	}
	return out
}

// TestExporterBoundsAHostileStream: a replayed stream may say anything; the
// exporter keeps a bounded set of series with values Prometheus can hold.
func TestExporterBoundsAHostileStream(t *testing.T) {
	e := New()
	at := time.Unix(1_800_000_000, 0)
	long := strings.Repeat("x", 10_000)
	e.Consume(event.CampaignStarted{At: at, ID: long, Runs: []event.PlannedRun{{ID: long, TargetRPS: 1}}})
	e.Consume(event.RunStarted{At: at, Run: event.PlannedRun{ID: long, TargetRPS: 1}})
	e.Consume(event.Window{RunID: long, Phase: stats.Measured, Completed: -5, NoResponse: 9, OK: -1, Errors: 3,
		ErrorKinds: map[string]int64{"\x1b[31m:x": 2, "ok": -7}, LatencyBuckets: []int64{1, 2, 3}, SendLagP99: -1, Seconds: 1e300})
	e.Consume(event.Window{RunID: "never-announced", Phase: stats.Measured, Completed: 5})
	for i := range 2 * maxEngines {
		e.Consume(event.Resource{Role: "engine", Name: fmt.Sprintf("engine-%d-%s", i, long), CPUMillicores: math.Inf(1)})
	}
	fams := gather(t, e)
	if n := len(fams[EngineCPU].GetMetric()); n != maxEngines {
		t.Errorf("%d engine series", n)
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if len(l.GetValue()) > maxLabelLen {
					t.Fatalf("%s: a label of %d bytes", f.GetName(), len(l.GetValue()))
				}
				if l.GetName() == "outcome" && !strings.Contains("ok oauth_error http_error bad_response timeout conn_error other", l.GetValue()) {
					t.Errorf("outcome %q", l.GetValue())
				}
			}
			if c := m.GetCounter(); c != nil && c.GetValue() < 0 {
				t.Errorf("%s: a negative counter", f.GetName())
			}
		}
	}
	if fams[Latency] != nil {
		t.Error("a malformed bucket set was counted")
	}
}

// TestServerServesOpenMetricsAndWaitsForAScrape: the listener serves
// OpenMetrics to a scraper that asks for it and tells when a scrape came.
func TestServerServesOpenMetricsAndWaitsForAScrape(t *testing.T) {
	e := New()
	for _, ev := range stream(time.Now()) {
		e.Consume(ev)
	}
	s, err := Serve("127.0.0.1:0", e)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	finished := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if s.WaitScrape(ctx, finished) {
		t.Error("a scrape before any came")
	}
	cancel()
	req, _ := http.NewRequest("GET", "http://"+s.Addr()+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") || !strings.HasSuffix(string(body), "# EOF\n") {
		t.Fatalf("content type %q, body ends %q", ct, body[max(0, len(body)-20):])
	}
	if !strings.Contains(string(body), `tokex_latency_seconds_bucket{campaign="`) {
		t.Error("no classic histogram buckets")
	}
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !s.WaitScrape(ctx, finished) {
		t.Error("the scrape was not seen")
	}
	for _, path := range []string{"/", "/debug/pprof/"} {
		resp, err := http.Get("http://" + s.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
}
