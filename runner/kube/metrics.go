package kube

import (
	"context"
	"fmt"
	"time"

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
type metricsPoller struct {
	d    *Driver
	out  runner.Output
	seen map[string]time.Time // object -> timestamp of the last sample emitted
	warn bool
	// Exact engine CPU from the kubelets' cumulative counters, when readable.
	prev        map[string]podCPU
	kubeletWarn bool
}

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
	p.out.Emit(event.Resource{At: ts.Time, Role: role, Name: name, CPUMillicores: float64(cpuMilli), MemoryBytes: mem,
		Source: fmt.Sprintf("metrics-server (%s window)", window.Duration)})
}

func (p *metricsPoller) poll(ctx context.Context) {
	d := p.d
	nodes := map[string]bool{}
	engNS := d.Cfg.Kube.Engines.Namespace
	if engNS == "" {
		engNS = d.Namespace
	}
	mc := d.Metrics.MetricsV1beta1()
	groups := []struct{ role, ns, selector string }{
		{"engine", engNS, d.Cfg.Kube.Engines.Selector},
		{"agent", d.Namespace, d.objs.Selector()},
	}
	if p.prev == nil {
		p.prev = map[string]podCPU{}
	}
	exact := p.engineKubelet(ctx, engNS)
	for _, g := range groups {
		if g.role == "engine" && g.selector == "" {
			continue
		}
		if g.role == "engine" && exact {
			// Exact counters were read: metrics-server's rates would double count.
			pods, err := d.Client.CoreV1().Pods(g.ns).List(ctx, metav1.ListOptions{LabelSelector: g.selector})
			if err == nil {
				for _, pod := range pods.Items {
					if pod.Spec.NodeName != "" {
						nodes[pod.Spec.NodeName] = true
					}
				}
			}
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
		pods, err := d.Client.CoreV1().Pods(g.ns).List(ctx, metav1.ListOptions{LabelSelector: g.selector})
		if err == nil {
			for _, pod := range pods.Items {
				if pod.Spec.NodeName != "" {
					nodes[pod.Spec.NodeName] = true
				}
			}
		}
	}
	for n := range nodes {
		nm, err := mc.NodeMetricses().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			continue
		}
		p.emit("node", nm.Name, nm.Timestamp, nm.Window, nm.Usage.Cpu().MilliValue(), nm.Usage.Memory().Value())
	}
}

// engineKubelet reads cumulative CPU of every engine Pod from its node's
// kubelet. It emits samples (rate from the previous reading, plus the
// counter) and reports true only when every engine was readable.
func (p *metricsPoller) engineKubelet(ctx context.Context, ns string) bool {
	d := p.d
	sel := d.Cfg.Kube.Engines.Selector
	if sel == "" {
		return false
	}
	pods, err := d.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil || len(pods.Items) == 0 {
		return false
	}
	byNode := map[string]map[string]podCPU{}
	for _, pod := range pods.Items {
		if pod.Spec.NodeName == "" {
			return false
		}
		if _, ok := byNode[pod.Spec.NodeName]; !ok {
			m, err := kubeletResourceMetrics(ctx, d.Client, pod.Spec.NodeName)
			if err != nil {
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
	for _, pod := range pods.Items {
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
		p.out.Emit(event.Resource{At: cur.at, Role: "engine", Name: pod.Name, CPUMillicores: rate, MemoryBytes: cur.memory,
			CPUSecondsTotal: cur.cpuSeconds, Source: "kubelet /metrics/resource"})
	}
	return true
}
