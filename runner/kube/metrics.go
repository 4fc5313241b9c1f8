package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/runner"
)

// MetricsGroupVersion is the resource metrics API.
const MetricsGroupVersion = "metrics.k8s.io/v1beta1"

// MetricsServed asks discovery whether the cluster serves metrics.k8s.io.
func MetricsServed(c kubernetes.Interface) (bool, error) {
	list, err := c.Discovery().ServerResourcesForGroupVersion(MetricsGroupVersion)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == "pods" {
			return true, nil
		}
	}
	return false, nil
}

// metricsPoller reads PodMetrics of the engines and the agents, and the
// NodeMetrics of their nodes. metrics-server refreshes every 10–15 s, so
// a 5 s poll sees repeats: samples are de-duplicated by timestamp.
//
// Its load on the API server does not grow with the agents: per interval one
// List of the engine Pods, one PodMetrics List for the engines and one for
// the agents (one per namespace), one NodeMetrics List, and, where the
// kubelets' exact counters are readable, one nodes-proxy read per engine
// node. The agents' nodes come from the run's Pod watch.
type metricsPoller struct {
	d    *Driver
	out  runner.Output
	seen map[string]time.Time // object -> timestamp of the last sample emitted
	warn bool
	// Exact engine CPU from the kubelets' cumulative counters, when readable.
	prev        map[string]podCPU
	paths       map[string]string // node -> its resource metrics path
	kubeletWarn bool
	kubeletNext time.Time // after a failed read, when to try again
	// CPU requests and limits of the engine Pods by name, for the dashboard.
	sizes map[string]cpuSize
}

// cpuSize is a Pod's CPU request and limit in millicores, its containers'
// sum; the limit is 0 when a container has none (the Pod has no limit).
type cpuSize struct{ request, limit float64 }

func sizeOf(pod *corev1.Pod) cpuSize {
	var s cpuSize
	unlimited := false
	for _, c := range pod.Spec.Containers {
		s.request += float64(c.Resources.Requests.Cpu().MilliValue())
		lim := c.Resources.Limits.Cpu().MilliValue()
		unlimited = unlimited || lim == 0
		s.limit += float64(lim)
	}
	if unlimited {
		s.limit = 0
	}
	return s
}

// kubeletRetry is how long the poller waits to read the kubelets again after
// a failed read, rather than failing every interval.
const kubeletRetry = time.Minute

func (p *metricsPoller) run(ctx context.Context) {
	t := time.NewTicker(p.d.Cfg.Kube.MetricsInterval)
	defer t.Stop()
	for {
		p.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *metricsPoller) emit(role, name string, ts metav1.Time, window metav1.Duration, cpuMilli, mem int64) {
	key := role + "/" + name
	if last, ok := p.seen[key]; ok && !ts.Time.After(last) {
		return // the same metrics-server window again
	}
	p.seen[key] = ts.Time
	e := event.Resource{At: ts.Time, Role: role, Name: name, CPUMillicores: float64(cpuMilli), MemoryBytes: mem,
		Source: fmt.Sprintf("metrics-server (%s window)", window.Duration)}
	if role == "engine" {
		sz := p.sizes[name]
		e.RequestMillicores, e.LimitMillicores = sz.request, sz.limit
	}
	p.out.Emit(e)
}

func (p *metricsPoller) poll(ctx context.Context) {
	d := p.d
	nodes := d.agentNodes()
	engNS := d.Cfg.Kube.Engines.Namespace
	if engNS == "" {
		engNS = d.Namespace
	}
	mc := d.Metrics.MetricsV1beta1()
	if p.prev == nil {
		p.prev, p.paths = map[string]podCPU{}, map[string]string{}
	}
	var engines []corev1.Pod
	if sel := d.Cfg.Kube.Engines.Selector; sel != "" {
		if pods, err := d.Client.CoreV1().Pods(engNS).List(ctx, metav1.ListOptions{LabelSelector: sel}); err == nil {
			engines = pods.Items
		}
	}
	p.sizes = map[string]cpuSize{}
	for i, pod := range engines {
		if pod.Spec.NodeName != "" {
			nodes[pod.Spec.NodeName] = true
		}
		p.sizes[pod.Name] = sizeOf(&engines[i])
	}
	exact := p.engineKubelet(ctx, engines)
	groups := []struct{ role, ns, selector string }{
		{"engine", engNS, d.Cfg.Kube.Engines.Selector},
		{"agent", d.Namespace, d.objs.Selector()},
	}
	for _, g := range groups {
		// With exact counters read, metrics-server's engine rates would double count.
		if g.role == "engine" && (g.selector == "" || exact) {
			continue
		}
		pms, err := mc.PodMetricses(g.ns).List(ctx, metav1.ListOptions{LabelSelector: g.selector})
		if err != nil {
			if ctx.Err() == nil && !p.warn {
				p.warn = true
				p.out.Emit(event.Log{At: time.Now(), Source: "kube", Level: "warn", Message: "pod metrics: " + err.Error()})
			}
			continue
		}
		for _, pm := range pms.Items {
			var cpu, mem int64
			for _, c := range pm.Containers {
				cpu += c.Usage.Cpu().MilliValue()
				mem += c.Usage.Memory().Value()
			}
			p.emit(g.role, pm.Name, pm.Timestamp, pm.Window, cpu, mem)
			if g.role == "agent" {
				d.agentCPU.note(pm.Name, pm.Timestamp.Time, cpu)
			}
		}
	}
	if len(nodes) == 0 {
		return
	}
	nms, err := mc.NodeMetricses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, nm := range nms.Items {
		if nodes[nm.Name] {
			p.emit("node", nm.Name, nm.Timestamp, nm.Window, nm.Usage.Cpu().MilliValue(), nm.Usage.Memory().Value())
		}
	}
}

// engineKubelet reads cumulative CPU of every engine Pod from its node's
// kubelet. It emits samples (rate from the previous reading, plus the
// counter) and reports true only when every engine was readable. After a
// failed read it waits kubeletRetry before trying again.
func (p *metricsPoller) engineKubelet(ctx context.Context, engines []corev1.Pod) bool {
	if len(engines) == 0 || time.Now().Before(p.kubeletNext) {
		return false
	}
	byNode := map[string]map[string]podCPU{}
	for _, pod := range engines {
		if pod.Spec.NodeName == "" {
			return false
		}
		if _, ok := byNode[pod.Spec.NodeName]; !ok {
			m, err := p.readKubelet(ctx, pod.Spec.NodeName)
			if err != nil {
				p.kubeletNext = time.Now().Add(kubeletRetry)
				if !p.kubeletWarn && ctx.Err() == nil {
					p.kubeletWarn = true
					p.out.Emit(event.Log{At: time.Now(), Source: "kube", Level: "warn", Message: "kubelet /metrics/resource not readable through the nodes proxy (" +
						err.Error() + "): engine CPU from metrics-server rates"})
				}
				return false
			}
			byNode[pod.Spec.NodeName] = m
		}
		if _, ok := byNode[pod.Spec.NodeName][pod.Namespace+"/"+pod.Name]; !ok {
			return false
		}
	}
	for i, pod := range engines {
		cur := byNode[pod.Spec.NodeName][pod.Namespace+"/"+pod.Name]
		if cur.at.IsZero() {
			cur.at = time.Now()
		}
		key := pod.Namespace + "/" + pod.Name
		prev, ok := p.prev[key]
		p.prev[key] = cur
		if !ok || !cur.at.After(prev.at) {
			continue // the first reading is the baseline; a repeat adds nothing
		}
		rate := (cur.cpuSeconds - prev.cpuSeconds) / cur.at.Sub(prev.at).Seconds() * 1000
		sz := sizeOf(&engines[i])
		p.out.Emit(event.Resource{At: cur.at, Role: "engine", Name: pod.Name, CPUMillicores: rate, MemoryBytes: cur.memory,
			CPUSecondsTotal: cur.cpuSeconds, Source: "kubelet /metrics/resource", RequestMillicores: sz.request, LimitMillicores: sz.limit})
	}
	return true
}

// readKubelet reads one node's kubelet resource metrics, looking its path up
// once per node.
func (p *metricsPoller) readKubelet(ctx context.Context, node string) (map[string]podCPU, error) {
	path, ok := p.paths[node]
	if !ok {
		var err error
		if path, err = resourceMetricsPath(ctx, p.d.Client, node); err != nil {
			return nil, err
		}
		p.paths[node] = path
	}
	return kubeletResourceMetrics(ctx, p.d.Client, node, path)
}

// EnginePods implements runner.EnginePods: the engine Pods the selector
// matches now (kube.engines.prometheus asks for their cAdvisor series).
func (d *Driver) EnginePods(ctx context.Context) (string, []string, error) {
	ns := d.Cfg.Kube.Engines.Namespace
	if ns == "" {
		ns = d.Namespace
	}
	sel := d.Cfg.Kube.Engines.Selector
	if sel == "" {
		return ns, nil, errors.New("kube.engines.selector is not set: no engine Pods to ask for")
	}
	pods, err := d.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return ns, nil, err
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	if len(names) == 0 {
		return ns, nil, fmt.Errorf("no Pod in %s matches %s", ns, sel)
	}
	return ns, names, nil
}
