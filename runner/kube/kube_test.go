package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/runner/config"
)

func testObjects(t *testing.T) *Objects {
	t.Helper()
	key, err := jose.GenerateKey(jose.RS256)
	if err != nil {
		t.Fatal(err)
	}
	c := config.Article()
	c.Driver = "kube"
	c.Target.URL = "https://pf-pingfederate-engine:9031/as/token.oauth2"
	c.Kube.Tolerations = []map[string]any{{"key": "dedicated", "operator": "Equal", "value": "load", "effect": "NoSchedule", "tolerationSeconds": 30}}
	c.Kube.NodeSelector = map[string]string{"type": "kwok"}
	if err := c.Validate(nil); err != nil {
		t.Fatal(err)
	}
	return &Objects{Cfg: c, CampaignID: "20261130-120000-Article_1", Namespace: "pf-perf", Secret: "s3cret-value", Key: key}
}

func TestJobObject(t *testing.T) {
	o := testObjects(t)
	p := event.PlannedRun{ID: "03-r1-500rps", Index: 3, Round: 1, TargetRPS: 500, Warmup: 30 * time.Second, Duration: 5 * time.Minute, Agents: 10}
	j, err := o.JobObject(p)
	if err != nil {
		t.Fatal(err)
	}
	s := j.Spec
	if *s.Completions != 10 || *s.Parallelism != 10 || *s.BackoffLimit != 0 || string(*s.CompletionMode) != "Indexed" || *s.TTLSecondsAfterFinished != 600 {
		t.Errorf("job spec %+v", s)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || pod.Containers[0].Image != "grafana/k6:2.2.0" || pod.NodeSelector["type"] != "kwok" {
		t.Errorf("pod spec %+v", pod)
	}
	if len(pod.Tolerations) != 1 || *pod.Tolerations[0].TolerationSeconds != 30 {
		t.Errorf("tolerations %+v", pod.Tolerations)
	}
	// 500/s over 10 agents, RS256: 100m + 50 × 5 ms = 350m; 64Mi + 2 × 100 VUs × 0.4Mi + 50/s × 0.1Mi = 149Mi.
	if rq := pod.Containers[0].Resources.Requests; rq.Cpu().String() != "350m" || rq.Memory().String() != "149Mi" {
		t.Errorf("resources %+v", pod.Containers[0].Resources)
	}
	for _, l := range []map[string]string{j.Labels, s.Template.Labels} {
		if l[LabelName] != "tokex" || l[LabelInstance] != "20261130-120000-article-1" || l[LabelRun] != "03-r1-500rps" {
			t.Errorf("labels %v", l)
		}
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range pod.Containers[0].Env {
		env[e.Name] = e
	}
	if env["RATE_MILLI"].Value != "50000" || env["WARMUP"].Value != "30s" || env["DURATION"].Value != "300s" {
		t.Errorf("rate/durations: %v %v %v", env["RATE_MILLI"], env["WARMUP"], env["DURATION"])
	}
	if env["AGENT_INDEX"].ValueFrom == nil || !strings.Contains(env["AGENT_INDEX"].ValueFrom.FieldRef.FieldPath, "job-completion-index") {
		t.Error("AGENT_INDEX does not come from the completion index")
	}
	if env["CLIENT_SECRET"].ValueFrom == nil || env["CLIENT_SECRET"].Value != "" || env["SUBJECT_JWK"].ValueFrom == nil {
		t.Error("secrets are not referenced from the Secret")
	}
	b, _ := json.Marshal(j)
	if strings.Contains(string(b), "s3cret-value") || strings.Contains(string(b), `"d":`) {
		t.Error("the Job carries secret material")
	}
	if !strings.Contains(env["FORM"].Value, "resource=https%3A%2F%2Fmcp.example.internal%2Fmcp") {
		t.Errorf("form %q", env["FORM"].Value)
	}
	if args := strings.Join(pod.Containers[0].Args, " "); args != "run --quiet --no-color --log-format=raw /scripts/exchange.js" {
		t.Errorf("args %q", args)
	}
	o.Cfg.Kube.SummaryMode = "full"
	if j, _ := o.JobObject(p); !slices.Contains(j.Spec.Template.Spec.Containers[0].Args, "--summary-mode=full") {
		t.Errorf("args %q", j.Spec.Template.Spec.Containers[0].Args)
	}
	// A wrong Kubernetes field name is an error, not silently ignored.
	o.Cfg.Kube.Tolerations = []map[string]any{{"keyy": "x"}}
	if _, err := o.JobObject(p); err == nil || !strings.Contains(err.Error(), "kube.tolerations") {
		t.Errorf("err = %v", err)
	}
}

func TestSecretAndConfigMap(t *testing.T) {
	o := testObjects(t)
	s, err := o.SecretObject()
	if err != nil {
		t.Fatal(err)
	}
	var jwk map[string]any
	_ = json.Unmarshal([]byte(s.StringData["subject-jwk"]), &jwk)
	if jwk["kty"] != "RSA" || jwk["d"] == nil || jwk["kid"] != o.Key.Kid || s.StringData["client-secret"] != "s3cret-value" {
		t.Errorf("secret %v", jwk)
	}
	cm, err := o.ConfigMapObject()
	if err != nil || !strings.Contains(cm.Data["exchange.js"], "constant-arrival-rate") {
		t.Fatalf("configmap %v", err)
	}
	if len(o.Name()) > 52 || strings.ToLower(o.Name()) != o.Name() {
		t.Errorf("name %q", o.Name())
	}
}

func TestPodFailure(t *testing.T) {
	waiting := func(reason string) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "k6",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "m"}}}}}}
	}
	unsched := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
		Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/6 nodes are available"}}}}
	oom := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "k6",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}}}
	thresholds := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "k6",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 99}}}}}}
	cases := []struct {
		name string
		pod  *corev1.Pod
		age  time.Duration
		want string
	}{
		{"image pull", waiting("ImagePullBackOff"), time.Second, "ImagePullBackOff"},
		{"err image pull", waiting("ErrImagePull"), time.Second, "ErrImagePull"},
		{"container creating is fine", waiting("ContainerCreating"), time.Second, ""},
		{"unschedulable early", unsched, 5 * time.Second, ""},
		{"unschedulable late", unsched, 31 * time.Second, "not scheduled after 30s: 0/6 nodes"},
		{"oom", oom, time.Minute, "OOMKilled"},
		{"exit 99 is a verdict", thresholds, time.Minute, ""},
	}
	for _, c := range cases {
		got := podFailure(c.pod, c.age, 30*time.Second)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q", c.name, got)
		}
	}
}

func TestFollowerResumesWithoutLosingOrDoubling(t *testing.T) {
	var got []string
	f := &follower{line: func(l string) { got = append(got, l) }}
	first := []string{"2026-11-30T10:00:00.1Z a", "2026-11-30T10:00:00.2Z b", "2026-11-30T10:00:00.2Z c"}
	seen := 0
	for _, l := range first {
		f.consume(l, &seen)
	}
	// The stream drops; the resumed stream starts at the second boundary.
	resumed := []string{"2026-11-30T10:00:00.0Z old", "2026-11-30T10:00:00.1Z a", "2026-11-30T10:00:00.2Z b", "2026-11-30T10:00:00.2Z c",
		"2026-11-30T10:00:00.2Z d", "2026-11-30T10:00:01.5Z e"}
	seen = 0
	for _, l := range resumed {
		f.consume(l, &seen)
	}
	if strings.Join(got, "") != "abcde" {
		t.Errorf("lines %v", got)
	}
}

func TestStartAndCloseLeaveNothing(t *testing.T) {
	o := testObjects(t)
	cs := fake.NewClientset()
	d := &Driver{Cfg: o.Cfg, CampaignID: o.CampaignID, Client: cs, Namespace: "pf-perf", Secret: "x", Key: o.Key}
	out := &sink{}
	if err := d.Start(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.text(), "metrics.k8s.io is not served") {
		t.Errorf("no warning about the missing metrics API: %s", out.text())
	}
	ctx := context.Background()
	if _, err := cs.CoreV1().Secrets("pf-perf").Get(ctx, o.Name(), metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	// A leftover Job of this campaign.
	j, _ := o.JobObject(event.PlannedRun{ID: "r", TargetRPS: 10, Duration: time.Second})
	_, _ = cs.BatchV1().Jobs("pf-perf").Create(ctx, j, metav1.CreateOptions{})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	sec, _ := cs.CoreV1().Secrets("pf-perf").List(ctx, metav1.ListOptions{})
	cms, _ := cs.CoreV1().ConfigMaps("pf-perf").List(ctx, metav1.ListOptions{})
	jobs, _ := cs.BatchV1().Jobs("pf-perf").List(ctx, metav1.ListOptions{})
	if len(sec.Items)+len(cms.Items)+len(jobs.Items) != 0 {
		t.Errorf("left behind: %d secrets, %d configmaps, %d jobs", len(sec.Items), len(cms.Items), len(jobs.Items))
	}
}

type sink struct{ logs []string }

func (s *sink) Emit(e event.Event) {
	if l, ok := e.(event.Log); ok {
		s.logs = append(s.logs, l.Message)
	}
}
func (s *sink) Record(*stats.Request) {}
func (s *sink) text() string          { return strings.Join(s.logs, "\n") }

func TestParseResourceMetrics(t *testing.T) {
	text := `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="engine",namespace="pf-perf",pod="pf-engine-0"} 120.5 1789978138000
container_cpu_usage_seconds_total{container="sidecar",namespace="pf-perf",pod="pf-engine-0"} 1.5 1789978138000
# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="pf-perf",pod="pf-engine-0"} 1.5e+09 1789978138000
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 9000.1 1789978138000
`
	m, err := parseResourceMetrics(text)
	if err != nil {
		t.Fatal(err)
	}
	pc := m["pf-perf/pf-engine-0"]
	if pc.cpuSeconds != 122 || pc.memory != 1500000000 || pc.at.UnixMilli() != 1789978138000 || len(m) != 1 {
		t.Errorf("%+v (%d pods)", pc, len(m))
	}
	if _, err := parseResourceMetrics("garbage{{{"); err == nil {
		t.Error("accepted garbage")
	}
}

// TestEngineCPUFromKubeletCounters serves the three API paths the exact
// engine-CPU path reads (engine Pods, their Node, the kubelet's
// /metrics/resource through the nodes proxy) from a stand-in API server.
func TestEngineCPUFromKubeletCounters(t *testing.T) {
	var reads, nodeGets atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/namespaces/pf-perf/pods", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		pods := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
		for i := 0; i < 2; i++ {
			pods.Items = append(pods.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pf-engine-%d", i), Namespace: "pf-perf"},
				Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i), Containers: []corev1.Container{
					{Name: "engine", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")},
						Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}},
					{Name: "sidecar", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
						Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}}}}})
		}
		_ = json.NewEncoder(w).Encode(pods)
	})
	mux.HandleFunc("/api/v1/nodes/", func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v1/nodes/"), "/")
		node := parts[0]
		if len(parts) == 1 {
			nodeGets.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(corev1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: node}})
			return
		}
		if strings.Join(parts[1:], "/") != "proxy/metrics/resource" {
			http.NotFound(w, r)
			return
		}
		n := reads.Add(1)
		i := node[len(node)-1:]
		// 1.3 cores per engine: +13 CPU-seconds per 10 s.
		fmt.Fprintf(w, "# TYPE pod_cpu_usage_seconds_total counter\npod_cpu_usage_seconds_total{namespace=\"pf-perf\",pod=\"pf-engine-%s\"} %f %d\n"+
			"# TYPE pod_memory_working_set_bytes gauge\npod_memory_working_set_bytes{namespace=\"pf-perf\",pod=\"pf-engine-%s\"} 1.4e9 %d\n",
			i, 100+13*float64((n+1)/2), 1789978130000+10000*int64((n+1)/2), i, 1789978130000+10000*int64((n+1)/2))
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	o := testObjects(t)
	o.Cfg.Kube.Engines.Selector = "app=pf-engine"
	out := &sink{}
	var res []event.Resource
	p := &metricsPoller{d: &Driver{Cfg: o.Cfg, Client: cs, objs: o}, out: &resourceSink{sink: out, res: &res}, seen: map[string]time.Time{},
		prev: map[string]podCPU{}, paths: map[string]string{}}
	engines, err := cs.CoreV1().Pods("pf-perf").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if !p.engineKubelet(context.Background(), engines.Items) {
			t.Fatalf("poll %d: not exact: %v", i, out.logs)
		}
	}
	// Each node's metrics path is looked up once, not every interval.
	if n := nodeGets.Load(); n != 2 {
		t.Errorf("%d node reads for 2 nodes", n)
	}
	if len(res) != 4 {
		t.Fatalf("%d samples: %+v", len(res), res)
	}
	for _, r := range res {
		// The dashboard shows the Pods' requests and limits next to their use.
		if r.Role != "engine" || r.CPUMillicores < 1299 || r.CPUMillicores > 1301 || r.CPUSecondsTotal == 0 || r.MemoryBytes != 1.4e9 ||
			r.RequestMillicores != 1600 || r.LimitMillicores != 2200 {
			t.Errorf("sample %+v", r)
		}
	}
}

type resourceSink struct {
	*sink
	res *[]event.Resource
}

func (r *resourceSink) Emit(e event.Event) {
	if x, ok := e.(event.Resource); ok {
		*r.res = append(*r.res, x)
	}
	r.sink.Emit(e)
}

// TestAgentSizing: the requests follow the per-agent rate and the signing
// algorithm (issue 10 item 4: RS256 costs real k6 3.6–5 ms of CPU per
// request, 3.3 ms of it minting; 105–139 MB with 200 VUs), and
// kube.resources overrides what it sets.
func TestAgentSizing(t *testing.T) {
	cases := []struct {
		rate        float64 // total
		alg         string
		vus         int // max_in_flight: VUs per scenario
		warmup      time.Duration
		resources   map[string]any
		cpu, memory string
		limit       string
	}{
		// The article's 50/s per agent: ~0.25 core of work + 100m; 2 × 100
		// pre-allocated VUs (warmup and measured): above the 139 MB measured.
		{500, "RS256", 100, 30 * time.Second, nil, "350m", "149Mi", ""},
		{500, "ES256", 100, 30 * time.Second, nil, "250m", "149Mi", ""},  // 100m + 50 × 3 ms
		{2000, "ES256", 100, 30 * time.Second, nil, "700m", "164Mi", ""}, // 200/s: 100m + 200 × 3 ms; + 200 × 0.1Mi
		{250, "RS256", 100, 0, nil, "225m", "107Mi", ""},                 // 25/s; no warmup: 100 VUs
		{100, "RS256", 50, 30 * time.Second, nil, "150m", "105Mi", ""},   // 10/s; 2 × 50 VUs
		{500, "RS256", 100, 0, map[string]any{"requests": map[string]any{"cpu": "1"}, "limits": map[string]any{"cpu": "2"}}, "1", "109Mi", "2"},
	}
	for _, c := range cases {
		o := testObjects(t)
		o.Cfg.Subject.Alg, o.Cfg.Agents.MaxInFlight, o.Cfg.Kube.Resources = c.alg, c.vus, c.resources
		j, err := o.JobObject(event.PlannedRun{ID: "r", TargetRPS: c.rate, Warmup: c.warmup, Duration: time.Minute, Agents: 10})
		if err != nil {
			t.Fatal(err)
		}
		r := j.Spec.Template.Spec.Containers[0].Resources
		if r.Requests.Cpu().String() != c.cpu || r.Requests.Memory().String() != c.memory || c.limit != "" && r.Limits.Cpu().String() != c.limit {
			t.Errorf("%g/s %s %d VUs %v: %+v", c.rate, c.alg, c.vus, c.resources, r)
		}
	}
}

func TestAgentThrottled(t *testing.T) {
	var a agentCPU
	t0 := time.Unix(1796064361, 0)
	for i, m := range []int64{120, 250, 245, 248, 90, 251, 250} {
		a.note("agent-0", t0.Add(time.Duration(i)*15*time.Second), m)
	}
	a.note("agent-0", t0, 999)                            // not after the last: ignored
	in := a.within("agent-0", t0, t0.Add(90*time.Second)) // (t0, t0+90s]: the last six
	if len(in) != 6 {
		t.Fatalf("%d samples", len(in))
	}
	// limit 260m: ≥ 234m is at the limit: 250, 245, 248, 251, 250 → 5 of 6.
	if n, peak := throttled(in, 260); n != 5 || peak != 251 {
		t.Errorf("n %d peak %d", n, peak)
	}
	if n, _ := throttled(in, 0); n != 0 {
		t.Error("no limit, yet throttled")
	}
	if n, _ := throttled(in, 1000); n != 0 {
		t.Error("far below the limit, yet throttled")
	}
	// The same peak whether a span is kept in 8 bytes or whole: one began
	// before the first, one 71 minutes after it, one lasted longer.
	for _, base := range []int64{1796064356036000, 1796064356036000 + math.MaxUint32 - 12} {
		var l spanLog
		for _, s := range []span{{0, 10}, {5, 15}, {10, 20}, {12, 13}, {30, 40}, {-5, -1}, {1 << 33, 1<<33 + 1}, {50, 50 + 1<<33}} {
			l.add(span{base + s.from, base + s.to})
		}
		if p := l.peakInFlight(); p != 3 || l.len() != 8 { // at 12: [5,15), [10,20), [12,13)
			t.Errorf("peak %d of %d spans (%d whole)", p, l.len(), len(l.wide))
		}
	}
}

// TestAgentTransportFollowsTheTarget: the TLS and HTTP settings the local
// driver applies reach k6 (issue 10 item 5).
func TestAgentTransportFollowsTheTarget(t *testing.T) {
	o := testObjects(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	_ = os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o644)
	off := false
	o.Cfg.Target.CAFile, o.Cfg.Target.InsecureSkipVerify, o.Cfg.Target.HTTP2 = ca, true, &off
	o.Cfg.Request.AuthMethod, o.Cfg.Request.Timeout = "client_secret_post", 2500*time.Millisecond
	j, err := o.JobObject(event.PlannedRun{ID: "r", TargetRPS: 10, Duration: time.Minute, Agents: 10})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, e := range j.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	for k, want := range map[string]string{"K6_INSECURE_SKIP_TLS_VERIFY": "true", "SSL_CERT_FILE": "/scripts/ca.pem",
		"GODEBUG": "http2client=0", "AUTH_METHOD": "client_secret_post", "REQUEST_TIMEOUT": "2500ms", "SUBJECT_ALG": "RS256"} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	cm, err := o.ConfigMapObject()
	if err != nil || !strings.Contains(cm.Data["ca.pem"], "BEGIN CERTIFICATE") {
		t.Errorf("configmap: %v %v", err, cm)
	}
	o.Cfg.Target.CAFile = filepath.Join(t.TempDir(), "missing.pem")
	if _, err := o.ConfigMapObject(); err == nil || !strings.Contains(err.Error(), "target.ca_file") {
		t.Errorf("a missing CA file: %v", err)
	}
}

// A Pod's CPU request and limit are its containers' sums; one container
// without a limit leaves the Pod without one.
func TestPodCPUSize(t *testing.T) {
	c := func(req, lim string) corev1.Container {
		r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
		if req != "" {
			r.Requests[corev1.ResourceCPU] = resource.MustParse(req)
		}
		if lim != "" {
			r.Limits[corev1.ResourceCPU] = resource.MustParse(lim)
		}
		return corev1.Container{Resources: r}
	}
	for _, tc := range []struct {
		cs   []corev1.Container
		want cpuSize
	}{
		{[]corev1.Container{c("500m", "1")}, cpuSize{500, 1000}},
		{[]corev1.Container{c("500m", "1"), c("250m", "")}, cpuSize{750, 0}},
		{[]corev1.Container{c("", "")}, cpuSize{0, 0}},
		{nil, cpuSize{0, 0}},
	} {
		if got := sizeOf(&corev1.Pod{Spec: corev1.PodSpec{Containers: tc.cs}}); got != tc.want {
			t.Errorf("%d containers: %+v, want %+v", len(tc.cs), got, tc.want)
		}
	}
}

// TestAgentSizingCoversMeasurements holds the agent Pod requests to what
// real k6 cost (testdata/k6-agent-cost.csv, issues 10 and 24): CPU per
// request at least the highest measured and 15 % over the lowest, memory
// 10 % over the measured RSS, and growing with the rate at least as fast
// as the measurements did.
func TestAgentSizingCoversMeasurements(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "k6-agent-cost.csv"))
	if err != nil {
		t.Fatal(err)
	}
	type point struct{ rate, rss float64 }
	var mem []point
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, ",", 7)
		num := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil && s != "" {
				t.Fatalf("%q: %v", line, err)
			}
			return v
		}
		alg, rate, vus, low, high, rss := f[0], num(f[1]), int(num(f[2])), num(f[3]), num(f[4]), num(f[5])
		cpu, memMiB, why := AgentRequests(rate, alg, vus)
		perReq := float64(cpu-agentBaseMilliCPU) / rate
		if perReq < high || perReq < 1.15*low {
			t.Errorf("%s at %g/s: %.2f ms of CPU per request requested, measured %g–%g ms (%s)", alg, rate, perReq, low, high, why)
		}
		if rss > 0 {
			if float64(memMiB) < 1.1*rss {
				t.Errorf("%s at %g/s, %d VUs: %d MiB requested, measured %g MiB (%s)", alg, rate, vus, memMiB, rss, why)
			}
			mem = append(mem, point{rate, rss})
		}
	}
	if len(mem) < 2 {
		t.Fatal("fewer than two memory measurements")
	}
	slope := (mem[len(mem)-1].rss - mem[0].rss) / (mem[len(mem)-1].rate - mem[0].rate)
	if agentMemPerRateMiB < slope {
		t.Errorf("memory requested grows %g MiB per exchange/s, measured %.3f", agentMemPerRateMiB, slope)
	}
}
