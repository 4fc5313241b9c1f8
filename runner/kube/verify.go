package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/runner/config"
)

// Check is one line of `tokex verify`: what was checked, whether it
// passed, and what the cluster said.
type Check struct {
	Name string
	OK   bool
	Note string
}

// Verify checks that a cluster is ready for a kube campaign: the API
// server answers, the engines are Ready and on distinct nodes (the
// article's anti-affinity check), the engine Service has ready endpoints,
// metrics.k8s.io is served, and the caller may do what a campaign does in
// namespace. contextName is only reported.
func Verify(ctx context.Context, c kubernetes.Interface, namespace, contextName string, k config.Kube) []Check {
	v, err := c.Discovery().ServerVersion()
	if err != nil {
		return []Check{{Name: "API server reachable", Note: err.Error()}}
	}
	out := []Check{{Name: "API server reachable", OK: true, Note: v.GitVersion + " via context " + contextName}}
	engNS := k.Engines.Namespace
	if engNS == "" {
		engNS = namespace
	}
	out = append(out, engineChecks(ctx, c, engNS, k.Engines.Selector)...)
	out = append(out, serviceCheck(ctx, c, engNS, k.Engines.Service), metricsCheck(c))
	out = append(out, permissionChecks(ctx, c, namespace, engNS, k.EvidenceFile != fileNever)...)
	if len(k.Engines.Replicas) > 0 {
		out = append(out, scalingChecks(ctx, c, engNS, k)...)
	}
	return out
}

// engineChecks: the engine Pods exist, are Ready and share no node.
func engineChecks(ctx context.Context, c kubernetes.Interface, ns, selector string) []Check {
	if selector == "" {
		return []Check{{Name: "engines found", Note: "kube.engines.selector is not set"}}
	}
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	switch {
	case err != nil:
		return []Check{{Name: "engines found", Note: err.Error()}}
	case len(pods.Items) == 0:
		return []Check{{Name: "engines found", Note: fmt.Sprintf("no Pod matches %q in %s", selector, ns)}}
	}
	ready, nodes := 0, map[string][]string{}
	var notReady []string
	for _, p := range pods.Items {
		if podReady(&p) {
			ready++
		} else {
			notReady = append(notReady, p.Name)
		}
		nodes[p.Spec.NodeName] = append(nodes[p.Spec.NodeName], p.Name)
	}
	var shared []string
	for n, ps := range nodes {
		if len(ps) > 1 {
			shared = append(shared, n+": "+strings.Join(ps, ", "))
		}
	}
	sort.Strings(shared)
	return []Check{
		{Name: "engines Ready", OK: ready == len(pods.Items),
			Note: fmt.Sprintf("%d of %d Ready%s", ready, len(pods.Items), listNote(" (not Ready: ", notReady))},
		{Name: "engines on distinct nodes", OK: len(shared) == 0,
			Note: fmt.Sprintf("%d engines on %d nodes%s", len(pods.Items), len(nodes), listNote(" (shared: ", shared))},
	}
}

// serviceCheck: the engine Service has at least one ready endpoint.
func serviceCheck(ctx context.Context, c kubernetes.Interface, ns, svc string) Check {
	const name = "engine Service has endpoints"
	if svc == "" {
		return Check{Name: name, Note: "kube.engines.service is not set"}
	}
	slices, err := c.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return Check{Name: name, Note: err.Error()}
	}
	n := 0
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				n++
			}
		}
	}
	return Check{Name: name, OK: n > 0, Note: fmt.Sprintf("%d ready endpoint(s) behind %s/%s", n, ns, svc)}
}

// metricsCheck: metrics.k8s.io is served, or engine CPU is not measured.
func metricsCheck(c kubernetes.Interface) Check {
	served, err := MetricsServed(c)
	note := "served"
	if err != nil {
		note = err.Error()
	} else if !served {
		note = "not served: install metrics-server, or engine CPU is not measured"
	}
	return Check{Name: "metrics API (metrics.k8s.io)", OK: served, Note: note}
}

// permissionChecks asks the API server (SelfSubjectAccessReview) whether
// the caller may do each thing a campaign does; exec copies the agents'
// evidence files (kube.evidence_file).
func permissionChecks(ctx context.Context, c kubernetes.Interface, ns, engNS string, exec bool) []Check {
	all := []access{
		{"create", "batch", "jobs", "", ns},
		{"delete", "batch", "jobs", "", ns},
		{"create", "", "secrets", "", ns},
		{"create", "", "configmaps", "", ns},
		{"list", "", "pods", "", ns},
		{"watch", "", "pods", "", ns},
		{"get", "", "pods", "log", ns},
		{"list", "metrics.k8s.io", "pods", "", engNS},
	}
	if exec {
		all = append(all, access{"create", "", "pods", "exec", ns})
	}
	return accessChecks(ctx, c, all)
}

// access is one thing a campaign does, asked of the API server.
type access struct{ verb, group, resource, sub, ns string }

// accessChecks asks the API server (SelfSubjectAccessReview) about each.
func accessChecks(ctx context.Context, c kubernetes.Interface, all []access) []Check {
	var out []Check
	for _, a := range all {
		r := &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
			Namespace: a.ns, Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.sub}}}
		name := fmt.Sprintf("may %s %s", a.verb, a.resource)
		if a.sub != "" {
			name += "/" + a.sub
		}
		if a.group != "" {
			name += "." + a.group
		}
		res, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, r, metav1.CreateOptions{})
		if err != nil {
			out = append(out, Check{Name: name, Note: err.Error()})
			continue
		}
		out = append(out, Check{Name: name + " in " + a.ns, OK: res.Status.Allowed, Note: res.Status.Reason})
	}
	return out
}

func listNote(prefix string, xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return prefix + strings.Join(xs, "; ") + ")"
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Manifests are every object a campaign creates, for review: the Secret
// (its values redacted), the ConfigMap with the agent script and one
// Indexed Job per planned run.
func (o *Objects) Manifests(plan []event.PlannedRun) ([]any, error) {
	sec, err := o.SecretObject()
	if err != nil {
		return nil, err
	}
	for k := range sec.StringData {
		sec.StringData[k] = "[redacted]"
	}
	cm, err := o.ConfigMapObject()
	if err != nil {
		return nil, err
	}
	docs := []any{sec, cm}
	for _, p := range plan {
		j, err := o.JobObject(p)
		if err != nil {
			return nil, err
		}
		docs = append(docs, j)
	}
	return docs, nil
}
