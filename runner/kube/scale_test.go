package kube

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/config"
)

// scaleCluster is a fake clientset with a small deployment controller: a
// scale of Deployment "eng" makes (after lag) that many Ready engine Pods
// owned by its ReplicaSet and as many ready endpoints behind Service "eng".
type scaleCluster struct {
	*fake.Clientset
	lag       time.Duration
	neverUp   bool // Pods never become Ready
	failScale int  // updates of the scale that fail before one succeeds
	mu        sync.Mutex
	scales    []int32 // every replicas written
	rmu       sync.Mutex
}

var depGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func newScaleCluster(t *testing.T, replicas int32) *scaleCluster {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "eng", Namespace: "eng"}, Spec: appsv1.DeploymentSpec{Replicas: &replicas}}
	f := &scaleCluster{Clientset: fake.NewClientset(d)}
	f.PrependReactor("get", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "scale" {
			return false, nil, nil
		}
		obj, err := f.Tracker().Get(depGVR, "eng", a.(k8stesting.GetAction).GetName())
		if err != nil {
			return true, nil, err
		}
		dep := obj.(*appsv1.Deployment)
		return true, &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: dep.Name, Namespace: dep.Namespace},
			Spec: autoscalingv1.ScaleSpec{Replicas: *dep.Spec.Replicas}}, nil
	})
	f.PrependReactor("update", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "scale" {
			return false, nil, nil
		}
		sc := a.(k8stesting.UpdateAction).GetObject().(*autoscalingv1.Scale)
		f.mu.Lock()
		if f.failScale > 0 {
			f.failScale--
			f.mu.Unlock()
			return true, nil, apierrors.NewServiceUnavailable("the API server is away")
		}
		f.scales = append(f.scales, sc.Spec.Replicas)
		f.mu.Unlock()
		obj, err := f.Tracker().Get(depGVR, "eng", sc.Name)
		if err != nil {
			return true, nil, err
		}
		dep := obj.(*appsv1.Deployment).DeepCopy()
		n := sc.Spec.Replicas
		dep.Spec.Replicas = &n
		if err := f.Tracker().Update(depGVR, dep, "eng"); err != nil {
			return true, nil, err
		}
		go f.reconcile(int(n))
		return true, sc, nil
	})
	f.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = r.Spec.ResourceAttributes.Resource != "horizontalpodautoscalers" || r.Spec.ResourceAttributes.Verb != "update"
		return true, r, nil
	})
	f.reconcile(int(replicas))
	return f
}

func (f *scaleCluster) written() []int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int32(nil), f.scales...)
}

// reconcile makes the Deployment's count of engine Pods and the Service's
// endpoints, after lag, one reconcile at a time (as a controller would:
// the latest spec wins whatever order the goroutines run in).
func (f *scaleCluster) reconcile(int) {
	time.Sleep(f.lag)
	f.rmu.Lock()
	defer f.rmu.Unlock()
	obj, err := f.Tracker().Get(depGVR, "eng", "eng")
	if err != nil {
		return
	}
	f.reconcileTo(int(*obj.(*appsv1.Deployment).Spec.Replicas))
}

// reconcileTo makes n engine Pods and their endpoints (f.rmu held, or
// before any scale).
func (f *scaleCluster) reconcileTo(n int) {
	ctx := context.Background()
	pods := f.CoreV1().Pods("eng")
	l, _ := pods.List(ctx, metav1.ListOptions{})
	for i := n; i < len(l.Items)+n; i++ {
		_ = pods.Delete(ctx, fmt.Sprintf("eng-7d4f9-%d", i), metav1.DeleteOptions{})
	}
	yes := !f.neverUp
	var eps []discoveryv1.Endpoint
	for i := 0; i < n; i++ {
		p := enginePod(fmt.Sprintf("eng-7d4f9-%d", i), fmt.Sprintf("n%d", i), !f.neverUp)
		p.Labels["pod-template-hash"] = "7d4f9"
		ctrl := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "eng-7d4f9", Controller: &ctrl}}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			_, _ = pods.Update(ctx, p, metav1.UpdateOptions{})
		}
		eps = append(eps, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.0.0.%d", i+1)}, Conditions: discoveryv1.EndpointConditions{Ready: &yes},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: p.Name}})
	}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "eng-abcde", Namespace: "eng",
		Labels: map[string]string{discoveryv1.LabelServiceName: "eng"}}, Endpoints: eps}
	if _, err := f.DiscoveryV1().EndpointSlices("eng").Create(ctx, slice, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		_, _ = f.DiscoveryV1().EndpointSlices("eng").Update(ctx, slice, metav1.UpdateOptions{})
	}
}

func scaleDriver(f *scaleCluster) *Driver {
	c := config.Article()
	c.Driver = "kube"
	c.Kube.Engines.Namespace, c.Kube.Engines.Selector, c.Kube.Engines.Service = "eng", "app=engine", "eng"
	c.Kube.Engines.Replicas = []int{1, 2, 3}
	c.Kube.Engines.Settle = time.Millisecond
	c.Kube.Engines.ReadyTimeout = 30 * time.Second // a bound, never reached when the fake controller keeps up
	return &Driver{Cfg: c, Client: f, Namespace: "load", Poll: 5 * time.Millisecond}
}

type nopOut struct{}

func (nopOut) Emit(event.Event)      {}
func (nopOut) Record(*stats.Request) {}

// TestScaleDeployment (issue 28 item 1): the Deployment is found from the
// engine Pods' ReplicaSet, scaled 1 → 2 → 3 through its scale subresource,
// each count awaited until that many Pods are Ready and behind the
// Service; Restore puts back the original 2, once.
func TestScaleDeployment(t *testing.T) {
	f := newScaleCluster(t, 2)
	f.lag = 30 * time.Millisecond
	d := scaleDriver(f)
	ctx := context.Background()
	for _, n := range []int{1, 2, 3} {
		s, err := d.Scale(ctx, n, nopOut{})
		if err != nil {
			t.Fatalf("scale %d: %v", n, err)
		}
		if s.Replicas != n || len(s.Engines) != n || s.Endpoints != n || s.Workload != "deployment/eng" {
			t.Errorf("scale %d: %+v", n, s)
		}
	}
	s, ok, err := d.Restore(ctx, nopOut{})
	if err != nil || !ok || s.Replicas != 2 || s.From != 3 || !s.Restore {
		t.Fatalf("restore: %+v %v %v", s, ok, err)
	}
	if got := fmt.Sprint(f.written()); got != "[1 2 3 2]" {
		t.Errorf("scales written %s", got)
	}
	if _, ok, _ := d.Restore(ctx, nopOut{}); ok {
		t.Error("a second restore did something")
	}
}

// TestScaleWaitsAndFails: a count whose Pods never become Ready fails after
// kube.engines.ready_timeout, saying what it saw; Close then restores.
func TestScaleWaitsAndFails(t *testing.T) {
	f := newScaleCluster(t, 2)
	d := scaleDriver(f)
	d.Cfg.Kube.Engines.ReadyTimeout = 200 * time.Millisecond
	// The three Pods exist, not Ready, before the scale: the state the
	// waiter sees is final at once, however slow the machine.
	f.neverUp = true
	f.reconcileTo(3)
	_, err := d.Scale(context.Background(), 3, nopOut{})
	if err == nil || !strings.Contains(err.Error(), "3 engines not Ready behind the Service within 200ms") || !strings.Contains(err.Error(), "3 engine Pod(s), 0 Ready") {
		t.Fatalf("err %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(f.written()); got != "[3 2]" {
		t.Errorf("scales written %s: Close did not restore", got)
	}
}

// TestScaleRestoreRetries: a restore while the API server is away retries
// until it is back; one that cannot succeed says how to restore by hand.
func TestScaleRestoreRetries(t *testing.T) {
	f := newScaleCluster(t, 2)
	d := scaleDriver(f)
	if _, err := d.Scale(context.Background(), 1, nopOut{}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.failScale = 2
	f.mu.Unlock()
	if _, ok, err := d.Restore(context.Background(), nopOut{}); err != nil || !ok {
		t.Fatalf("restore after two failures: %v %v", ok, err)
	}
	if _, err := d.Scale(context.Background(), 3, nopOut{}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.failScale = 1000
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	_, ok, err := d.Restore(ctx, nopOut{})
	if ok || err == nil || !strings.Contains(err.Error(), "kubectl -n eng scale deployment/eng --replicas=2") {
		t.Fatalf("restore that cannot succeed: %v %v", ok, err)
	}
}

func hpa(minR, maxR int32) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "eng-hpa", Namespace: "eng"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: &minR, MaxReplicas: maxR,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "eng"}}}
}

// TestScaleHPA: an HPA on the workload is refused without pause_hpa; with
// it, pinned to each count and its bounds restored at the end.
func TestScaleHPA(t *testing.T) {
	ctx := context.Background()
	f := newScaleCluster(t, 2)
	if _, err := f.AutoscalingV2().HorizontalPodAutoscalers("eng").Create(ctx, hpa(2, 6), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d := scaleDriver(f)
	if _, err := d.Scale(ctx, 1, nopOut{}); err == nil || !strings.Contains(err.Error(), "HorizontalPodAutoscaler eng-hpa scales deployment/eng (2–6 replicas)") || !strings.Contains(err.Error(), "--pause-hpa") {
		t.Fatalf("no refusal: %v", err)
	}
	if len(f.written()) != 0 {
		t.Fatalf("scaled despite the HPA: %v", f.written())
	}
	d = scaleDriver(f)
	d.Cfg.Kube.Engines.PauseHPA = true
	s, err := d.Scale(ctx, 3, nopOut{})
	if err != nil || len(s.Notes) == 0 {
		t.Fatalf("%+v %v", s, err)
	}
	h, _ := f.AutoscalingV2().HorizontalPodAutoscalers("eng").Get(ctx, "eng-hpa", metav1.GetOptions{})
	if *h.Spec.MinReplicas != 3 || h.Spec.MaxReplicas != 3 {
		t.Errorf("HPA not pinned: %d–%d", *h.Spec.MinReplicas, h.Spec.MaxReplicas)
	}
	if _, _, err := d.Restore(ctx, nopOut{}); err != nil {
		t.Fatal(err)
	}
	h, _ = f.AutoscalingV2().HorizontalPodAutoscalers("eng").Get(ctx, "eng-hpa", metav1.GetOptions{})
	if *h.Spec.MinReplicas != 2 || h.Spec.MaxReplicas != 6 {
		t.Errorf("HPA not restored: %d–%d", *h.Spec.MinReplicas, h.Spec.MaxReplicas)
	}
}

// TestFindWorkload: the engines' controller from their owners, or the
// config's; Pods of two workloads or of none are refused with what to set.
func TestFindWorkload(t *testing.T) {
	ctx := context.Background()
	ctrl := true
	owned := func(name, kind, owner, hash string) *corev1.Pod {
		p := enginePod(name, "n", true)
		if hash != "" {
			p.Labels["pod-template-hash"] = hash
		}
		if kind != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: owner, Controller: &ctrl}}
		}
		return p
	}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "pf", Namespace: "eng"}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "odd-rs", Namespace: "eng",
		OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "odd", Controller: &ctrl}}}}
	for _, c := range []struct {
		name  string
		objs  []runtime.Object
		given string
		want  string // kind/name or an error's words
	}{
		{"deployment by hash", []runtime.Object{owned("a", "ReplicaSet", "web-5c6", "5c6")}, "", "Deployment/web"},
		{"deployment by the ReplicaSet's owner", []runtime.Object{owned("a", "ReplicaSet", "odd-rs", ""), rs}, "", "Deployment/odd"},
		{"statefulset", []runtime.Object{owned("pf-0", "StatefulSet", "pf", ""), owned("pf-1", "StatefulSet", "pf", ""), sts}, "", "StatefulSet/pf"},
		{"given", nil, "sts/pf", "StatefulSet/pf"},
		{"two workloads", []runtime.Object{owned("a", "ReplicaSet", "web-5c6", "5c6"), owned("pf-0", "StatefulSet", "pf", "")}, "", "belong to deployment/web, statefulset/pf"},
		{"no controller", []runtime.Object{owned("a", "", "", "")}, "", "has no controller"},
		{"a DaemonSet", []runtime.Object{owned("a", "DaemonSet", "ds", "")}, "", "controlled by DaemonSet ds"},
		{"no Pods", nil, "", "no engine Pod matches"},
		{"bad kind", nil, "job/x", "the kind must be deployment or statefulset"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := fake.NewClientset(c.objs...)
			cs.PrependReactor("get", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.GetSubresource() != "scale" {
					return false, nil, nil
				}
				return true, &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 2}}, nil
			})
			w, err := findWorkload(ctx, cs, "eng", "app=engine", c.given)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = w.kind + "/" + w.name
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestVerifyScaling: with kube.engines.replicas, verify finds the workload
// and asks for the scale subresource and the HPAs; pause_hpa asks to update
// HPAs too (the fake refuses that).
func TestVerifyScaling(t *testing.T) {
	f := newScaleCluster(t, 2)
	k := scaleDriver(f).Cfg.Kube
	got := map[string]Check{}
	for _, ch := range Verify(context.Background(), f, "load", "ctx", k) {
		got[ch.Name] = ch
	}
	for name, ok := range map[string]bool{
		"engines' workload (kube.engines.replicas)":            true,
		"may get deployments/scale.apps in eng":                true,
		"may update deployments/scale.apps in eng":             true,
		"may patch deployments/scale.apps in eng":              true,
		"may list horizontalpodautoscalers.autoscaling in eng": true,
	} {
		if ch, found := got[name]; !found || ch.OK != ok {
			t.Errorf("%s: %+v (found %v)", name, ch, found)
		}
	}
	if n := got["engines' workload (kube.engines.replicas)"].Note; !strings.Contains(n, "deployment/eng in eng, 2 replicas now") {
		t.Errorf("workload note %q", n)
	}
	k.Engines.PauseHPA = true
	found := false
	for _, ch := range Verify(context.Background(), f, "load", "ctx", k) {
		if ch.Name == "may update horizontalpodautoscalers.autoscaling in eng" {
			found = !ch.OK
		}
	}
	if !found {
		t.Error("pause_hpa: updating HPAs is not checked (or the refusal not seen)")
	}
}
