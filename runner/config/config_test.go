package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/stats"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "campaign.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTemplateIsTheArticle(t *testing.T) {
	c, doc, err := Load(write(t, Template), "quick")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(doc); err != nil {
		t.Fatal(err)
	}
	if want := Article(); !reflect.DeepEqual(c, want) {
		t.Errorf("template differs from Article():\n got %+v\nwant %+v", c, want)
	}
}

func TestConfigErrorsNameFileLineField(t *testing.T) {
	cases := []struct {
		name string
		body string
		want []string
	}{
		{"unknown field", "name: x\nstagez: [1]\n", []string{"campaign.yaml:2", `unknown field "stagez"`}},
		{"wrong type", "name: x\nrounds: three\n", []string{"campaign.yaml:2", "rounds"}},
		{"bad duration", "warmup: 30 seconds\n", []string{"campaign.yaml:1", "warmup"}},
		{"negative stage", "stages:\n  - 100\n  - -5\n", []string{"campaign.yaml:3", "stages[1]", "must be between 0.01 and 100000"}},
		{"nested", "agents:\n  count: 0\n", []string{"campaign.yaml:2", "agents.count"}},
		{"threshold", "thresholds:\n  success_ratio: 1.5\n", []string{"campaign.yaml:2", "thresholds.success_ratio"}},
		{"target url", "target:\n  url: ftp://x\n", []string{"campaign.yaml:2", "target.url"}},
		{"auth method", "request:\n  auth_method: private_key_jwt\n", []string{"campaign.yaml:2", "request.auth_method"}},
		{"yaml syntax", "stages: [100\n", []string{"campaign.yaml"}},
		{"unreachable too short", "target:\n  unreachable_after: 100ms\n", []string{"campaign.yaml:2", "target.unreachable_after", "between 1s and 1h"}},
		{"unreachable too long", "target:\n  unreachable_after: 2h\n", []string{"campaign.yaml:2", "target.unreachable_after"}},
		{"allowed warning", "thresholds:\n  allow_warnings:\n    - generator_late\n    - dropped_arrivals\n",
			[]string{"campaign.yaml:4", "thresholds.allow_warnings[1]", `"dropped_arrivals" is not a warning that fails the verdict`}},
		{"negative pid", "target:\n  url: http://127.0.0.1:9/t\n  pid: -4\n", []string{"campaign.yaml:3", "target.pid", "not a process id"}},
		{"relative cgroup", "target:\n  url: http://127.0.0.1:9/t\n  cgroup: system.slice/as.service\n", []string{"campaign.yaml:3", "target.cgroup", "absolute"}},
		{"metrics url", "target:\n  url: http://127.0.0.1:9/t\n  metrics_url: 127.0.0.1:9090/metrics\n", []string{"campaign.yaml:3", "target.metrics_url", "http(s) URL"}},
		{"pid and metrics", "target:\n  url: http://127.0.0.1:9/t\n  pid: 42\n  metrics_url: http://127.0.0.1:9090/metrics\n", []string{"campaign.yaml:4", "target.metrics_url", "only one of target.pid, target.metrics_url", "twice"}},
		{"pid of the embedded", "target:\n  pid: 42\n", []string{"campaign.yaml:2", "target.pid", "target.url only"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantErrors(t, tc.body, tc.want) })
	}
}

func TestRedactedHidesSecrets(t *testing.T) {
	c := Article()
	c.Agents.ClientSecret = "hunter2-very-secret"
	c.Request.Extra = map[string]string{"connector_id": "mock", "client_secret": "also-secret"}
	c.Target.URL, c.Target.MetricsURL = "https://as.example/token", "https://scraper:pa55word@as.example:9090/metrics?token=t0ken"
	y, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	s := string(y)
	if strings.Contains(s, "hunter2") || strings.Contains(s, "also-secret") || strings.Contains(s, "pa55word") || strings.Contains(s, "t0ken") {
		t.Errorf("secret in redacted config:\n%s", s)
	}
	if !strings.Contains(s, "connector_id: mock") || !strings.Contains(s, "duration: 5m0s") || !strings.Contains(s, "https://scraper:redacted@as.example:9090/metrics?token=redacted") {
		t.Errorf("redacted config lost fields:\n%s", s)
	}
	// It must load back to the same campaign (resume reads it).
	back, doc, err := Load(write(t, s), "quick")
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(doc); err != nil {
		t.Fatal(err)
	}
	if back.Duration != c.Duration || back.Stages[2] != 500 {
		t.Errorf("round trip: %+v", back)
	}
}

func TestProfiles(t *testing.T) {
	q, err := FromProfile("quick")
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Validate(nil); err != nil {
		t.Fatal(err)
	}
	if d := q.EstimatedDuration(); d.Seconds() > 150 {
		t.Errorf("quick profile takes %s", d)
	}
	if _, err := FromProfile("nope"); err == nil {
		t.Error("unknown profile accepted")
	}
}

func TestAllowWarningsLoads(t *testing.T) {
	c, doc, err := Load(write(t, "thresholds:\n  allow_warnings: [generator_late, host_saturated]\n"), "article")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(doc); err != nil {
		t.Fatal(err)
	}
	if got := c.Thresholds.AllowWarnings; len(got) != 2 || got[0] != stats.WarnGeneratorLate || !c.Thresholds.Allows(stats.WarnHostSaturated) {
		t.Errorf("allow_warnings: %v", got)
	}
}
