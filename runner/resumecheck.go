package runner

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/units"
	"github.com/tokex-dev/tokex/runner/config"
)

// Disagreements lists where c, the campaign about to be resumed (the
// folder's config.yaml with the flags given), differs from what the
// folder's manifest.json recorded: the driver, the target, the plan, the
// capacity search. A resume runs what the manifest recorded, so any
// difference is refused, never resolved in the config's favour (issue 25
// item 4: an edited target.url got the user's secret; a bigger capacity
// block replaced the recorded search). search: the resume is a capacity
// search.
func (r *Resumed) Disagreements(c *config.Campaign, search bool) []string {
	m := &r.Manifest
	var out []string
	if kube, was := c.Driver == "kube", strings.HasPrefix(m.Driver, "kube"); kube != was {
		out = append(out, fmt.Sprintf("driver: manifest.json has %q, the config %q", short(m.Driver), c.Driver))
	}
	if d := targetDisagreement(m.Target, c); d != "" {
		out = append(out, d)
	}
	plan := Plan(c)
	var recorded []event.PlannedRun
	for _, run := range m.Runs {
		if !search || !probeID.MatchString(run.ID) {
			recorded = append(recorded, run.Plan)
		}
	}
	if search {
		plan = sanityOnly(plan)
	}
	if d := planDisagreement(recorded, plan); d != "" {
		out = append(out, d)
	}
	if search && m.Search != nil {
		out = append(out, jsonDisagreements("capacity search", *m.Search, SearchSpec(c))...)
	}
	return out
}

// targetDisagreement compares the recorded target with the config's: the
// same URL, or for a server tokex starts itself a loopback one (its port
// changes with each start) or none.
func targetDisagreement(recorded string, c *config.Campaign) string {
	if !c.Embedded() {
		if recorded == c.Target.URL {
			return ""
		}
		if recorded == "" {
			return fmt.Sprintf("target: manifest.json records none (the campaign stopped before it started), the config %s: start a new campaign", c.Target.URL)
		}
		return fmt.Sprintf("target: manifest.json has %s, the config %s", short(recorded), c.Target.URL)
	}
	if recorded == "" || c.Driver != "kube" && loopback(recorded) {
		return ""
	}
	return fmt.Sprintf("target: manifest.json has %s, the config starts tokex's embedded server", short(recorded))
}

func loopback(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	ip := net.ParseIP(p.Hostname())
	return ip != nil && ip.IsLoopback()
}

// planDisagreement says where two plans first differ, "" when equal.
func planDisagreement(recorded, plan []event.PlannedRun) string {
	for i := range max(len(recorded), len(plan)) {
		switch {
		case i >= len(recorded):
			return fmt.Sprintf("plan: manifest.json has %s, the config plans %d more from %s", units.Count(len(recorded), "run"), len(plan)-i, describeRun(plan[i]))
		case i >= len(plan):
			return fmt.Sprintf("plan: manifest.json has %s from %s on, the config plans %d", units.Count(len(recorded), "run"), describeRun(recorded[i]), len(plan))
		case recorded[i] != plan[i]:
			return fmt.Sprintf("plan: run %d is %s in manifest.json, %s in the config", i, describeRun(recorded[i]), describeRun(plan[i]))
		}
	}
	return ""
}

func describeRun(p event.PlannedRun) string {
	return fmt.Sprintf("%s (%g/s, warmup %s, %s, %d agents)", p.ID, p.TargetRPS, p.Warmup, p.Duration, p.Agents)
}

// jsonDisagreements compares two values field by field as JSON, naming
// each field that differs.
func jsonDisagreements(what string, recorded, now any) []string {
	a, b := flatJSON(recorded), flatJSON(now)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(union(a, b))) {
		if a[k] != b[k] {
			out = append(out, fmt.Sprintf("%s %s: manifest.json has %s, the config %s", what, short(k), short(orNone(a[k])), orNone(b[k])))
		}
	}
	return out
}

func union(a, b map[string]string) map[string]bool {
	u := map[string]bool{}
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// flatJSON is v's JSON leaves by dotted path.
func flatJSON(v any) map[string]string {
	b, _ := json.Marshal(v)
	var tree any
	_ = json.Unmarshal(b, &tree)
	out := map[string]string{}
	var walk func(prefix string, x any)
	walk = func(prefix string, x any) {
		if o, ok := x.(map[string]any); ok {
			for k, y := range o {
				walk(strings.TrimPrefix(prefix+"."+k, "."), y)
			}
			return
		}
		leaf, _ := json.Marshal(x)
		out[prefix] = string(leaf)
	}
	walk("", tree)
	return out
}

// short cuts what a manifest recorded (it may be hostile) for a message.
func short(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// Reach says where a resumed campaign sends the agents' credentials and
// what it runs to get there, for the user to see before anything is sent
// (secretSource: where the secret or keys come from; engine: the embedded
// server's program when one was named, by flag, environment or config).
func Reach(c *config.Campaign, secretSource, engine string) string {
	how := c.Request.AuthMethod
	if how == "" {
		how = "client_secret_basic"
	}
	creds := fmt.Sprintf("the agents' credentials (%s)", how)
	if secretSource != "" {
		creds = fmt.Sprintf("the agents' credentials (%s, %s)", how, secretSource)
	}
	switch {
	case c.Driver == "kube":
		where := c.Target.URL
		if c.Embedded() {
			where = "the engines it deploys"
		}
		return fmt.Sprintf("%s go to the Kubernetes cluster of your kubeconfig as a Secret (namespace %q), to k6 Pods of image %s that send them to %s",
			creds, c.Kube.Namespace, c.Kube.Image, where)
	case c.Embedded():
		prog := "tokex-engine, found as for a new campaign"
		if engine != "" {
			prog = "the program " + engine
		}
		return fmt.Sprintf("%s go to the embedded server it starts on this machine: %s", creds, prog)
	}
	return fmt.Sprintf("%s go to %s", creds, c.Target.URL)
}
