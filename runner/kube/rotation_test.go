package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/runner/config"
)

func TestParseConfigz(t *testing.T) {
	cases := []struct {
		raw  string
		want int64
		err  bool
	}{
		{`{"kubeletconfig":{"enableServer":true,"containerLogMaxSize":"10Mi","containerLogMaxFiles":5}}`, 10 << 20, false},
		{`{"kubeletconfig":{"containerLogMaxSize":"50Mi"}}`, 50 << 20, false},
		{`{"kubeletconfig":{"containerLogMaxSize":"200M"}}`, 200_000_000, false},
		{`{"kubeletconfig":{}}`, defaultContainerLogMaxSize, false},
		{`{"kubeletconfig":{"containerLogMaxSize":"-1Mi"}}`, 0, true},
		{`{"kubeletconfig":{"containerLogMaxSize":"lots"}}`, 0, true},
		{`{}`, 0, true},
		{`<html>`, 0, true},
	}
	for _, c := range cases {
		got, err := parseConfigz([]byte(c.raw))
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%s: %d, %v; want %d (error %v)", c.raw, got, err, c.want, c.err)
		}
	}
}

// The article's run: 500/s over 10 agents for 30 s + 300 s is 16,500 lines
// an agent, about 1.8 MiB; 100 times the rate on the same agents is 100
// times the bytes, past the kubelet's 10 MiB.
func TestAgentLogEstimate(t *testing.T) {
	p := event.PlannedRun{TargetRPS: 500, Warmup: 30 * time.Second, Duration: 300 * time.Second}
	lines, per := agentLogEstimate(p, 10)
	if lines != 16502 || per < 100 || per > 130 {
		t.Errorf("%d lines × %d bytes", lines, per)
	}
	p.TargetRPS = 50000
	l2, p2 := agentLogEstimate(p, 10)
	if l2 != 1650002 || p2 <= per || l2*p2 <= defaultContainerLogMaxSize {
		t.Errorf("%d lines × %d bytes", l2, p2)
	}
}

// TestLogBudget reads the nodes' containerLogMaxSize through the nodes
// proxy, once per node, and warns when an agent's log outgrows the smallest.
func TestLogBudget(t *testing.T) {
	var reads int
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/nodes/big/proxy/configz", func(w http.ResponseWriter, r *http.Request) {
		reads++
		_, _ = w.Write([]byte(`{"kubeletconfig":{"containerLogMaxSize":"100Mi"}}`))
	})
	mux.HandleFunc("/api/v1/nodes/small/proxy/configz", func(w http.ResponseWriter, r *http.Request) {
		reads++
		_, _ = w.Write([]byte(`{"kubeletconfig":{"containerLogMaxSize":"1Mi"}}`))
	})
	mux.HandleFunc("/api/v1/nodes/hidden/proxy/configz", func(w http.ResponseWriter, r *http.Request) {
		reads++
		http.Error(w, `{"kind":"Status","code":403}`, http.StatusForbidden)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Article()
	budget := func(nodes ...string) string {
		d := &Driver{Cfg: cfg, Client: cs}
		for _, n := range append(nodes, nodes...) {
			d.logLimits.note(context.Background(), cs, n)
		}
		out := &sink{}
		r := &kubeRun{d: d, out: out, p: event.PlannedRun{TargetRPS: 500, Warmup: 30 * time.Second, Duration: 300 * time.Second}}
		r.logBudget()
		return out.text()
	}
	if got := budget("hidden"); !strings.Contains(got, "rotates at 10.0 MiB (the kubelet default") || strings.Contains(got, "lost") {
		t.Errorf("%q", got)
	}
	if got := budget("big"); !strings.Contains(got, "rotates at 100.0 MiB (the smallest containerLogMaxSize") {
		t.Errorf("%q", got)
	}
	got := budget("big", "small", "hidden")
	if !strings.Contains(got, "about 1.7 MiB of log this run (16502 lines × 110 bytes") || !strings.Contains(got, "rotates at 1.0 MiB") ||
		!strings.Contains(got, "use 18 or more agents") {
		t.Errorf("%q", got)
	}
	if reads != 5 { // 1 + 1 + 3 nodes, each read once per driver
		t.Errorf("%d configz reads", reads)
	}
}
