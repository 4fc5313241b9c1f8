package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestRequestKind(t *testing.T) {
	cases := []struct{ method, url, want string }{
		{"GET", "/api/v1/namespaces/pf-perf/pods?labelSelector=a%3Db", "list pods"},
		{"GET", "/api/v1/namespaces/pf-perf/pods?labelSelector=a%3Db&watch=true", "watch pods"},
		{"GET", "/api/v1/namespaces/pf-perf/pods/agent-0", "get pods"},
		{"GET", "/api/v1/namespaces/pf-perf/pods/agent-0/log?container=k6&follow=true&timestamps=true", "follow pods/log"},
		{"GET", "/api/v1/namespaces/pf-perf/pods/agent-0/log?container=k6", "get pods/log"},
		{"POST", "/api/v1/namespaces/pf-perf/pods/agent-0/exec?command=cat", "exec pods/exec"},
		{"GET", "/api/v1/namespaces/pf-perf/pods/agent-0/exec?command=cat", "exec pods/exec"},
		{"POST", "/apis/batch/v1/namespaces/pf-perf/jobs", "create jobs.batch"},
		{"DELETE", "/apis/batch/v1/namespaces/pf-perf/jobs/tokex-x-1", "delete jobs.batch"},
		{"GET", "/apis/metrics.k8s.io/v1beta1/namespaces/pf-perf/pods?labelSelector=x", "list pods.metrics.k8s.io"},
		{"GET", "/apis/metrics.k8s.io/v1beta1/nodes", "list nodes.metrics.k8s.io"},
		{"GET", "/api/v1/nodes/node-1/proxy/metrics/resource", "get nodes/proxy"},
		{"POST", "/api/v1/namespaces/pf-perf/pods/engine-0/portforward", "portforward pods/portforward"},
		{"GET", "/apis", "discovery"},
		{"GET", "/api", "discovery"},
		{"GET", "/version", "discovery"},
	}
	for _, c := range cases {
		req := httptest.NewRequest(c.method, c.url, nil)
		if got := requestKind(req); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.method, c.url, got, c.want)
		}
	}
}

// TestAPICounter counts what a real client sends and reads.
func TestAPICounter(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","items":[]}`))
	}))
	defer ts.Close()
	cfg := &rest.Config{Host: ts.URL}
	c := CountRequests(cfg)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	before := c.Snapshot()
	for i := 0; i < 3; i++ {
		if _, err := cs.CoreV1().Pods("pf-perf").List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	u := c.Snapshot().Since(before)
	if u.By["list pods"] != 3 || u.Total() != 3 || u.Bytes != 3*47 {
		t.Errorf("%+v", u)
	}
	s := u.String(2 * time.Second)
	if !strings.HasPrefix(s, "3 requests in 2 s (1.50/s; 0 of them streams held open, 1.50/s without them): 3 list pods;") {
		t.Errorf("%q", s)
	}
}

func TestAPIBudget(t *testing.T) {
	u := APIUsage{By: map[string]int64{"follow pods/log": 500, "watch pods": 3, "list pods": 5, "list pods.metrics.k8s.io": 24,
		"list nodes.metrics.k8s.io": 12, "create jobs.batch": 1, "delete jobs.batch": 1}}
	// 43 besides streams; 36 s at 3 s is 13 intervals: 20 + 52 = 72.
	if got := u.OverBudget(36*time.Second, 3*time.Second); got != "" {
		t.Errorf("within budget: %q", got)
	}
	u.By["list pods"] = 330 // a List every second, as before the watch
	if got := u.OverBudget(36*time.Second, 3*time.Second); !strings.HasPrefix(got, "API server: 368 requests besides streams this run, over tokex's budget of 72") {
		t.Errorf("%q", got)
	}
}
