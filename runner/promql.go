package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/promql"
	"github.com/tokex-dev/tokex/collector/stats"
)

// EnginePods is implemented by a driver whose engines are Pods (kube): the
// namespace and the names of the Pods its selector matches now, whose
// cAdvisor series PromQL asks for by default.
type EnginePods interface {
	EnginePods(ctx context.Context) (namespace string, pods []string, err error)
}

// promQL asks an existing Prometheus for each run's engine CPU and memory
// over the run's window (target.prometheus, kube.engines.prometheus).
type promQL struct {
	client *promql.Client
	target promql.Target
	user   bool // the config names the series; else cAdvisor's of the engine Pods
}

// startPromQL connects to the campaign's Prometheus, if it has one, and
// asks it a first query, so a wrong URL stops the campaign before it starts.
func (c *Campaign) startPromQL(ctx context.Context) error {
	base := c.Cfg.PrometheusURL()
	if base == "" {
		return nil
	}
	target, user, err := c.Cfg.PromQLTarget()
	if err != nil {
		return fmt.Errorf("target.prometheus_cpu: %w", err)
	}
	if _, ok := c.Driver.(EnginePods); !user && !ok {
		return errors.New("target.prometheus: this driver has no engine Pods for cAdvisor's series: set target.prometheus_cpu")
	}
	client, err := promql.New(base, nil)
	if err != nil {
		return fmt.Errorf("target.prometheus: %w", err)
	}
	if err := client.Ping(ctx); err != nil {
		return fmt.Errorf("target.prometheus: %w", err)
	}
	c.prom = &promQL{client: client, target: target, user: user}
	what := "cAdvisor's series of the engine Pods"
	if user {
		what = target.CPU.String()
	}
	c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "info",
		Message: fmt.Sprintf("engine CPU and memory of each run: PromQL over its window, %s, from %s", what, promql.Redact(base))})
	return nil
}

// measurePromQL asks for a finished run's engine figure over its measured
// window and records the answer (and the queries) in its metadata.
func (c *Campaign) measurePromQL(ctx context.Context, p event.PlannedRun, meta *stats.RunMeta) {
	if c.prom == nil || p.Sanity || meta.Status != stats.StatusDone || !meta.MeasuredEnd.After(meta.MeasuredStart) {
		return
	}
	t := c.prom.target
	if !c.prom.user {
		ns, pods, err := c.Driver.(EnginePods).EnginePods(ctx)
		if err != nil {
			meta.Warnings = append(meta.Warnings, stats.Warn(stats.WarnPromQLNoData, p.ID, "the engine Pods: "+err.Error()))
			return
		}
		t = promql.CAdvisor(ns, pods)
	}
	rec, warns := c.prom.client.Measure(ctx, t, promql.NewWindow(meta.MeasuredStart, meta.MeasuredEnd), p.ID)
	meta.PromQL = rec
	meta.Warnings = append(meta.Warnings, warns...)
	msg, level := "no answer", "warn"
	if rec.Valid() {
		msg, level = rec.Line(), "info"
	}
	c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: level, Message: p.ID + ": engine by " + msg})
	for _, w := range warns {
		c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "warn", Message: w.String()})
	}
}
