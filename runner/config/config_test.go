package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/internal/jose"
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
		{"auth method", "request:\n  auth_method: client_secret_jwt\n", []string{"campaign.yaml:2", "request.auth_method", "private_key_jwt, tls_client_auth"}},
		{"auth method on kube", "driver: kube\ntarget:\n  url: https://as/t\nrequest:\n  auth_method: private_key_jwt\n",
			[]string{"campaign.yaml:5", "request.auth_method", "the k6 agents authenticate with a client secret"}},
		{"assertion lifetime", "request:\n  auth_method: private_key_jwt\n  client_assertion:\n    lifetime: 2h\n",
			[]string{"campaign.yaml:4", "request.client_assertion.lifetime", "between 1s and 1h"}},
		{"tls_client_auth without TLS", "target:\n  url: http://127.0.0.1:9/t\nrequest:\n  auth_method: tls_client_auth\n",
			[]string{"campaign.yaml:4", "request.auth_method", "tls_client_auth needs TLS"}},
		{"client cert without key", "agents:\n  client_cert:\n    cert_file: c.pem\n", []string{"campaign.yaml:2", "agents.client_cert", "together"}},
		{"client key alg", "agents:\n  client_key:\n    alg: HS256\n", []string{"campaign.yaml:3", "agents.client_key.alg", `"HS256"`}},
		{"premint with private_key_jwt", "request:\n  auth_method: private_key_jwt\nsubject:\n  premint: true\n",
			[]string{"campaign.yaml:4", "subject.premint", "signed as the run goes"}},
		{"yaml syntax", "stages: [100\n", []string{"campaign.yaml"}},
		{"unreachable too short", "target:\n  unreachable_after: 100ms\n", []string{"campaign.yaml:2", "target.unreachable_after", "between 1s and 1h"}},
		{"unreachable too long", "target:\n  unreachable_after: 2h\n", []string{"campaign.yaml:2", "target.unreachable_after"}},
		{"allowed warning", "thresholds:\n  allow_warnings:\n    - generator_late\n    - dropped_arrivals\n",
			[]string{"campaign.yaml:4", "thresholds.allow_warnings[1]", `"dropped_arrivals" is not a warning that fails the verdict`}},
		{"negative pid", "target:\n  url: http://127.0.0.1:9/t\n  pid: -4\n", []string{"campaign.yaml:3", "target.pid", "not a process id"}},
		{"relative cgroup", "target:\n  url: http://127.0.0.1:9/t\n  cgroup: system.slice/as.service\n", []string{"campaign.yaml:3", "target.cgroup", "absolute"}},
		{"metrics url", "target:\n  url: http://127.0.0.1:9/t\n  metrics_url: 127.0.0.1:9090/metrics\n", []string{"campaign.yaml:3", "target.metrics_url", "http(s) URL"}},
		{"pid and metrics", "target:\n  url: http://127.0.0.1:9/t\n  pid: 42\n  metrics_url: http://127.0.0.1:9090/metrics\n", []string{"campaign.yaml:4", "target.metrics_url", "only one of target.pid, target.metrics_url", "twice"}},
		{"prometheus url", "target:\n  prometheus: prom:9090\n", []string{"campaign.yaml:2", "target.prometheus", "http(s) URL of a Prometheus server"}},
		{"prometheus without series, local", "target:\n  prometheus: http://127.0.0.1:9090\n", []string{"target.prometheus_cpu", "is required", "process_cpu_seconds_total"}},
		{"prometheus series not a selector", "target:\n  prometheus: http://127.0.0.1:9090\n  prometheus_cpu: rate(process_cpu_seconds_total[5m])\n",
			[]string{"campaign.yaml:3", "target.prometheus_cpu", "series selector", "the end of the selector"}},
		{"prometheus series without a server", "target:\n  prometheus_cpu: process_cpu_seconds_total\n", []string{"target.prometheus_cpu", "needs target.prometheus"}},
		{"prometheus memory without cpu", "driver: kube\nkube:\n  engines:\n    selector: app=as\n    prometheus: http://p:9090\ntarget:\n  url: https://as/t\n  prometheus_memory: m\n",
			[]string{"target.prometheus_memory", "needs target.prometheus_cpu"}},
		{"kube prometheus on the local driver", "kube:\n  engines:\n    prometheus: http://p:9090\n", []string{"kube.engines.prometheus", "applies to the kube driver"}},
		{"pid of the embedded", "target:\n  pid: 42\n", []string{"campaign.yaml:2", "target.pid", "target.url only"}},
		{"claim tokex sets", "subject:\n  claims:\n    sub: x\n", []string{"campaign.yaml:2", "subject.claims", `claim "sub" is set by tokex`}},
		{"unknown placeholder", "subject:\n  claims:\n    email: '{{mail}}'\n", []string{"campaign.yaml:2", "subject.claims", "unknown placeholder {{mail}}"}},
		{"typ control", "subject:\n  typ: \"a\\nb\"\n", []string{"campaign.yaml:2", "subject.typ", "control characters"}},
		{"extra form field tokex sends", "request:\n  extra:\n    grant_type: password\n", []string{"campaign.yaml:3", "request.extra.grant_type", "tokex sends grant_type itself"}},
		{"kube subject claims", "driver: kube\ntarget:\n  url: https://as/t\nsubject:\n  claims:\n    email: x\n", []string{"campaign.yaml:5", "subject.claims", "the k6 agents mint the article's subject token"}},
		{"http unknown", "target:\n  http: \"3\"\n", []string{"campaign.yaml:2", "target.http", `unknown protocol "3" (1.1, 2, h2c)`}},
		{"h2c over TLS", "target:\n  url: https://as/t\n  http: h2c\n", []string{"campaign.yaml:3", "target.http", "h2c is HTTP/2 without TLS"}},
		{"h2 without TLS", "target:\n  url: http://as/t\n  http: \"2\"\n", []string{"campaign.yaml:3", "target.http", "needs an https target"}},
		{"h2c embedded with TLS", "target:\n  http: h2c\n", []string{"campaign.yaml:2", "target.http", "target.embedded.tls: false"}},
		{"http2 false and http 2", "target:\n  url: https://as/t\n  http2: false\n  http: \"2\"\n", []string{"campaign.yaml:4", "target.http", "contradicts"}},
		{"kube per request", "driver: kube\ntarget:\n  url: https://as/t\n  keep_alive: false\n", []string{"campaign.yaml:4", "target.keep_alive", "keep connections alive"}},
		{"verify sample", "check:\n  verify:\n    sample: 2\n", []string{"campaign.yaml:3", "check.verify.sample", "between 0 (off) and 1"}},
		{"verify metadata url", "check:\n  verify:\n    metadata_url: /x\n", []string{"campaign.yaml:3", "check.verify.metadata_url", "http(s) URL"}},
		{"verify lifetime", "check:\n  verify:\n    lifetime: -1s\n", []string{"campaign.yaml:3", "check.verify.lifetime"}},
		{"kube check", "driver: kube\ntarget:\n  url: https://as/t\ncheck:\n  token_type: DPoP\n", []string{"campaign.yaml:4", "check", "the k6 agents check the article's response"}},
		{"kube premint", "driver: kube\ntarget:\n  url: https://as/t\nsubject:\n  premint: true\n", []string{"campaign.yaml:5", "subject.premint", "pre-minting is the local driver's"}},
		{"token type", "request:\n  subject_token_type: idtoken\n", []string{"campaign.yaml:2", "request.subject_token_type", "neither access_token, jwt, id_token, refresh_token nor a token type URI"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantErrors(t, tc.body, tc.want) })
	}
}

func TestRedactedHidesSecrets(t *testing.T) {
	c := Article()
	c.Agents.ClientSecret = "hunter2-very-secret"
	c.Request.Extra = map[string]string{"connector_id": "mock", "upstream_secret": "also-secret"}
	c.Target.URL, c.Target.MetricsURL = "https://as.example/token", "https://scraper:pa55word@as.example:9090/metrics?token=t0ken"
	c.Target.Prometheus, c.Target.PrometheusCPU = "https://grafana:pr0mpass@prom.example:9090", `process_cpu_seconds_total{job="as"}`
	y, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	s := string(y)
	if strings.Contains(s, "hunter2") || strings.Contains(s, "also-secret") || strings.Contains(s, "pa55word") || strings.Contains(s, "t0ken") || strings.Contains(s, "pr0mpass") {
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

// A campaign tokex wrote back (config.yaml of the evidence, the kube e2e's
// campaign file) keeps the default success check: an unset check.required
// must not come back as "required: []", which requires nothing locally and
// which a kube campaign refuses.
func TestRedactedKeepsTheDefaultCheck(t *testing.T) {
	for _, driver := range []string{"local", "kube"} {
		c := Article()
		c.Driver = driver
		if driver == "kube" {
			c.Target.URL = "https://pf-engine:9031/as/token.oauth2"
		}
		y, err := c.Redacted()
		if err != nil {
			t.Fatal(err)
		}
		back, doc, err := Load(write(t, string(y)), "")
		if err != nil {
			t.Fatal(err)
		}
		if err := back.Validate(doc); err != nil {
			t.Errorf("%s: %v", driver, err)
		}
		if back.Check.Required != nil {
			t.Errorf("%s: check.required came back as %q", driver, back.Check.Required)
		}
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

// Issue 12: the request and the subject token take their shape from the
// config, the command line's NAME=VALUE flags, and short token type names.
func TestRequestAndSubjectShape(t *testing.T) {
	c, doc, err := Load(write(t, `request:
  subject_token_type: id_token
  extra:
    connector_id: tokex
subject:
  audience: https://dex.example
  typ: JWT
  claims:
    email: "{{user}}@example.com"
    groups: [perf, admins]
`), "quick")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetClaim(`tenant={"id":7}`); err != nil {
		t.Fatal(err)
	}
	if err := c.SetClaim(`email_verified=true`); err != nil {
		t.Fatal(err)
	}
	if err := c.SetFormField("x=1=2"); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(doc); err != nil {
		t.Fatal(err)
	}
	if c.SetClaim("novalue") == nil || c.SetFormField("=x") == nil {
		t.Error("accepted a flag without NAME=VALUE")
	}
	form := c.Request.Template().Compile().Fixed()
	for _, want := range []string{"subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aid_token", "connector_id=tokex", "x=1%3D2"} {
		if !strings.Contains(form, want) {
			t.Errorf("form %s lacks %s", form, want)
		}
	}
	sh := c.Subject.Shape()
	if sh.Audience != "https://dex.example" || sh.Claims["tenant"].(map[string]any)["id"] != 7.0 || sh.Claims["email_verified"] != true ||
		len(sh.Claims["groups"].([]any)) != 2 {
		t.Errorf("shape %+v", sh)
	}
	if n := (Users{Count: 2, Prefix: "u-"}).Names(); n[1] != "u-002" {
		t.Errorf("users %v", n)
	}
}

// A key file whose algorithm is not subject.alg is refused at validation
// (issue 24 item 4): the agents would sign with the key's algorithm while
// their Pods are sized for subject.alg. A matching key is valid.
func TestSubjectKeyFileMustMatchAlg(t *testing.T) {
	dir := t.TempDir()
	for _, alg := range []string{jose.RS256, jose.ES256} {
		k, err := jose.GenerateKey(alg)
		if err != nil {
			t.Fatal(err)
		}
		pem, err := k.MarshalPEM()
		if err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(dir, alg+".pem"), pem, 0o600)
	}
	body := func(alg, key string) string {
		return "subject:\n  alg: " + alg + "\n  key_file: " + filepath.Join(dir, key+".pem") + "\n"
	}
	wantErrors(t, body("ES256", "RS256"), []string{"subject.alg", `"ES256", but subject.key_file holds a RS256 key: set subject.alg: RS256`})
	wantErrors(t, body("RS256", "ES256"), []string{"subject.alg", "holds a ES256 key"})
	for _, alg := range []string{"RS256", "ES256"} {
		if err := loadAndValidate(t, body(alg, alg)); err != nil {
			t.Errorf("%s key with alg %s: %v", alg, alg, err)
		}
	}
}

// TestTemplateHasEveryBlock (issue 23): `tokex init` wrote no check:
// block, so a user never learned that check.verify exists. Every
// top-level field of the campaign is a key of the template.
func TestTemplateHasEveryBlock(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(Template), &doc); err != nil {
		t.Fatal(err)
	}
	ct := reflect.TypeOf(Campaign{})
	for i := range ct.NumField() {
		name, _, _ := strings.Cut(ct.Field(i).Tag.Get("yaml"), ",")
		if _, ok := doc[name]; !ok {
			t.Errorf("the template has no %s: block", name)
		}
	}
}
