package config

import (
	"net/url"
	"os"

	"github.com/tokex-dev/tokex/collector/promql"
	"github.com/tokex-dev/tokex/internal/confload"
)

// EnvPrometheusURL overrides target.prometheus and kube.engines.prometheus:
// a URL with credentials stays out of config.yaml and the evidence.
const EnvPrometheusURL = "TOKEX_PROMETHEUS_URL"

// PrometheusURL is the Prometheus server each run's engine figure is asked
// of (target.prometheus, kube.engines.prometheus, or TOKEX_PROMETHEUS_URL
// when either is set); "" when none is.
func (c *Campaign) PrometheusURL() string {
	u := c.Target.Prometheus
	if u == "" {
		u = c.Kube.Engines.Prometheus
	}
	if env := os.Getenv(EnvPrometheusURL); env != "" && u != "" {
		return env
	}
	return u
}

// PromQLTarget is what PromQL asks for when the user names the series
// (target.prometheus_cpu and _memory); ok false when the driver's default
// (cAdvisor's series of the engine Pods) applies.
func (c *Campaign) PromQLTarget() (t promql.Target, ok bool, err error) {
	if c.Target.PrometheusCPU == "" {
		return promql.Target{}, false, nil
	}
	cpu, err := promql.ParseSelector(c.Target.PrometheusCPU)
	if err != nil {
		return promql.Target{}, false, err
	}
	t = promql.Target{CPU: cpu, By: promql.ByProcess}
	if c.Target.PrometheusMemory != "" {
		mem, err := promql.ParseSelector(c.Target.PrometheusMemory)
		if err != nil {
			return promql.Target{}, false, err
		}
		t.Memory = &mem
	}
	return t, true, nil
}

// validatePrometheus checks the PromQL settings: one server, an http(s)
// URL, selectors that parse, and series to ask for with the local driver.
func (c *Campaign) validatePrometheus(doc *confload.Doc) error {
	t, k := c.Target, c.Kube.Engines
	for _, f := range []struct{ field, v string }{{"target.prometheus", t.Prometheus}, {"kube.engines.prometheus", k.Prometheus}} {
		if f.v == "" {
			continue
		}
		u, err := url.Parse(f.v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" || len(f.v) > 2048 {
			return doc.Errorf(f.field, "must be the http(s) URL of a Prometheus server (like http://prometheus.monitoring:9090)")
		}
	}
	if t.Prometheus != "" && k.Prometheus != "" {
		return doc.Errorf("kube.engines.prometheus", "give one of target.prometheus and kube.engines.prometheus")
	}
	if k.Prometheus != "" && c.Driver != "kube" {
		return doc.Errorf("kube.engines.prometheus", "applies to the kube driver; use target.prometheus")
	}
	for _, f := range []struct{ field, v string }{{"target.prometheus_cpu", t.PrometheusCPU}, {"target.prometheus_memory", t.PrometheusMemory}} {
		if f.v == "" {
			continue
		}
		if t.Prometheus == "" && k.Prometheus == "" {
			return doc.Errorf(f.field, "needs target.prometheus (the server to ask)")
		}
		if _, err := promql.ParseSelector(f.v); err != nil {
			return doc.Errorf(f.field, "must be a series selector like process_cpu_seconds_total{job=\"my-as\"}: %v", err)
		}
	}
	if t.Prometheus != "" && t.PrometheusCPU == "" && c.Driver != "kube" {
		return doc.Errorf("target.prometheus_cpu", "is required with target.prometheus outside the kube driver: the engine's CPU-seconds counter, like process_cpu_seconds_total{job=\"my-as\"}")
	}
	if t.PrometheusMemory != "" && t.PrometheusCPU == "" {
		return doc.Errorf("target.prometheus_memory", "needs target.prometheus_cpu")
	}
	return nil
}
