package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/internal/confload"
)

// Limits and defaults of a campaign over engine counts (docs/scaling.md).
const (
	MaxReplicaCounts    = 16   // counts in kube.engines.replicas or target.embedded.engines
	MaxReplicas         = 1000 // one count, kube
	MaxLocalEngines     = 64   // one count, local
	DefaultSettle       = 15 * time.Second
	DefaultReadyTimeout = 5 * time.Minute
)

// ReplicaCounts are the engine counts the campaign measures in turn, in
// the order given; nil: one size, as the engines are.
func (c *Campaign) ReplicaCounts() []int {
	if c.Driver == "kube" {
		return c.Kube.Engines.Replicas
	}
	return c.Target.Embedded.Engines
}

// ReplicaField is the field that sets the engine counts for the driver.
func (c *Campaign) ReplicaField() string {
	if c.Driver == "kube" {
		return "kube.engines.replicas"
	}
	return "target.embedded.engines"
}

// Settle is the wait after an engine count is ready, before its runs
// (kube; the local engines start in well under a second, and each count's
// sanity run warms them).
func (c *Campaign) Settle() time.Duration {
	if c.Driver != "kube" {
		return 0
	}
	if s := c.Kube.Engines.Settle; s > 0 {
		return s
	}
	return DefaultSettle
}

// ReadyTimeout bounds the wait for an engine count to be Ready.
func (c *Campaign) ReadyTimeout() time.Duration {
	if t := c.Kube.Engines.ReadyTimeout; t > 0 {
		return t
	}
	return DefaultReadyTimeout
}

// ParseWorkload reads kube.engines.workload: "deployment/NAME" or
// "statefulset/NAME" (kind case-insensitive; "deploy", "sts" and the
// plural forms as kubectl accepts them).
func ParseWorkload(s string) (kind, name string, err error) {
	k, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || n == "" || len(n) > 253 || strings.ContainsAny(n, "/ \t\r\n") {
		return "", "", fmt.Errorf("%q: want deployment/NAME or statefulset/NAME", s)
	}
	switch strings.ToLower(k) {
	case "deployment", "deployments", "deploy", "deployment.apps":
		return "Deployment", n, nil
	case "statefulset", "statefulsets", "sts", "statefulset.apps":
		return "StatefulSet", n, nil
	}
	return "", "", fmt.Errorf("%q: the kind must be deployment or statefulset (the scale subresource tokex uses)", s)
}

// validateReplicas checks the engine counts and how they are reached.
func (c *Campaign) validateReplicas(doc *confload.Doc) error {
	e := c.Kube.Engines
	switch {
	case c.Driver == "kube" && len(c.Target.Embedded.Engines) > 0:
		return doc.Errorf("target.embedded.engines", "is the local driver's; with driver: kube set kube.engines.replicas")
	case c.Driver != "kube" && len(e.Replicas) > 0:
		return doc.Errorf("kube.engines.replicas", "is the kube driver's; locally set target.embedded.engines (--engines)")
	case c.Driver != "kube" && len(c.Target.Embedded.Engines) > 0 && !c.Embedded():
		return doc.Errorf("target.embedded.engines", "tokex starts engines only for its embedded server; a target.url is scaled where it runs")
	}
	counts, field := c.ReplicaCounts(), c.ReplicaField()
	limit := MaxLocalEngines
	if c.Driver == "kube" {
		limit = MaxReplicas
	}
	if len(counts) > MaxReplicaCounts {
		return doc.Errorf(field, "%d counts; at most %d", len(counts), MaxReplicaCounts)
	}
	for i, n := range counts {
		if n < 1 || n > limit {
			return doc.Errorf(fmt.Sprintf("%s[%d]", field, i), "%d engines: must be between 1 and %d", n, limit)
		}
		if slices.Contains(counts[:i], n) {
			return doc.Errorf(fmt.Sprintf("%s[%d]", field, i), "%d is given twice", n)
		}
	}
	if n := len(counts); n > 0 {
		perCount := len(c.Stages) * c.Rounds
		if c.Sanity.Enabled {
			perCount++
		}
		if perCount*n > MaxRuns {
			return doc.Errorf(field, "%d counts × %d runs is %d runs; at most %d", n, perCount, perCount*n, MaxRuns)
		}
	}
	if c.Driver != "kube" {
		return nil
	}
	if e.Workload != "" {
		if _, _, err := ParseWorkload(e.Workload); err != nil {
			return doc.Errorf("kube.engines.workload", "%v", err)
		}
	}
	if e.Settle < 0 || e.Settle > time.Hour {
		return doc.Errorf("kube.engines.settle", "must be between 0 (the default, %s) and 1h", DefaultSettle)
	}
	if e.ReadyTimeout < 0 || e.ReadyTimeout > time.Hour {
		return doc.Errorf("kube.engines.ready_timeout", "must be between 0 (the default, %s) and 1h", DefaultReadyTimeout)
	}
	if len(counts) > 0 && (e.Selector == "" || e.Service == "") {
		return doc.Errorf("kube.engines.replicas", "needs kube.engines.selector and kube.engines.service: tokex waits for each count's Pods to be Ready and behind the Service")
	}
	return nil
}
