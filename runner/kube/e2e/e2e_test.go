package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/tokex-dev/tokex/authserver"
	"github.com/tokex-dev/tokex/cmd/tokex/cli"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/internal/statedir"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/kube"
	"github.com/tokex-dev/tokex/subject"
)

// The suite needs the binaries of scripts/kube-e2e/build.sh, named by
// TOKEX_E2E_BIN (scripts/test sets it). Without it the suite is skipped.
func cluster(t *testing.T, portForward int) *Cluster {
	t.Helper()
	bin := os.Getenv("TOKEX_E2E_BIN")
	if bin == "" {
		t.Skip("TOKEX_E2E_BIN is not set: run scripts/test, which builds the control plane")
	}
	root, _ := filepath.Abs("../../..")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := Start(ctx, dir, Options{Bin: bin, Config: filepath.Join(root, "scripts", "kube-e2e", "config"), Nodes: 2, Log: t.Logf, PortForward: portForward})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// engines deploys the article's two-engine topology: a Deployment spread
// over distinct nodes, a Service on 9031, and kwok CPU/memory usage.
func engines(t *testing.T, ctx context.Context, c *Cluster) {
	t.Helper()
	two := int32(2)
	labels := map[string]string{"app": "pf-engine"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pf-engine", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					"kwok.x-k8s.io/usage-cpu": "1300m", "kwok.x-k8s.io/usage-memory": "1400Mi"}},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "engine", Image: "pingidentity/pingfederate:latest",
						Ports: []corev1.ContainerPort{{ContainerPort: 9031, Name: "https"}}}},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
						LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: "kubernetes.io/hostname"}}}},
				}}}}
	if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "pf-engine", Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 9031, TargetPort: intstr.FromInt32(9031)}}}}
	if _, err := c.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := poll(ctx, 60*time.Second, func() (bool, error) {
		pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=pf-engine"})
		if err != nil || len(pods.Items) != 2 {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatal("engines not running:", err)
	}
}

// fakeK6 plays the k6 agents: for every agent Pod of the campaign it attaches
// a log file (a kwok Logs object) and writes what the tokex agent script
// prints, over time: one line per arrival, then k6's end-of-test summary.
type fakeK6 struct {
	c        *Cluster
	rate     float64 // total
	agents   int
	warmup   time.Duration
	duration time.Duration

	mu   sync.Mutex
	seen map[string]bool
	wg   sync.WaitGroup
}

func (f *fakeK6) watch(ctx context.Context, t *testing.T) {
	f.seen = map[string]bool{}
	go func() {
		for ctx.Err() == nil {
			pods, err := f.c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: kube.LabelName + "=" + kube.NameValue})
			if err == nil {
				for _, p := range pods.Items {
					f.mu.Lock()
					if !f.seen[p.Name] {
						f.seen[p.Name] = true
						f.wg.Add(1)
						go f.agent(ctx, t, p.DeepCopy())
					}
					f.mu.Unlock()
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

func (f *fakeK6) agent(ctx context.Context, t *testing.T, pod *corev1.Pod) {
	defer f.wg.Done()
	file := filepath.Join(f.c.Dir, "pod-logs", pod.Name+".log")
	out, err := os.Create(file)
	if err != nil {
		t.Error(err)
		return
	}
	defer out.Close()
	logs := fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: Logs
metadata: {name: %s, namespace: default}
spec:
  logs:
  - containers: [k6]
    logsFile: %s
    follow: true
`, pod.Name, file)
	if err := f.c.Apply(ctx, []byte(logs), nil); err != nil {
		t.Error(err)
		return
	}
	// Wait until the Pod runs (kwok's pod-ready delay gave us time to attach).
	_ = poll(ctx, 30*time.Second, func() (bool, error) {
		p, err := f.c.Client.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	var agent int
	_, _ = fmt.Sscanf(pod.Annotations["batch.kubernetes.io/job-completion-index"], "%d", &agent)
	write := func(line string) {
		fmt.Fprintf(out, "%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), line)
	}
	perAgent := f.rate / float64(f.agents)
	period := time.Duration(float64(time.Second) / perAgent)
	counts := map[string]int{}
	start := time.Now()
	for _, ph := range []struct {
		name string
		d    time.Duration
	}{{"warmup", f.warmup}, {"measured", f.duration}} {
		n := int(float64(ph.d) / float64(period))
		for i := 0; i < n; i++ {
			sched := start.Add(time.Duration(i) * period)
			if d := time.Until(sched); d > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(d):
				}
			}
			dur := 3000 + (i%7)*400
			write(fmt.Sprintf("tokex1,%d,%s,%d,%d,%d,%d,200,ok,", agent, ph.name, i, sched.UnixMicro(), 1000, dur))
			counts[ph.name]++
		}
		start = start.Add(ph.d)
	}
	for _, l := range strings.Split(fmt.Sprintf(`
  █ THRESHOLDS

    checks{scenario:measured}
    ✓ 'rate>=0.99' rate=100.00%%

    dropped_iterations{scenario:measured}
    ✓ 'count<=0' count=0

    http_reqs{scenario:measured}
    ✓ 'count>=0' count=%d

    http_reqs{scenario:warmup}
    ✓ 'count>=0' count=%d


  █ TOTAL RESULTS

    http_reqs......................: %d     %.6f/s
`, counts["measured"], counts["warmup"], counts["measured"]+counts["warmup"], perAgent), "\n") {
		write(l)
	}
}

func campaign(agents int, rate float64, warmup, duration time.Duration) config.Campaign {
	c := config.Article()
	c.Name, c.Driver = "e2e", "kube"
	c.Target.URL = "https://pf-engine:9031/as/token.oauth2"
	c.Stages, c.Rounds, c.Warmup, c.Duration = []float64{rate}, 1, warmup, duration
	c.Sanity.Enabled = false
	c.Agents.Count = agents
	c.Kube.Namespace = "default"
	c.Kube.Engines.Selector, c.Kube.Engines.Service, c.Kube.Engines.Port = "app=pf-engine", "pf-engine", 9031
	c.Kube.NodeSelector = map[string]string{"type": "kwok"}
	c.Kube.MetricsInterval = 3 * time.Second
	c.Kube.Annotations = map[string]string{
		"pod-complete.stage.kwok.x-k8s.io/delay": (warmup + duration + 3*time.Second).String(),
		"kwok.x-k8s.io/usage-cpu":                "200m", "kwok.x-k8s.io/usage-memory": "64Mi"}
	return c
}

func leftovers(ctx context.Context, c *Cluster) (int, string) {
	sel := metav1.ListOptions{LabelSelector: kube.LabelName + "=" + kube.NameValue}
	var names []string
	if l, err := c.Client.BatchV1().Jobs("default").List(ctx, sel); err == nil {
		for _, x := range l.Items {
			names = append(names, "job/"+x.Name)
		}
	}
	if l, err := c.Client.CoreV1().Pods("default").List(ctx, sel); err == nil {
		for _, x := range l.Items {
			names = append(names, "pod/"+x.Name)
		}
	}
	if l, err := c.Client.CoreV1().Secrets("default").List(ctx, sel); err == nil {
		for _, x := range l.Items {
			names = append(names, "secret/"+x.Name)
		}
	}
	if l, err := c.Client.CoreV1().ConfigMaps("default").List(ctx, sel); err == nil {
		for _, x := range l.Items {
			names = append(names, "configmap/"+x.Name)
		}
	}
	return len(names), strings.Join(names, " ")
}

func TestKubeEndToEnd(t *testing.T) {
	if os.Getenv("TOKEX_E2E_BIN") == "" {
		t.Skip("TOKEX_E2E_BIN is not set: run scripts/test, which builds the control plane")
	}
	home := t.TempDir()
	t.Setenv("TOKEX_HOME", home)
	t.Setenv("TOKEX_CLIENT_SECRET", "e2e-secret-Xy")
	// The "engines" behind port-forwards: a tokex reference server over TLS
	// that trusts tokex's stored subject key, as PingFederate would.
	engine := referenceServer(t)
	c := cluster(t, engine)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	engines(t, ctx, c)

	cfg := campaign(2, 20, 3*time.Second, 12*time.Second)
	y, _ := cfg.Redacted()
	cfgFile := filepath.Join(t.TempDir(), "campaign.yaml")
	_ = os.WriteFile(cfgFile, y, 0o644)

	t.Run("verify", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := cli.Main([]string{"verify", "--config", cfgFile, "--kubeconfig", c.Kubeconfig}, &out, &errb)
		if code != 0 || !strings.Contains(out.String(), "verdict: READY") || !strings.Contains(out.String(), "engines on distinct nodes") {
			t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
		}
	})

	t.Run("verify with deploy/rbac.yaml only", func(t *testing.T) {
		// deploy/rbac.yaml, moved to this namespace, must be enough for verify.
		root, _ := filepath.Abs("../../..")
		rbac, err := os.ReadFile(filepath.Join(root, "deploy", "rbac.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Apply(ctx, bytes.ReplaceAll(rbac, []byte("namespace: pf-perf"), []byte("namespace: default")), nil); err != nil {
			t.Fatal(err)
		}
		kc, _ := os.ReadFile(c.Kubeconfig)
		imp := filepath.Join(t.TempDir(), "kubeconfig")
		_ = os.WriteFile(imp, bytes.Replace(kc, []byte("  user: {"), []byte("  user: {as: 'system:serviceaccount:default:tokex', "), 1), 0o600)
		var out, errb bytes.Buffer
		code := cli.Main([]string{"verify", "--config", cfgFile, "--kubeconfig", imp}, &out, &errb)
		if code != 0 || !strings.Contains(out.String(), "verdict: READY") {
			t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
		}
		// Without the binding the verdict is NOT READY.
		_ = c.Client.RbacV1().RoleBindings("default").Delete(ctx, "tokex", metav1.DeleteOptions{})
		out.Reset()
		if code := cli.Main([]string{"verify", "--config", cfgFile, "--kubeconfig", imp}, &out, &errb); code != 1 || !strings.Contains(out.String(), "✗ may create jobs.batch") {
			t.Fatalf("without RBAC: exit %d\n%s", code, out.String())
		}
	})

	t.Run("smoke through a port-forward", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := cli.Main([]string{"smoke", "--config", cfgFile, "--kubeconfig", c.Kubeconfig, "--insecure"}, &out, &errb)
		if code != 0 || !strings.Contains(out.String(), "port-forward 127.0.0.1:") || !strings.Contains(out.String(), "smoke test passed") {
			t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
		}
		if strings.Contains(out.String(), "e2e-secret-Xy") {
			t.Error("smoke printed the secret")
		}
	})

	// Engine PodMetrics take 20–40 s to appear after the Pods run.
	mc := metricsclient.NewForConfigOrDie(c.Config)
	if err := poll(ctx, 90*time.Second, func() (bool, error) {
		pm, err := mc.MetricsV1beta1().PodMetricses("default").List(ctx, metav1.ListOptions{LabelSelector: "app=pf-engine"})
		return err == nil && len(pm.Items) == 2, nil
	}); err != nil {
		t.Fatal("no engine PodMetrics:", err)
	}

	t.Run("campaign", func(t *testing.T) {
		sim := &fakeK6{c: c, rate: 20, agents: 2, warmup: 3 * time.Second, duration: 12 * time.Second}
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		sim.watch(sctx, t)
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		code := cli.Main([]string{"run", "--config", cfgFile, "--kubeconfig", c.Kubeconfig, "--no-tui", "--out", out}, &stdout, &stderr)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
		}
		dirs, _ := filepath.Glob(filepath.Join(out, "*"))
		f, err := evidence.Open(dirs[0])
		if err != nil {
			t.Fatal(err)
		}
		s, err := f.Summary()
		if err != nil {
			t.Fatal(err)
		}
		r := s.Stages[0].Runs[0]
		if r.Requests != 2*120 || r.WarmupRequests != 2*30 || r.OK != r.Requests || r.Dropped != 0 {
			t.Errorf("requests %d warmup %d ok %d dropped %d", r.Requests, r.WarmupRequests, r.OK, r.Dropped)
		}
		for _, w := range r.Warnings {
			if w.Code == stats.WarnIncompleteEvidence {
				t.Errorf("warning: %s", w)
			}
		}
		// The API server refuses to proxy to a loopback node address ("address
		// not allowed"), so here the exact kubelet counters are unreadable and
		// tokex must fall back to metrics-server rates, saying so.
		if !strings.Contains(stdout.String(), "engine CPU from metrics-server rates") {
			t.Errorf("the fallback to metrics-server is not stated:\n%s", stdout.String())
		}
		if r.EngineCPU == nil || r.EngineCPU.Method != "rate" || r.EngineCPU.AvgCores < 2.3 || r.EngineCPU.AvgCores > 2.9 {
			t.Errorf("engine CPU %+v (two engines at 1300m)\n%s", r.EngineCPU, stdout.String())
		} else if per := 2600.0 / 20; r.EngineCPU.CPUMsPerExchange < per*0.85 || r.EngineCPU.CPUMsPerExchange > per*1.15 {
			t.Errorf("CPU-ms per exchange %.1f, want about %.0f", r.EngineCPU.CPUMsPerExchange, per)
		}
		if !strings.Contains(stdout.String(), "Latency by stage") {
			t.Errorf("no table:\n%s", stdout.String())
		}
		if n, names := leftovers(ctx, c); n != 0 {
			_ = poll(ctx, 30*time.Second, func() (bool, error) { n, _ := leftovers(ctx, c); return n == 0, nil })
			if n, names = leftovers(ctx, c); n != 0 {
				t.Errorf("left behind: %s", names)
			}
		}
	})

	t.Run("interrupt cleans up", func(t *testing.T) {
		cfg := campaign(2, 10, 2*time.Second, 30*time.Second)
		sim := &fakeK6{c: c, rate: 10, agents: 2, warmup: 2 * time.Second, duration: 30 * time.Second}
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		sim.watch(sctx, t)
		rctx, interrupt := context.WithCancel(ctx)
		res := runKube(t, rctx, c, cfg, func(e event.Event) {
			if w, ok := e.(event.Window); ok && w.Phase == stats.Measured {
				interrupt() // Ctrl-C in the middle of the measured phase
			}
		})
		if res.Status != "aborted" {
			t.Errorf("status %s", res.Status)
		}
		if err := poll(ctx, 30*time.Second, func() (bool, error) { n, _ := leftovers(ctx, c); return n == 0, nil }); err != nil {
			_, names := leftovers(ctx, c)
			t.Errorf("left behind after Ctrl-C: %s", names)
		}
	})

	t.Run("image pull failure", func(t *testing.T) {
		cfg := campaign(2, 10, 0, 20*time.Second)
		cfg.Kube.Annotations["tokex.dev/e2e-image-pull"] = "fail"
		cfg.Kube.Image = "grafana/k6:does-not-exist"
		started := time.Now()
		res := runKube(t, ctx, c, cfg, nil)
		if res.Status != "failed" || !strings.Contains(res.Reason, "ImagePullBackOff") {
			t.Errorf("status %s reason %q", res.Status, res.Reason)
		}
		if d := time.Since(started); d > 40*time.Second {
			t.Errorf("the failure took %s to be noticed", d)
		}
		if err := poll(ctx, 30*time.Second, func() (bool, error) { n, _ := leftovers(ctx, c); return n == 0, nil }); err != nil {
			_, names := leftovers(ctx, c)
			t.Errorf("left behind after a failed run: %s", names)
		}
	})
}

type result struct {
	Status, Reason string
}

// runKube runs a campaign through the runner and the kube driver directly,
// so the test can interrupt it.
func runKube(t *testing.T, ctx context.Context, c *Cluster, cfg config.Campaign, on func(event.Event)) result {
	t.Helper()
	key, _ := subject.GenerateKey(subject.RS256)
	id := fmt.Sprintf("e2e-%d", time.Now().UnixNano()%1e6)
	dir := filepath.Join(t.TempDir(), id)
	y, _ := cfg.Redacted()
	w, err := evidence.Create(dir, y, evidence.Manifest{CampaignID: id, Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	bus := &event.Bus{}
	bus.Subscribe(w.Consume)
	if on != nil {
		bus.Subscribe(on)
	}
	drv := &kube.Driver{Cfg: cfg, CampaignID: id, Client: c.Client, Metrics: metricsclient.NewForConfigOrDie(c.Config),
		Namespace: "default", Context: "e2e", Secret: "s", Key: key}
	camp := &runner.Campaign{Cfg: cfg, ID: id, Driver: drv, Bus: bus, Evidence: w, Tool: "tokex e2e"}
	s, runErr := camp.Run(ctx)
	if err := drv.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	r := result{}
	if s != nil {
		r.Status = s.Status
	}
	if runErr != nil {
		r.Reason = runErr.Error()
	}
	return r
}

// referenceServer starts tokex's reference server (self-signed TLS) on a
// free loopback port and returns the port.
func referenceServer(t *testing.T) int {
	t.Helper()
	path, _ := statedir.SubjectKeyPath()
	key, err := subject.LoadOrCreate(path, subject.RS256)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := subject.JWKS(key)
	cfg := authserver.Default()
	cfg.Addr = "127.0.0.1:0"
	cfg.TLS = authserver.TLSConfig{Enabled: true, SelfSigned: true}
	srv, err := authserver.New(context.Background(), cfg, authserver.Options{ClientSecret: os.Getenv("TOKEX_CLIENT_SECRET"), SubjectJWKS: jwks})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = srv.Serve(ctx, ln) }()
	t.Cleanup(cancel)
	return ln.Addr().(*net.TCPAddr).Port
}
