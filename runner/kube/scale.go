package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
)

var _ runner.Scaler = (*Driver)(nil)

// workload is the engines' Deployment or StatefulSet a campaign over engine
// counts scales, what it was before (restored at the end) and the
// HorizontalPodAutoscaler it paused.
type workload struct {
	kind, name, ns string
	original       int32
	current        int32
	changed        bool // a scale was sent: Restore has work
	hpa            *pausedHPA
}

// pausedHPA is an HPA pinned to each count (min = max), and its bounds.
type pausedHPA struct {
	name     string
	min      *int32
	max      int32
	restored bool
}

func (w *workload) String() string { return strings.ToLower(w.kind) + "/" + w.name }

// engineNS is the engines' namespace.
func (d *Driver) engineNS() string {
	if ns := d.Cfg.Kube.Engines.Namespace; ns != "" {
		return ns
	}
	return d.Namespace
}

// Scale implements runner.Scaler: the first call finds the workload (or
// takes kube.engines.workload), refuses one an HPA scales unless
// kube.engines.pause_hpa, and records the count to restore; each call sets
// the scale subresource to n, waits until n engine Pods are Ready and the
// Service has n ready endpoints (kube.engines.ready_timeout), then settles.
func (d *Driver) Scale(ctx context.Context, n int, out runner.Output) (summary.Scale, error) {
	if d.wl == nil {
		w, err := findWorkload(ctx, d.Client, d.engineNS(), d.Cfg.Kube.Engines.Selector, d.Cfg.Kube.Engines.Workload)
		if err != nil {
			return summary.Scale{}, err
		}
		if err := w.checkHPA(ctx, d.Client, d.Cfg.Kube.Engines.PauseHPA); err != nil {
			return summary.Scale{}, err
		}
		d.wl = w
	}
	w := d.wl
	s := summary.Scale{At: time.Now(), Replicas: n, From: int(w.current), Workload: w.String()}
	if w.hpa != nil {
		if err := w.pinHPA(ctx, d.Client, int32(n)); err != nil {
			return s, err
		}
		s.Notes = append(s.Notes, fmt.Sprintf("HorizontalPodAutoscaler %s pinned to %d (min = max) for this count; its bounds are restored at the end", w.hpa.name, n))
	}
	w.changed = true
	if err := setReplicas(ctx, d.Client, w, int32(n)); err != nil {
		return s, err
	}
	w.current = int32(n)
	d.log(out, "info", fmt.Sprintf("scaled %s to %d: waiting for %d Ready engine Pods behind %s", w, n, n, d.Cfg.Kube.Engines.Service))
	pods, eps, err := d.awaitReady(ctx, n)
	s.ReadyMs = time.Since(s.At).Milliseconds()
	if err != nil {
		return s, err
	}
	s.Engines, s.Endpoints = pods, eps
	if settle := d.Cfg.Settle(); settle > 0 {
		t0 := time.Now()
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(settle):
		}
		s.SettleMs = time.Since(t0).Milliseconds()
	}
	return s, nil
}

// Restore implements runner.Scaler: the workload back at its original
// count and the paused HPA's bounds back, retried (an API server that went
// away may come back) until ctx ends; a failure says how to do it by hand.
func (d *Driver) Restore(ctx context.Context, _ runner.Output) (summary.Scale, bool, error) {
	w := d.wl
	if w == nil || !w.changed {
		return summary.Scale{}, false, nil
	}
	s := summary.Scale{At: time.Now(), Replicas: int(w.original), From: int(w.current), Restore: true, Workload: w.String()}
	err := retry(ctx, func() error { return setReplicas(ctx, d.Client, w, w.original) })
	if err == nil {
		w.changed, w.current = false, w.original
	}
	if w.hpa != nil && !w.hpa.restored {
		if herr := retry(ctx, func() error { return w.restoreHPA(ctx, d.Client) }); herr != nil {
			err = errors.Join(err, herr)
		} else {
			w.hpa.restored = true
			s.Notes = append(s.Notes, "HorizontalPodAutoscaler "+w.hpa.name+" bounds restored")
		}
	}
	s.ReadyMs = time.Since(s.At).Milliseconds()
	if err != nil {
		return s, false, fmt.Errorf("%w; restore it by hand: %s", err, w.byHand())
	}
	return s, true, nil
}

// byHand is the kubectl commands that restore what Restore could not.
func (w *workload) byHand() string {
	cmd := fmt.Sprintf("kubectl -n %s scale %s --replicas=%d", w.ns, w, w.original)
	if h := w.hpa; h != nil && !h.restored {
		min := "null"
		if h.min != nil {
			min = fmt.Sprint(*h.min)
		}
		cmd += fmt.Sprintf(` && kubectl -n %s patch hpa %s --type=merge -p '{"spec":{"minReplicas":%s,"maxReplicas":%d}}'`, w.ns, h.name, min, h.max)
	}
	return cmd
}

// retry runs f until it succeeds, a failure retrying cannot mend (not
// found, forbidden, invalid), or ctx ends, pausing 0.5 s, 1 s, 2 s … 8 s.
func retry(ctx context.Context, f func() error) error {
	pause := 500 * time.Millisecond
	for {
		err := f()
		if err == nil || apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, 8*time.Second)
	}
}

// findWorkload is kube.engines.workload, else the controller the selected
// engine Pods share: a ReplicaSet's Deployment (the ReplicaSet is named
// after it and the Pods' pod-template-hash label; else read from the
// ReplicaSet's own owner) or a StatefulSet. Its scale subresource gives the
// count to restore.
func findWorkload(ctx context.Context, c kubernetes.Interface, ns, selector, given string) (*workload, error) {
	w := &workload{ns: ns}
	if given != "" {
		var err error
		if w.kind, w.name, err = config.ParseWorkload(given); err != nil {
			return nil, fmt.Errorf("kube.engines.workload: %w", err)
		}
	} else if err := w.fromPods(ctx, c, selector); err != nil {
		return nil, err
	}
	sc, err := getScale(ctx, c, w)
	if err != nil {
		return nil, fmt.Errorf("the engines' %s: %w", w, err)
	}
	w.original, w.current = sc.Spec.Replicas, sc.Spec.Replicas
	return w, nil
}

// fromPods finds the engine Pods' controller.
func (w *workload) fromPods(ctx context.Context, c kubernetes.Interface, selector string) error {
	pods, err := c.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("find the engines' workload: %w", err)
	}
	if len(pods.Items) == 0 {
		return fmt.Errorf("no engine Pod matches %q in %s to find the workload from: set kube.engines.workload (deployment/NAME)", selector, w.ns)
	}
	owners := map[string]bool{}
	for i := range pods.Items {
		kind, name, err := podController(ctx, c, &pods.Items[i])
		if err != nil {
			return err
		}
		w.kind, w.name = kind, name
		owners[w.String()] = true
	}
	if len(owners) > 1 {
		names := make([]string, 0, len(owners))
		for o := range owners {
			names = append(names, o)
		}
		sort.Strings(names)
		return fmt.Errorf("the engine Pods (%q) belong to %s: set kube.engines.workload to the one to scale", selector, strings.Join(names, ", "))
	}
	return nil
}

// podController is the Deployment or StatefulSet that controls p.
func podController(ctx context.Context, c kubernetes.Interface, p *corev1.Pod) (kind, name string, err error) {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return "", "", fmt.Errorf("engine Pod %s has no controller: tokex scales Deployments and StatefulSets (set kube.engines.workload)", p.Name)
	}
	switch ref.Kind {
	case "StatefulSet":
		return "StatefulSet", ref.Name, nil
	case "ReplicaSet":
		if h := p.Labels["pod-template-hash"]; h != "" && strings.HasSuffix(ref.Name, "-"+h) {
			return "Deployment", strings.TrimSuffix(ref.Name, "-"+h), nil
		}
		rs, err := c.AppsV1().ReplicaSets(p.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return "", "", fmt.Errorf("engine Pod %s: its ReplicaSet %s: %w (or set kube.engines.workload)", p.Name, ref.Name, err)
		}
		if o := metav1.GetControllerOf(rs); o != nil && o.Kind == "Deployment" {
			return "Deployment", o.Name, nil
		}
		return "", "", fmt.Errorf("engine Pod %s: ReplicaSet %s has no Deployment: tokex scales Deployments and StatefulSets", p.Name, ref.Name)
	}
	return "", "", fmt.Errorf("engine Pod %s is controlled by %s %s: tokex scales Deployments and StatefulSets (set kube.engines.workload)", p.Name, ref.Kind, ref.Name)
}

func getScale(ctx context.Context, c kubernetes.Interface, w *workload) (*autoscalingv1.Scale, error) {
	if w.kind == "StatefulSet" {
		return c.AppsV1().StatefulSets(w.ns).GetScale(ctx, w.name, metav1.GetOptions{})
	}
	return c.AppsV1().Deployments(w.ns).GetScale(ctx, w.name, metav1.GetOptions{})
}

// setReplicas writes the scale subresource (re-read on a conflict).
func setReplicas(ctx context.Context, c kubernetes.Interface, w *workload, n int32) error {
	for i := 0; ; i++ {
		sc, err := getScale(ctx, c, w)
		if err != nil {
			return fmt.Errorf("get %s/scale: %w", w, err)
		}
		if sc.Spec.Replicas == n {
			return nil
		}
		sc.Spec.Replicas = n
		if w.kind == "StatefulSet" {
			_, err = c.AppsV1().StatefulSets(w.ns).UpdateScale(ctx, w.name, sc, metav1.UpdateOptions{})
		} else {
			_, err = c.AppsV1().Deployments(w.ns).UpdateScale(ctx, w.name, sc, metav1.UpdateOptions{})
		}
		if err == nil || !apierrors.IsConflict(err) || i == 4 {
			if err != nil {
				return fmt.Errorf("scale %s to %d: %w", w, n, err)
			}
			return nil
		}
	}
}

// checkHPA finds a HorizontalPodAutoscaler whose target is the workload:
// refused (an autoscaler and a fixed-size measurement fight) unless pause,
// which records its bounds.
func (w *workload) checkHPA(ctx context.Context, c kubernetes.Interface, pause bool) error {
	l, err := c.AutoscalingV2().HorizontalPodAutoscalers(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("look for a HorizontalPodAutoscaler of %s: %w", w, err)
	}
	for _, h := range l.Items {
		if h.Spec.ScaleTargetRef.Kind != w.kind || h.Spec.ScaleTargetRef.Name != w.name {
			continue
		}
		if !pause {
			return fmt.Errorf("HorizontalPodAutoscaler %s scales %s (%s–%d replicas): an autoscaler and a fixed-size measurement fight; "+
				"run with --pause-hpa (kube.engines.pause_hpa: true) to pin it to each count and restore its bounds at the end", h.Name, w, minText(h.Spec.MinReplicas), h.Spec.MaxReplicas)
		}
		w.hpa = &pausedHPA{name: h.Name, min: h.Spec.MinReplicas, max: h.Spec.MaxReplicas}
	}
	return nil
}

func minText(m *int32) string {
	if m == nil {
		return "1"
	}
	return fmt.Sprint(*m)
}

// pinHPA sets the paused HPA's bounds to n.
func (w *workload) pinHPA(ctx context.Context, c kubernetes.Interface, n int32) error {
	return w.updateHPA(ctx, c, func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.MinReplicas, h.Spec.MaxReplicas = &n, n
	})
}

// restoreHPA puts the paused HPA's bounds back.
func (w *workload) restoreHPA(ctx context.Context, c kubernetes.Interface) error {
	return w.updateHPA(ctx, c, func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.MinReplicas, h.Spec.MaxReplicas = w.hpa.min, w.hpa.max
	})
}

func (w *workload) updateHPA(ctx context.Context, c kubernetes.Interface, set func(*autoscalingv2.HorizontalPodAutoscaler)) error {
	hpas := c.AutoscalingV2().HorizontalPodAutoscalers(w.ns)
	for i := 0; ; i++ {
		h, err := hpas.Get(ctx, w.hpa.name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("HorizontalPodAutoscaler %s: %w", w.hpa.name, err)
		}
		set(h)
		if _, err = hpas.Update(ctx, h, metav1.UpdateOptions{}); err == nil || !apierrors.IsConflict(err) || i == 4 {
			if err != nil {
				return fmt.Errorf("update HorizontalPodAutoscaler %s: %w", w.hpa.name, err)
			}
			return nil
		}
	}
}

// awaitReady polls until exactly n engine Pods (not terminating) are Ready
// and the Service's EndpointSlices hold n ready endpoints.
func (d *Driver) awaitReady(ctx context.Context, n int) (pods []string, endpoints int, err error) {
	ctx, cancel := context.WithTimeout(ctx, d.Cfg.ReadyTimeout())
	defer cancel()
	poll := d.Poll
	if poll <= 0 {
		poll = time.Second
	}
	ns, e := d.engineNS(), d.Cfg.Kube.Engines
	var state string
	for {
		var ready int
		pods, ready, state, err = readyPods(ctx, d.Client, ns, e.Selector)
		if err == nil {
			endpoints, err = readyEndpoints(ctx, d.Client, ns, e.Service)
		}
		if err == nil && len(pods) == n && ready == n && endpoints == n {
			return pods, endpoints, nil
		}
		if err == nil {
			state = fmt.Sprintf("%s; %d ready endpoint(s) behind %s", state, endpoints, e.Service)
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = errors.New(state)
			}
			return pods, endpoints, fmt.Errorf("%d engines not Ready behind the Service within %s (kube.engines.ready_timeout): %w", n, d.Cfg.ReadyTimeout(), err)
		case <-time.After(poll):
		}
	}
}

// readyPods lists the engine Pods that are not terminating, how many are
// Ready, and says so.
func readyPods(ctx context.Context, c kubernetes.Interface, ns, selector string) (names []string, ready int, state string, err error) {
	l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, 0, "", err
	}
	for i := range l.Items {
		p := &l.Items[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		names = append(names, p.Name)
		if podReady(p) {
			ready++
		}
	}
	sort.Strings(names)
	return names, ready, fmt.Sprintf("%d engine Pod(s), %d Ready", len(names), ready), nil
}

// readyEndpoints counts the Service's ready, not terminating endpoints.
func readyEndpoints(ctx context.Context, c kubernetes.Interface, ns, svc string) (int, error) {
	l, err := c.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	for _, s := range l.Items {
		for _, e := range s.Endpoints {
			ready := e.Conditions.Ready == nil || *e.Conditions.Ready
			term := e.Conditions.Terminating != nil && *e.Conditions.Terminating
			if !ready || term || len(e.Addresses) == 0 {
				continue
			}
			key := e.Addresses[0]
			if e.TargetRef != nil {
				key = e.TargetRef.Name
			}
			seen[key] = true // one endpoint per Pod, however many slices (address families) list it
		}
	}
	return len(seen), nil
}

// scalingChecks are verify's checks for a campaign over engine counts: the
// workload is found and no HorizontalPodAutoscaler fights it (or
// pause_hpa), and the caller may read and write its scale subresource and
// read (and, pausing, update) HPAs.
func scalingChecks(ctx context.Context, c kubernetes.Interface, ns string, k config.Kube) []Check {
	const name = "engines' workload (kube.engines.replicas)"
	check := Check{Name: name}
	w, err := findWorkload(ctx, c, ns, k.Engines.Selector, k.Engines.Workload)
	switch {
	case err != nil:
		check.Note = err.Error()
	default:
		check.OK, check.Note = true, fmt.Sprintf("%s in %s, %d replicas now (restored after the campaign), counts %v", w, ns, w.original, k.Engines.Replicas)
		if err := w.checkHPA(ctx, c, k.Engines.PauseHPA); err != nil {
			check.OK, check.Note = false, err.Error()
		} else if w.hpa != nil {
			check.Note += "; HorizontalPodAutoscaler " + w.hpa.name + " will be pinned to each count and restored (pause_hpa)"
		}
	}
	resource := "deployments"
	if w != nil && w.kind == "StatefulSet" {
		resource = "statefulsets"
	} else if kind, _, err := config.ParseWorkload(k.Engines.Workload); err == nil && kind == "StatefulSet" {
		resource = "statefulsets"
	}
	all := []access{
		{"get", "apps", resource, "scale", ns},
		{"update", "apps", resource, "scale", ns},
		{"patch", "apps", resource, "scale", ns},
		{"get", "autoscaling", "horizontalpodautoscalers", "", ns},
		{"list", "autoscaling", "horizontalpodautoscalers", "", ns},
	}
	if k.Engines.PauseHPA {
		all = append(all, access{"update", "autoscaling", "horizontalpodautoscalers", "", ns})
	}
	return append([]Check{check}, accessChecks(ctx, c, all)...)
}

// ScalingNote says, for `tokex manifests`, what a campaign over engine
// counts does besides creating its objects, and the access it needs ("":
// none).
func ScalingNote(c config.Campaign, ns string) string {
	e := c.Kube.Engines
	if len(e.Replicas) == 0 {
		return ""
	}
	if e.Namespace != "" {
		ns = e.Namespace
	}
	what := "the engine Pods' Deployment or StatefulSet"
	if e.Workload != "" {
		what = e.Workload
	}
	s := fmt.Sprintf("# kube.engines.replicas %v: besides these objects tokex scales %s in %s through its scale\n"+
		"# subresource to each count in turn (waiting for that many Ready Pods behind %s) and back at the end:\n"+
		"# get, update, patch on deployments/scale and statefulsets/scale; get, list on horizontalpodautoscalers\n"+
		"# (deploy/rbac.yaml, Role tokex-engines)", e.Replicas, what, ns, e.Service)
	if e.PauseHPA {
		s += ";\n# --pause-hpa: update on horizontalpodautoscalers (Role tokex-pause-hpa), to pin its HPA to each count and restore it"
	}
	return s + "\n"
}
