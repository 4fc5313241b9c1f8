package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/runner/runnertest"
)

// podsDriver is a fake driver whose engines are Pods.
type podsDriver struct{ runnertest.Driver }

func (d *podsDriver) EnginePods(context.Context) (string, []string, error) {
	return "perf", []string{"engine-0"}, nil
}

// cadvisorProm answers tokex's queries as a Prometheus that scrapes one
// engine Pod every 100 ms at 0.25 cores: any time asked is covered.
func cadvisorProm(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		q := r.Form.Get("query")
		at, _ := strconv.ParseFloat(r.Form.Get("time"), 64)
		mu.Lock()
		asked = append(asked, q)
		mu.Unlock()
		v := map[string]float64{"vector(1)": 1, "count_over_time": 30, "timestamp": at - 0.05, "max_over_time((time()": 0.1,
			"sum by (pod) (rate": 0.25, "sum by (pod) (avg_over_time": 32 << 20, "max_over_time(sum": 0.3}
		var value float64
		var found bool
		for prefix, x := range v {
			if strings.HasPrefix(q, prefix) {
				value, found = x, true
			}
		}
		if !found {
			http.Error(w, "unknown query", http.StatusBadRequest)
			return
		}
		metric := map[string]string{"pod": "engine-0"}
		if q == "vector(1)" || strings.HasPrefix(q, "max_over_time(sum") {
			metric = map[string]string{}
		}
		b, _ := json.Marshal(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector",
			"result": []any{map[string]any{"metric": metric, "value": []any{at, fmt.Sprint(value)}}}}})
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string{}, asked...) }
}

// TestCampaignAsksPrometheusForEachRun: with kube.engines.prometheus each
// counted run's engine figure comes from PromQL over its window (the
// queries in stats.json and the manifest; a 40 ms window has no peak
// query, so the peak is the average), the sanity run asks nothing,
// and a Prometheus that does not answer stops the campaign before any run.
func TestCampaignAsksPrometheusForEachRun(t *testing.T) {
	srv, asked := cadvisorProm(t)
	c := runnertest.Campaign()
	c.Driver, c.Kube.Engines.Prometheus = "kube", srv.URL
	d := &podsDriver{runnertest.Driver{N: 40}}
	dir := filepath.Join(t.TempDir(), "c")
	r := runFake(t, context.Background(), c, &d.Driver, dir, nil)
	if r.err == nil || !strings.Contains(r.err.Error(), "no engine Pods") {
		t.Fatalf("a driver without Pods and no prometheus_cpu: %v", r.err)
	}
	r = runFake(t, context.Background(), c, d, filepath.Join(t.TempDir(), "c2"), nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, st := range r.summary.Stages {
		for _, run := range st.Runs {
			cpu := run.EngineCPU
			if cpu == nil || cpu.Source != sample.SourcePromQL || cpu.AvgCores != 0.25 || cpu.PeakCores != 0.25 || run.EngineMemoryBytes != 32<<20 {
				t.Errorf("%s: engine %+v memory %d", run.ID, cpu, run.EngineMemoryBytes)
			}
			if run.PromQL == nil || !strings.Contains(run.PromQL.Query("cpu"), `pod=~"engine-0"`) {
				t.Errorf("%s: queries %+v", run.ID, run.PromQL)
			}
		}
	}
	if r.summary.Sanity.PromQL != nil {
		t.Error("the sanity run asked Prometheus")
	}
	// Recomputed from the folder: the same figure.
	f, err := evidence.Open(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := f.Recompute(c.Thresholds)
	if err != nil {
		t.Fatal(err)
	}
	if cpu := s.Stages[0].Reported().EngineCPU; cpu == nil || cpu.Source != sample.SourcePromQL || cpu.AvgCores != 0.25 {
		t.Fatalf("recomputed: %+v", cpu)
	}
	if n := len(asked()); n < 4*7 {
		t.Errorf("%d queries for 4 runs", n)
	}
	c.Kube.Engines.Prometheus = "http://127.0.0.1:1"
	if r := runFake(t, context.Background(), c, d, filepath.Join(t.TempDir(), "c3"), nil); r.err == nil || !strings.Contains(r.err.Error(), "target.prometheus") || len(d.Runs()) != 4+1 {
		t.Errorf("an unreachable Prometheus: %v, runs %v", r.err, d.Runs())
	}
}
