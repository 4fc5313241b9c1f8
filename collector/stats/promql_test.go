package stats

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/sample"
)

// TestPromQLGivesTheEngineFigure: with a PromQL record the run's engine
// CPU is PromQL's (source promql, the members' rates × the window ÷ the
// exchanges), the samplers' figure of the same window is kept beside it,
// and a record with impossible values is not used.
func TestPromQLGivesTheEngineFigure(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	m := RunMeta{ID: "r", TargetRPS: 10, Status: StatusDone, Started: start,
		MeasuredStart: start.Add(time.Second), MeasuredEnd: start.Add(11 * time.Second)}
	var reqs []Request
	for i := range 110 {
		at := start.Add(time.Duration(i) * 100 * time.Millisecond)
		r := Request{Seq: int64(i), ScheduledUS: at.UnixMicro(), DurationUS: 1000, Status: 200, Outcome: "ok", Phase: Measured}
		if at.Before(m.MeasuredStart) {
			r.Phase = Warmup
		}
		reqs = append(reqs, r)
	}
	var res []sample.Resource
	for s := 0; s <= 12; s++ {
		at := start.Add(time.Duration(s)*time.Second + 500*time.Millisecond)
		res = append(res, sample.Resource{AtUS: at.UnixMicro(), Kind: "engine", Name: "e", CPUMillicores: 300,
			CPUSecondsTotal: 10 + 0.3*at.Sub(start).Seconds(), MemoryBytes: 1 << 20, Source: "proc"})
	}
	m.PromQL = &sample.PromQL{Server: "http://prom:9090", From: m.MeasuredStart, To: m.MeasuredEnd,
		Queries:   []sample.PromQuery{{Name: "cpu", Query: `sum by (pod) (rate(x[10s]))`}, {Name: "memory", Query: `sum by (pod) (avg_over_time(y[10s]))`}},
		Members:   []sample.PromMember{{Name: "engine-0", Cores: 0.125, MemoryBytes: 3 << 20, Samples: 10}, {Name: "engine-1", Cores: 0.2, MemoryBytes: 5 << 20, Samples: 10}},
		PeakCores: 0.4}
	r := ComputeRun(m, reqs, res, Thresholds{P95Ms: 500, SuccessRatio: 0.99})
	c := r.EngineCPU
	// 100 measured exchanges (and none of the warmup's inside the window);
	// 0.325 cores × 10 s = 3.25 CPU-s.
	if c == nil || c.Source != sample.SourcePromQL || c.Method != "rate" || c.AvgCores != 0.325 || c.PeakCores != 0.4 ||
		c.Exchanges != 100 || math.Abs(c.CPUMsPerExchange-32.5) > 1e-9 || c.Samples != 20 {
		t.Fatalf("engine cpu %+v", c)
	}
	if r.EngineMemoryBytes != 8<<20 {
		t.Errorf("memory %d", r.EngineMemoryBytes)
	}
	if s := r.EngineCPUSampled; s == nil || s.Source != "proc" || s.Method != "cumulative" || math.Abs(s.CPUMsPerExchange-30) > 0.01 {
		t.Errorf("sampled %+v", s)
	}
	if r.PromQL == nil || r.PromQL.Query("cpu") == "" {
		t.Error("the queries are not in the run's statistics")
	}
	// Through JSON (the manifest) and back, the same figure.
	b, _ := json.Marshal(m)
	var back RunMeta
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if r2 := ComputeRun(back, reqs, res, Thresholds{P95Ms: 500, SuccessRatio: 0.99}); *r2.EngineCPU != *c {
		t.Errorf("after the manifest: %+v", r2.EngineCPU)
	}
	for name, bad := range map[string]func(p *sample.PromQL){
		"negative cores":  func(p *sample.PromQL) { p.Members[0].Cores = -1 },
		"NaN cores":       func(p *sample.PromQL) { p.Members[1].Cores = math.NaN() },
		"absurd cores":    func(p *sample.PromQL) { p.Members[1].Cores = 1e12 },
		"negative memory": func(p *sample.PromQL) { p.Members[0].MemoryBytes = -5 },
		"too many":        func(p *sample.PromQL) { p.Members = make([]sample.PromMember, sample.MaxPromMembers+1) },
	} {
		p := *m.PromQL
		p.Members = slices.Clone(p.Members)
		bad(&p)
		mm := m
		mm.PromQL = &p
		r := ComputeRun(mm, reqs, res, Thresholds{P95Ms: 500, SuccessRatio: 0.99})
		if r.EngineCPU == nil || r.EngineCPU.Source != "proc" || !slices.ContainsFunc(r.Warnings, func(w Warning) bool { return w.Code == WarnPromQLNoData }) {
			t.Errorf("%s: engine cpu %+v, warnings %v", name, r.EngineCPU, r.Warnings)
		}
	}
	// No answer from Prometheus: the queries are recorded, the samplers'
	// figure stands (and the querier's promql_no_data says why).
	mm := m
	mm.PromQL = &sample.PromQL{Server: "http://prom:9090", Queries: m.PromQL.Queries}
	if r := ComputeRun(mm, reqs, res, Thresholds{P95Ms: 500, SuccessRatio: 0.99}); r.EngineCPU.Source != "proc" || r.PromQL == nil || r.EngineCPUSampled != nil {
		t.Errorf("no members: %+v", r.EngineCPU)
	}
}
