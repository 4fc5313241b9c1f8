package kube

import (
	"context"
	"strings"
	"testing"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/tokex-dev/tokex/runner/config"
)

func enginePod(name, node string, ready bool) *corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "eng", Labels: map[string]string{"app": "engine"}},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}}}
}

// Verify's checks, against a fake cluster: engines not Ready and sharing a
// node, a Service without ready endpoints, no metrics API, and access
// reviews the fake answers "not allowed".
func TestVerify(t *testing.T) {
	no := false
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "engine-x", Namespace: "eng",
		Labels: map[string]string{discoveryv1.LabelServiceName: "engine"}},
		Endpoints: []discoveryv1.Endpoint{{Conditions: discoveryv1.EndpointConditions{Ready: &no}}}}
	c := fake.NewClientset(enginePod("e0", "n1", true), enginePod("e1", "n1", false), enginePod("e2", "n2", true), slice)
	// The access reviews: everything allowed but deleting Jobs.
	c.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview).DeepCopy()
		ra := r.Spec.ResourceAttributes
		r.Status.Allowed = ra.Verb != "delete"
		if !r.Status.Allowed {
			r.Status.Reason = "RBAC: no rule allows it"
		}
		return true, r, nil
	})
	var k config.Kube
	k.Engines.Namespace, k.Engines.Selector, k.Engines.Service = "eng", "app=engine", "engine"
	got := map[string]Check{}
	for _, ch := range Verify(context.Background(), c, "load", "ctx-a", k) {
		got[ch.Name] = ch
	}
	for _, want := range []Check{
		{"API server reachable", true, "via context ctx-a"},
		{"engines Ready", false, "2 of 3 Ready (not Ready: e1)"},
		{"engines on distinct nodes", false, "3 engines on 2 nodes (shared: n1: e0, e1)"},
		{"engine Service has endpoints", false, "0 ready endpoint(s) behind eng/engine"},
		{"metrics API (metrics.k8s.io)", false, ""},
		{"may create jobs.batch in load", true, ""},
		{"may delete jobs.batch in load", false, "RBAC: no rule allows it"},
		{"may watch pods in load", true, ""},
		{"may get pods/log in load", true, ""},
		{"may list pods.metrics.k8s.io in eng", true, ""},
		{"may create pods/exec in load", true, ""},
	} {
		ch, ok := got[want.Name]
		if !ok || ch.OK != want.OK || !strings.Contains(ch.Note, want.Note) {
			t.Errorf("%s: got %+v (found %v), want ok=%v note ~%q", want.Name, ch, ok, want.OK, want.Note)
		}
	}
	if len(got) != 14 {
		t.Errorf("%d checks, want 14: %v", len(got), got)
	}
	// kube.evidence_file never: no exec, so it is not asked.
	k.EvidenceFile = "never"
	for _, ch := range Verify(context.Background(), c, "load", "ctx-a", k) {
		if strings.Contains(ch.Name, "exec") {
			t.Errorf("exec checked with evidence_file never: %+v", ch)
		}
	}
	// Unset selector and Service say which setting is missing.
	for _, ch := range Verify(context.Background(), c, "load", "ctx-a", config.Kube{}) {
		if strings.HasPrefix(ch.Name, "engine") && !strings.Contains(ch.Note, "is not set") {
			t.Errorf("without kube.engines: %+v", ch)
		}
	}
}
