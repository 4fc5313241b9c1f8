package kube

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tokex-dev/tokex/runner/config"
)

// TestEnginePodsForPromQL: kube.engines.prometheus asks for the cAdvisor
// series of the Pods the engine selector matches, in the engines'
// namespace; no selector or no Pod is an error the run's warning names.
func TestEnginePodsForPromQL(t *testing.T) {
	pod := func(ns, name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	}
	cs := fake.NewClientset(pod("as", "engine-0", map[string]string{"app": "as"}), pod("as", "engine-1", map[string]string{"app": "as"}),
		pod("as", "other", map[string]string{"app": "db"}), pod("load", "engine-9", map[string]string{"app": "as"}))
	var cfg config.Campaign
	cfg.Kube.Engines.Namespace, cfg.Kube.Engines.Selector = "as", "app=as"
	d := &Driver{Cfg: cfg, Client: cs, Namespace: "load"}
	ns, pods, err := d.EnginePods(context.Background())
	slices.Sort(pods)
	if err != nil || ns != "as" || !slices.Equal(pods, []string{"engine-0", "engine-1"}) {
		t.Fatalf("%s %v %v", ns, pods, err)
	}
	d.Cfg.Kube.Engines.Selector = "app=none"
	if _, _, err := d.EnginePods(context.Background()); err == nil || !strings.Contains(err.Error(), "no Pod in as matches app=none") {
		t.Errorf("no Pod: %v", err)
	}
	d.Cfg.Kube.Engines.Selector = ""
	if _, _, err := d.EnginePods(context.Background()); err == nil || !strings.Contains(err.Error(), "kube.engines.selector") {
		t.Errorf("no selector: %v", err)
	}
}
