package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tokex-dev/tokex/cmd/tokex/cli"
	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/kube"
)

// scaled is the engines' Deployment the scaling tests scale: three
// replicas before any campaign, each Pod burning 500m (kwok's usage).
const scaled = "scale-engine"

// scaleEngines deploys it with its Service, one Pod a node (the article's
// anti-affinity: three nodes), and waits for its three Pods.
func scaleEngines(t *testing.T, ctx context.Context, c *Cluster) {
	t.Helper()
	three := int32(3)
	labels := map[string]string{"app": scaled}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: scaled, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &three, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					"kwok.x-k8s.io/usage-cpu": "500m", "kwok.x-k8s.io/usage-memory": "256Mi"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "engine", Image: "pingidentity/pingfederate:latest",
					Ports: []corev1.ContainerPort{{ContainerPort: 9031, Name: "https"}}}},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
						LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: "kubernetes.io/hostname"}}}}}}}}
	if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: scaled, Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 9031, TargetPort: intstr.FromInt32(9031)}}}}
	if _, err := c.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := poll(ctx, 60*time.Second, func() (bool, error) { return readyEngines(ctx, c) == 3, nil }); err != nil {
		t.Fatal("engines not Ready:", err)
	}
}

// readyEngines counts the scaled engines' Ready Pods that are not going.
func readyEngines(ctx context.Context, c *Cluster) int {
	pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + scaled})
	if err != nil {
		return -1
	}
	n := 0
	for _, p := range pods.Items {
		for _, cd := range p.Status.Conditions {
			if p.DeletionTimestamp == nil && cd.Type == corev1.PodReady && cd.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// replicas is the Deployment's spec.replicas.
func replicas(t *testing.T, ctx context.Context, c *Cluster) int32 {
	t.Helper()
	d, err := c.Client.AppsV1().Deployments("default").Get(ctx, scaled, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return *d.Spec.Replicas
}

// scaleCampaign is the e2e campaign against the scaled engines, counts given.
func scaleCampaign(counts []int, settle time.Duration) config.Campaign {
	cfg := campaign(2, 10, 2*time.Second, 8*time.Second)
	cfg.Target.URL = "https://" + scaled + ":9031/as/token.oauth2"
	cfg.Kube.Engines.Selector, cfg.Kube.Engines.Service = "app="+scaled, scaled
	cfg.Kube.Engines.Replicas, cfg.Kube.Engines.Settle = counts, settle
	cfg.Kube.Engines.ReadyTimeout = 90 * time.Second
	return cfg
}

// TestKubeScaling (issue 28 items 1 and 4): against a real API server,
// controllers and kwok nodes, a Deployment of engine Pods is scaled through
// its scale subresource 1 → 2 → 3 and back, each count awaited until its
// Pods are Ready and behind the Service; a campaign with replicas [1, 2]
// runs end to end, each count's runs in the evidence with its engine CPU,
// and the Deployment is restored; restored after Ctrl-C and after a failed
// run; an HPA refused, then paused and restored; verify checks the RBAC.
func TestKubeScaling(t *testing.T) {
	if os.Getenv("TOKEX_E2E_BIN") == "" {
		t.Skip("TOKEX_E2E_BIN is not set: run scripts/test, which builds the control plane")
	}
	t.Setenv("TOKEX_HOME", t.TempDir())
	t.Setenv("TOKEX_CLIENT_SECRET", "e2e-secret-Xy")
	root, _ := filepath.Abs("../../..")
	sctx, scancel := context.WithTimeout(context.Background(), 3*time.Minute)
	c, err := Start(sctx, t.TempDir(), Options{Bin: os.Getenv("TOKEX_E2E_BIN"), Config: filepath.Join(root, "scripts", "kube-e2e", "config"), Nodes: 3, Log: t.Logf})
	scancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	scaleEngines(t, ctx, c)
	t.Run("verify and RBAC", func(t *testing.T) { scaleVerify(t, ctx, c) })
	t.Run("1 → 2 → 3 and back", func(t *testing.T) { scaleSteps(t, ctx, c) })
	t.Run("campaign with replicas [1, 2]", func(t *testing.T) { scaleCampaignRun(t, ctx, c) })
	t.Run("restored after Ctrl-C", func(t *testing.T) {
		sim := &fakeK6{c: c}
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		sim.watch(sctx, t)
		rctx, interrupt := context.WithCancel(ctx)
		res := runKube(t, rctx, c, scaleCampaign([]int{1, 2}, time.Second), func(e event.Event) {
			if w, ok := e.(event.Window); ok && w.Phase == stats.Measured {
				interrupt() // Ctrl-C in the first count's measured phase
			}
		})
		if res.Status != "aborted" || replicas(t, ctx, c) != 3 {
			t.Errorf("status %s, %d replicas after Ctrl-C (want 3)", res.Status, replicas(t, ctx, c))
		}
		t.Logf("after Ctrl-C: status %s, %d replicas", res.Status, replicas(t, ctx, c))
	})
	t.Run("restored after a failed run", func(t *testing.T) {
		cfg := scaleCampaign([]int{2}, time.Second)
		cfg.Kube.Annotations["tokex.dev/e2e-image-pull"] = "fail"
		cfg.Kube.Image = "grafana/k6:does-not-exist"
		res := runKube(t, ctx, c, cfg, nil)
		if res.Status != "failed" || !strings.Contains(res.Reason, "ImagePullBackOff") || replicas(t, ctx, c) != 3 {
			t.Errorf("status %s (%s), %d replicas (want 3)", res.Status, res.Reason, replicas(t, ctx, c))
		}
		t.Logf("after a failed run: status %s, %d replicas", res.Status, replicas(t, ctx, c))
	})
	t.Run("HPA refused, then paused and restored", func(t *testing.T) { scaleHPA(t, ctx, c) })
}

// scaleVerify: verify with --replicas finds the workload and checks the
// scale subresource and HPA access, also as the ServiceAccount that
// deploy/rbac.yaml binds, and not without it.
func scaleVerify(t *testing.T, ctx context.Context, c *Cluster) {
	cfg := scaleCampaign([]int{1, 2}, time.Second)
	y, _ := cfg.Redacted()
	cfgFile := filepath.Join(t.TempDir(), "campaign.yaml")
	_ = os.WriteFile(cfgFile, y, 0o644)
	var out, errb bytes.Buffer
	code := cli.Main([]string{"verify", "--config", cfgFile, "--kubeconfig", c.Kubeconfig}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "deployment/scale-engine in default, 3 replicas now") || !strings.Contains(out.String(), "may update deployments/scale.apps") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	rbac, imp := asServiceAccount(t, ctx, c)
	out.Reset()
	if code := cli.Main([]string{"verify", "--config", cfgFile, "--kubeconfig", imp, "--pause-hpa"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "verdict: READY") ||
		!strings.Contains(out.String(), "✓ may patch deployments/scale.apps") || !strings.Contains(out.String(), "✓ may update horizontalpodautoscalers.autoscaling") {
		t.Fatalf("as the ServiceAccount: exit %d\n%s", code, out.String())
	}
	_ = c.Client.RbacV1().RoleBindings("default").Delete(ctx, "tokex-engines", metav1.DeleteOptions{})
	defer func() {
		_ = c.Apply(ctx, rbac, nil)
	}()
	out.Reset()
	if code := cli.Main([]string{"verify", "--config", cfgFile, "--kubeconfig", imp}, &out, &errb); code != 1 || !strings.Contains(out.String(), "✗ may update deployments/scale.apps") {
		t.Fatalf("without the engines' binding: exit %d\n%s", code, out.String())
	}
}

// scaleSteps drives the driver's scaler through 1 → 2 → 3 and restores 3.
func scaleSteps(t *testing.T, ctx context.Context, c *Cluster) {
	cfg := scaleCampaign([]int{1, 2, 3}, 100*time.Millisecond)
	d := &kube.Driver{Cfg: cfg, Client: c.Client, Namespace: "default", Poll: 200 * time.Millisecond}
	for _, n := range []int{1, 2, 3} {
		s, err := d.Scale(ctx, n, &discard{})
		if err != nil {
			t.Fatalf("scale to %d: %v", n, err)
		}
		if len(s.Engines) != n || s.Endpoints != n || readyEngines(ctx, c) != n || replicas(t, ctx, c) != int32(n) {
			t.Errorf("scale to %d: %s; %d Ready, %d replicas", n, s, readyEngines(ctx, c), replicas(t, ctx, c))
		}
		t.Log(s)
	}
	if _, err := d.Scale(ctx, 1, &discard{}); err != nil {
		t.Fatal(err)
	}
	s, ok, err := d.Restore(ctx, &discard{})
	if err != nil || !ok || s.Replicas != 3 || replicas(t, ctx, c) != 3 {
		t.Fatalf("restore: %s %v %v; %d replicas", s, ok, err, replicas(t, ctx, c))
	}
	if err := poll(ctx, 60*time.Second, func() (bool, error) { return readyEngines(ctx, c) == 3, nil }); err != nil {
		t.Errorf("not back to 3 Ready engines: %v", err)
	}
}

// discard is an Output that keeps nothing.
type discard struct{}

func (*discard) Emit(event.Event)      {}
func (*discard) Record(*stats.Request) {}

// scaleCampaignRun is issue 28's done-when: tokex run --replicas 1,2.
func scaleCampaignRun(t *testing.T, ctx context.Context, c *Cluster) {
	// New Pods get PodMetrics 20–40 s after they run: the settle covers it.
	cfg := scaleCampaign([]int{1, 2}, 45*time.Second)
	cfg.Kube.Engines.Replicas = nil // from the flag
	// metrics-server has a sample of each Pod every 10 s: a 15 s window
	// holds one of each (an 8 s one may hold none).
	cfg.Duration = 15 * time.Second
	y, _ := cfg.Redacted()
	cfgFile := filepath.Join(t.TempDir(), "campaign.yaml")
	_ = os.WriteFile(cfgFile, y, 0o644)
	sim := &fakeK6{c: c}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	sim.watch(sctx, t)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"run", "--config", cfgFile, "--kubeconfig", c.Kubeconfig, "--no-tui", "--out", out, "--replicas", "1,2"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if got := replicas(t, ctx, c); got != 3 {
		t.Errorf("%d replicas after the campaign, want 3 restored", got)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*"))
	f, err := evidence.Open(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var scales []string
	for _, s := range f.Manifest.Scaling {
		scales = append(scales, fmt.Sprintf("%d→%d restore=%v endpoints=%d", s.From, s.Replicas, s.Restore, s.Endpoints))
	}
	if want := "[3→1 restore=false endpoints=1 1→2 restore=false endpoints=2 2→3 restore=true endpoints=0]"; fmt.Sprint(scales) != want {
		t.Errorf("manifest scaling %v, want %s", scales, want)
	}
	t.Logf("manifest scaling %v; the Deployment at %d replicas after the campaign", scales, replicas(t, ctx, c))
	s, err := f.Summary()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Stages) != 2 || s.Scaling == nil || len(s.Scaling.Counts) != 2 {
		t.Fatalf("stages %d, scaling %+v\n%s", len(s.Stages), s.Scaling, stdout.String())
	}
	for i, st := range s.Stages {
		r, n := st.Runs[0], i+1
		if r.Replicas != n || !strings.Contains(r.ID, fmt.Sprintf("-n%d-", n)) || r.OK != r.Requests || r.Requests == 0 {
			t.Errorf("run %s: replicas %d, %d of %d ok", r.ID, r.Replicas, r.OK, r.Requests)
		}
		// Each engine burns 500m (kwok), whatever the agents send.
		if cpu := r.EngineCPU; cpu == nil || cpu.AvgCores < 0.4*float64(n) || cpu.AvgCores > 0.6*float64(n) {
			t.Errorf("run %s: engine CPU %+v, want %d × 0.5 cores", r.ID, cpu, n)
		}
		if n == 2 && (len(r.EnginePods) != 2 || r.EngineBalance < 0.95 || r.EngineBalance > 1.1) {
			t.Errorf("run %s: engine pods %+v, balance %v", r.ID, r.EnginePods, r.EngineBalance)
		}
	}
	if !strings.Contains(stdout.String(), "2 engine(s): ") || !strings.Contains(stdout.String(), "engine CPU balance") {
		t.Errorf("the scaling lines are not printed:\n%s", stdout.String())
	}
	t.Logf("scaling: %s", strings.Join(doc.ScalingLines(s.Scaling), " | "))
}

// scaleHPA: an HPA on the Deployment is refused without --pause-hpa (the
// Deployment untouched); with it the campaign pins it to the count and
// restores its bounds and the Deployment's replicas.
func scaleHPA(t *testing.T, ctx context.Context, c *Cluster) {
	minR := int32(3)
	h := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "scale-engine-hpa", Namespace: "default"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: &minR, MaxReplicas: 5,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: scaled}}}
	hpas := c.Client.AutoscalingV2().HorizontalPodAutoscalers("default")
	if _, err := hpas.Create(ctx, h, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hpas.Delete(context.Background(), h.Name, metav1.DeleteOptions{}) }()
	res := runKube(t, ctx, c, scaleCampaign([]int{1}, time.Second), nil)
	if res.Status != "failed" || !strings.Contains(res.Reason, "HorizontalPodAutoscaler scale-engine-hpa scales deployment/scale-engine (3–5 replicas)") || replicas(t, ctx, c) != 3 {
		t.Fatalf("without --pause-hpa: %s %q, %d replicas", res.Status, res.Reason, replicas(t, ctx, c))
	}
	cfg := scaleCampaign([]int{1}, time.Second)
	cfg.Kube.Engines.PauseHPA = true
	sim := &fakeK6{c: c}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	sim.watch(sctx, t)
	pinned := false
	res = runKube(t, ctx, c, cfg, func(e event.Event) {
		if w, ok := e.(event.Window); ok && w.Phase == stats.Measured && !pinned {
			got, err := hpas.Get(ctx, h.Name, metav1.GetOptions{})
			pinned = err == nil && *got.Spec.MinReplicas == 1 && got.Spec.MaxReplicas == 1
		}
	})
	got, err := hpas.Get(ctx, h.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "done" || !pinned || *got.Spec.MinReplicas != 3 || got.Spec.MaxReplicas != 5 || replicas(t, ctx, c) != 3 {
		t.Errorf("with --pause-hpa: %s %q; pinned during the run %v; HPA now %d–%d, %d replicas", res.Status, res.Reason, pinned, *got.Spec.MinReplicas, got.Spec.MaxReplicas, replicas(t, ctx, c))
	}
}
