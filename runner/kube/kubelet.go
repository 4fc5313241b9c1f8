package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// podCPU is one pod's cumulative CPU and working set from the kubelet.
type podCPU struct {
	cpuSeconds float64
	memory     int64
	at         time.Time
}

// resourceMetricsPath is where a node's kubelet serves its resource
// metrics: the path metrics-server uses, the node's
// metrics.k8s.io/resource-metrics-path annotation, else /metrics/resource.
func resourceMetricsPath(ctx context.Context, c kubernetes.Interface, node string) (string, error) {
	n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if p := n.Annotations["metrics.k8s.io/resource-metrics-path"]; p != "" {
		return p, nil
	}
	return "/metrics/resource", nil
}

// kubeletResourceMetrics reads a node's kubelet resource metrics at path
// through the API server's nodes proxy and returns cumulative CPU per
// namespace/pod.
func kubeletResourceMetrics(ctx context.Context, c kubernetes.Interface, node, path string) (map[string]podCPU, error) {
	raw, err := c.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/" + node + "/proxy" + path).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return parseResourceMetrics(string(raw))
}

// parseResourceMetrics reads pod_cpu_usage_seconds_total and
// pod_memory_working_set_bytes (or the container series, summed per pod).
func parseResourceMetrics(text string) (map[string]podCPU, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("kubelet resource metrics: %w", err)
	}
	out := map[string]podCPU{}
	key := func(m *dto.Metric) string {
		var ns, pod string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "namespace":
				ns = l.GetValue()
			case "pod":
				pod = l.GetValue()
			}
		}
		if pod == "" {
			return ""
		}
		return ns + "/" + pod
	}
	value := func(m *dto.Metric) float64 {
		if m.GetCounter() != nil {
			return m.GetCounter().GetValue()
		}
		if m.GetGauge() != nil {
			return m.GetGauge().GetValue()
		}
		return m.GetUntyped().GetValue()
	}
	add := func(fam string, set func(*podCPU, float64, bool)) bool {
		f := fams[fam]
		if f == nil {
			return false
		}
		for _, m := range f.GetMetric() {
			k := key(m)
			if k == "" {
				continue
			}
			pc := out[k]
			set(&pc, value(m), true)
			if ts := m.GetTimestampMs(); ts > 0 {
				pc.at = time.UnixMilli(ts)
			}
			out[k] = pc
		}
		return true
	}
	if !add("pod_cpu_usage_seconds_total", func(pc *podCPU, v float64, _ bool) { pc.cpuSeconds = v }) {
		add("container_cpu_usage_seconds_total", func(pc *podCPU, v float64, _ bool) { pc.cpuSeconds += v })
	}
	if !add("pod_memory_working_set_bytes", func(pc *podCPU, v float64, _ bool) { pc.memory = int64(v) }) {
		add("container_memory_working_set_bytes", func(pc *podCPU, v float64, _ bool) { pc.memory += int64(v) })
	}
	return out, nil
}
