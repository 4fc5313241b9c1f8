package kube

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/runner/k6"
	"github.com/tokex-dev/tokex/subject"
)

// k6Shim stands in for the k6 modules the agent script imports, so that
// node runs the generated script itself: http.post records what k6 would
// send and answers as told; encoding is k6's b64encode; exec gives the
// scenario's start and a VU id. node's WebCrypto is the same API k6 offers.
const k6Shim = `
const reqs = [], logs = [];
const answer = JSON.parse(process.env.SHIM_ANSWER);
globalThis.__ENV = JSON.parse(process.env.SHIM_ENV);
globalThis.__k6 = {
  http: { post(url, body, params) {
    reqs.push({ method: 'POST', url, body, params });
    return { status: answer.status, body: answer.body, error_code: 0, timings: { duration: 5.5 },
      json() { return JSON.parse(this.body); } };
  } },
  check() { return true; },
  exec: { scenario: { name: 'measured', startTime: Date.now() - 3, iterationInTest: 0 }, vu: { idInTest: 7 } },
  encoding: { b64encode(input, enc) {
    const b = typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.from(input);
    return b.toString(enc === 'rawurl' ? 'base64url' : 'base64');
  } },
};
console.log = (...a) => logs.push(a.join(' '));
const mod = await import(process.env.SHIM_SCRIPT);
for (let i = 0; i < Number(process.env.SHIM_N); i++) await mod.exchange();
process.stdout.write(JSON.stringify({ reqs, logs }));
`

// shimRequest is one http.post call of the script.
type shimRequest struct {
	Method, URL, Body string
	Params            struct {
		Headers   map[string]string `json:"headers"`
		Timeout   string            `json:"timeout"`
		Redirects *int              `json:"redirects"`
	}
}

// runAgentScript runs the agent script tokex generates for o under node
// for n iterations of agent 3, with the Job's environment.
func runAgentScript(t *testing.T, o *Objects, n int) ([]shimRequest, []string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	cm, err := o.ConfigMapObject()
	if err != nil {
		t.Fatal(err)
	}
	js := cm.Data[scriptKey]
	for mod, shim := range map[string]string{
		"import http from 'k6/http';":         "const http = globalThis.__k6.http;",
		"import { check } from 'k6';":         "const { check } = globalThis.__k6;",
		"import exec from 'k6/execution';":    "const exec = globalThis.__k6.exec;",
		"import encoding from 'k6/encoding';": "const encoding = globalThis.__k6.encoding;",
	} {
		if !strings.Contains(js, mod) {
			t.Fatalf("the script no longer has %q", mod)
		}
		js = strings.Replace(js, mod, shim, 1)
	}
	job, err := o.JobObject(event.PlannedRun{ID: "01-r1-500rps", Index: 1, TargetRPS: 500, Warmup: 30 * time.Second, Duration: 5 * time.Minute, Agents: 10})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENT_INDEX": "3"}
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	sec, _ := o.SecretObject()
	env["CLIENT_SECRET"], env["SUBJECT_JWK"] = sec.StringData["client-secret"], sec.StringData["subject-jwk"]
	dir := t.TempDir()
	script, harness := filepath.Join(dir, "exchange.mjs"), filepath.Join(dir, "harness.mjs")
	_ = os.WriteFile(script, []byte(js), 0o600)
	_ = os.WriteFile(harness, []byte(k6Shim), 0o600)
	envJSON, _ := json.Marshal(env)
	cmd := exec.Command(node, harness)
	cmd.Env = append(os.Environ(), "SHIM_ENV="+string(envJSON), "SHIM_SCRIPT="+script, "SHIM_N="+strconv.Itoa(n),
		`SHIM_ANSWER={"status":200,"body":"{\"access_token\":\"a\",\"issued_token_type\":\"urn:ietf:params:oauth:token-type:access_token\"}"}`)
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("node: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var res struct {
		Reqs []shimRequest
		Logs []string
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return res.Reqs, res.Logs
}

// TestAgentScriptSignsAndSplitsSendLag runs the real script for RS256 and
// ES256 (WebCrypto ECDSA P-256): every subject token verifies with the key
// tokex put in the Secret, and every line says how its send lag splits.
func TestAgentScriptSignsAndSplitsSendLag(t *testing.T) {
	for _, alg := range []string{subject.RS256, subject.ES256} {
		t.Run(alg, func(t *testing.T) {
			o := testObjects(t)
			key, err := subject.GenerateKey(alg)
			if err != nil {
				t.Fatal(err)
			}
			o.Key, o.Cfg.Subject.Alg = key, alg
			reqs, logs := runAgentScript(t, o, 3)
			if len(reqs) != 3 || len(logs) != 3 {
				t.Fatalf("%d requests, %d lines: %q", len(reqs), len(logs), logs)
			}
			for i, r := range reqs {
				form := formValues(t, r.Body)
				tok, err := jwt.Parse(form["subject_token"], func(*jwt.Token) (any, error) { return key.Signer.Public(), nil },
					jwt.WithValidMethods([]string{alg}), jwt.WithAudience("perf-agent-3"), jwt.WithIssuer(o.Cfg.Subject.Issuer))
				if err != nil {
					t.Fatalf("request %d: subject token: %v", i, err)
				}
				if tok.Header["kid"] != key.Kid || tok.Header["typ"] != "JWT" {
					t.Errorf("header %v", tok.Header)
				}
				l, ok, err := k6.ParseLine(logs[i])
				if !ok || err != nil || l.MintUS < 0 || l.StartLagUS < -1000 || l.SendLagUS < l.StartLagUS+l.MintUS-1000 || l.Outcome != "ok" { // ±1 ms clocks
					t.Errorf("line %q: %+v %v", logs[i], l, err)
				}
			}
		})
	}
}

func formValues(t *testing.T, body string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, kv := range strings.Split(body, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := out[k]; dup && k != "resource" && k != "audience" {
			t.Errorf("field %s twice", k)
		}
		out[k] = v
	}
	return out
}
