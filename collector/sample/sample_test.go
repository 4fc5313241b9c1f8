package sample

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func record() *PromQL {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &PromQL{Server: "http://prom:9090", From: at, To: at.Add(30 * time.Second),
		Queries:   []PromQuery{{Name: "cpu", Query: `sum by (pod) (rate(c[30s]))`}, {Name: "memory", Query: `avg_over_time(m[30s])`}},
		Members:   []PromMember{{Name: "engine-0", Cores: 0.25, MemoryBytes: 1 << 20, Samples: 7}, {Name: "engine-1", Cores: 0.5, Samples: 7}},
		PeakCores: 0.9, IntervalSeconds: 5}
}

// TestPromQLValid: a record from a hostile or broken manifest gives no
// figure; one within bounds does, and survives JSON unchanged.
func TestPromQLValid(t *testing.T) {
	t.Parallel()
	if !record().Valid() {
		t.Fatal("a sound record is not valid")
	}
	var nilRec *PromQL
	cases := map[string]func(p *PromQL){
		"no members":       func(p *PromQL) { p.Members = nil },
		"too many members": func(p *PromQL) { p.Members = make([]PromMember, MaxPromMembers+1) },
		"too many queries": func(p *PromQL) { p.Queries = make([]PromQuery, MaxPromQueries+1) },
		"negative cores":   func(p *PromQL) { p.Members[0].Cores = -0.1 },
		"NaN cores":        func(p *PromQL) { p.Members[1].Cores = math.NaN() },
		"+Inf cores":       func(p *PromQL) { p.Members[1].Cores = math.Inf(1) },
		"absurd cores":     func(p *PromQL) { p.Members[0].Cores = MaxPromCores + 1 },
		"negative memory":  func(p *PromQL) { p.Members[0].MemoryBytes = -1 },
		"negative samples": func(p *PromQL) { p.Members[0].Samples = -1 },
		"NaN peak":         func(p *PromQL) { p.PeakCores = math.NaN() },
		"negative peak":    func(p *PromQL) { p.PeakCores = -1 },
		"absurd interval":  func(p *PromQL) { p.IntervalSeconds = 1e10 },
	}
	for name, bad := range cases {
		p := record()
		bad(p)
		if p.Valid() {
			t.Errorf("%s: valid", name)
		}
	}
	if nilRec.Valid() {
		t.Error("a nil record is valid")
	}
	b, err := json.Marshal(record())
	if err != nil {
		t.Fatal(err)
	}
	var back PromQL
	if err := json.Unmarshal(b, &back); err != nil || !back.Valid() || back.Line() != record().Line() || !back.To.Equal(record().To) {
		t.Errorf("through JSON: %v %+v", err, back)
	}
}

// TestPromQLQueryAndLine: the query sent by name, and the one-line account
// of the answer (the dashboard's and the log's).
func TestPromQLQueryAndLine(t *testing.T) {
	t.Parallel()
	p := record()
	if q := p.Query("memory"); q != `avg_over_time(m[30s])` {
		t.Errorf("memory query %q", q)
	}
	if q := p.Query("peak"); q != "" {
		t.Errorf("a query never sent: %q", q)
	}
	if got, want := p.Line(), "promql 0.75 cores (engine-0, engine-1) from http://prom:9090"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	if !strings.HasPrefix((&PromQL{Server: "http://p"}).Line(), "promql 0 cores () from http://p") {
		t.Errorf("empty record's line %q", (&PromQL{Server: "http://p"}).Line())
	}
}
