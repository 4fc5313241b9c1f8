package config

import (
	"strings"
	"testing"
)

// TestReplicasValidate (issue 28): engine counts for the driver that has
// them, each once and in bounds, with what a kube campaign needs to wait
// for them; the file's line and field named.
func TestReplicasValidate(t *testing.T) {
	kube := "driver: kube\ntarget: {url: https://e:9031/token}\nkube:\n  engines: {selector: app=e, service: e, port: 9031, "
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"kube", kube + "replicas: [1, 2, 4]}\n", ""},
		{"kube workload", kube + "replicas: [2], workload: statefulset/pf}\n", ""},
		{"local", "target: {embedded: {engines: [1, 2]}}\n", ""},
		{"twice", kube + "replicas: [1, 2, 1]}\n", "kube.engines.replicas[2]: 1 is given twice"},
		{"zero", kube + "replicas: [0]}\n", "kube.engines.replicas[0]: 0 engines: must be between 1 and 1000"},
		{"too many local", "target: {embedded: {engines: [65]}}\n", "target.embedded.engines[0]: 65 engines: must be between 1 and 64"},
		{"kube's on local", "kube: {engines: {replicas: [1, 2]}}\n", "kube.engines.replicas: is the kube driver's"},
		{"local's on kube", "driver: kube\ntarget: {url: https://e:9031/token, embedded: {engines: [1]}}\nkube:\n  engines: {selector: app=e, service: e}\n", "is the local driver's"},
		{"url", "target: {url: http://127.0.0.1:1/t, embedded: {engines: [1, 2]}}\n", "tokex starts engines only for its embedded server"},
		{"workload", kube + "replicas: [1], workload: daemonset/x}\n", "kube.engines.workload: \"daemonset/x\": the kind must be deployment or statefulset"},
		{"no service", "driver: kube\ntarget: {url: https://e:9031/token}\nkube:\n  engines: {selector: app=e, replicas: [1, 2]}\n", "needs kube.engines.selector and kube.engines.service"},
		{"settle", kube + "replicas: [1], settle: -1s}\n", "kube.engines.settle"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, doc, err := Load(write(t, c.yaml), "quick")
			if err == nil {
				err = cfg.Validate(doc)
			}
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestReplicaCountsPlanTime: the estimated wall time counts every count.
func TestReplicaCountsPlanTime(t *testing.T) {
	c := Article()
	one := c.EstimatedDuration()
	c.Driver, c.Kube.Engines.Replicas = "kube", []int{1, 2, 4}
	if got := c.EstimatedDuration(); got != 3*(one+DefaultSettle) {
		t.Errorf("3 counts: %s, one count %s", got, one)
	}
}

// FuzzParseWorkload: kube.engines.workload is a config's (hostile input):
// no panic, and what it accepts is a kind tokex scales and a name that is
// one path element.
func FuzzParseWorkload(f *testing.F) {
	f.Add("deployment/pf-engine")
	f.Fuzz(func(t *testing.T, s string) {
		kind, name, err := ParseWorkload(s)
		if err != nil {
			return
		}
		if kind != "Deployment" && kind != "StatefulSet" || name == "" || strings.ContainsAny(name, "/ \t\r\n") || len(name) > 253 {
			t.Errorf("%q: %q %q", s, kind, name)
		}
	})
}
