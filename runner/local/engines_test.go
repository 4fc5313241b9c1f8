package local_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/evidence"
)

// TestEnginesShareThePort (issue 28 item 3): --engines 1,2 runs each count
// against that many engine processes on one port (SO_REUSEPORT), each
// pinned to its own CPU where the host has two; both engines serve (their
// own CPU, the agents' connections spread over them), and tokens one
// engine issued verify against the keys the other serves (one signing key).
func TestEnginesShareThePort(t *testing.T) {
	c := tinyCampaign()
	c.Sanity.Enabled = false
	c.Agents.Count = 4
	c.Stages, c.Rounds, c.Warmup, c.Duration = []float64{40}, 1, 500*time.Millisecond, 1500*time.Millisecond
	c.Sampling = 250 * time.Millisecond
	c.Target.Embedded.Engines = []int{1, 2}
	c.Target.HTTP = "1.1" // a connection per in-flight request: more connections to spread
	c.Check.Verify.Sample = 1
	r := runCampaign(t, context.Background(), c, filepath.Join(t.TempDir(), "c"), nil, nil, nil)
	if r.err != nil || r.summary == nil {
		t.Fatalf("campaign: %v", r.err)
	}
	sc := r.summary.Scaling
	if sc == nil || len(sc.Counts) != 2 || len(r.summary.Stages) != 2 {
		t.Fatalf("scaling %+v, %d stages", sc, len(r.summary.Stages))
	}
	one, two := r.summary.Stages[0].Runs[0], r.summary.Stages[1].Runs[0]
	if v := two.Verification; v == nil || v.Checked == 0 || v.Failed != 0 || two.OK != two.Requests {
		t.Errorf("two engines: %d of %d ok, verification %+v (a token of one engine must verify against the other's keys)", two.OK, two.Requests, v)
	}
	if len(one.EnginePods) != 0 || len(two.EnginePods) != 2 || two.EnginePods[1].Name != "engine-1" {
		t.Errorf("engine pods: one %+v, two %+v", one.EnginePods, two.EnginePods)
	}
	cn := two.Connections
	if cn == nil || len(cn.Engines) != 2 || cn.Unmatched != 0 {
		t.Fatalf("connections %+v", cn)
	}
	var conns, agents int
	for _, e := range cn.Engines {
		conns += e.Connections
		agents += len(e.Agents)
	}
	if conns < c.Agents.Count || agents < c.Agents.Count {
		t.Errorf("connections %s: every agent's connection is on an engine", cn.Line())
	}
	f, err := evidence.Open(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := f.Manifest
	if len(m.Scaling) != 2 || m.Scaling[1].Replicas != 2 || len(m.Scaling[1].Engines) != 2 || !strings.Contains(m.Scaling[1].Workload, "sharing port") {
		t.Fatalf("manifest scaling %+v", m.Scaling)
	}
	if m.Scaling[1].HostCPUs >= 2 { // tokex may use two CPUs: one each
		cpus := m.Scaling[1].CPUs
		if len(cpus) != 2 || len(cpus[0]) != 1 || len(cpus[1]) != 1 || cpus[0][0] == cpus[1][0] {
			t.Errorf("engines not pinned each to its own CPU: %v", cpus)
		}
	}
	t.Logf("two engines: %s; CPU %+v, balance %.2f", cn.Line(), two.EnginePods, two.EngineBalance)
}
