package kube

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/k6"
	"github.com/tokex-dev/tokex/runner/local"
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
  exec: { scenario: { name: 'measured', startTime: Date.now() - 3, _begun: 0, get iterationInInstance() { return this._begun++; } },
    vu: { idInTest: 7 } },
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
// for n iterations of the agent, with the Job's environment.
func runAgentScript(t *testing.T, o *Objects, n, agent int) ([]shimRequest, []string) {
	t.Helper()
	return runAgentScriptFor(t, o, event.PlannedRun{ID: "01-r1-500rps", Index: 1, TargetRPS: 500, Warmup: 30 * time.Second, Duration: 5 * time.Minute, Agents: 10}, n, agent)
}

// runAgentScriptFor is runAgentScript for the Job of run p.
func runAgentScriptFor(t *testing.T, o *Objects, p event.PlannedRun, n, agent int) ([]shimRequest, []string) {
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
	job, err := o.JobObject(p)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENT_INDEX": strconv.Itoa(agent)}
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	sec, _ := o.SecretObject()
	env["CLIENT_SECRET"], env["SUBJECT_JWK"] = sec.StringData["client-secret"], sec.StringData["subject-jwk"]
	if a, ok := sec.StringData["actor-jwk"]; ok {
		env["ACTOR_JWK"] = a
	}
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
	for _, alg := range []string{jose.RS256, jose.ES256} {
		t.Run(alg, func(t *testing.T) {
			o := testObjects(t)
			key, err := jose.GenerateKey(alg)
			if err != nil {
				t.Fatal(err)
			}
			o.Key, o.Cfg.Subject.Alg = key, alg
			reqs, logs := runAgentScript(t, o, 3, 3)
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
				if !ok || err != nil || l.MintUS < 0 || l.StartLagUS < -1000 || l.SendLagUS < l.StartLagUS+l.MintUS-1000 || l.Outcome != "ok" || // ±1 ms clocks
					l.Began != int64(i) {
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

// captured is one request as a server received it.
type captured struct {
	method, path string
	header       http.Header
	body         string
}

// localRequest sends one exchange with tokex's local driver, configured by
// c, to a capturing server and returns what arrived.
func localRequest(t *testing.T, c config.Campaign, secret string, key *jose.Key) captured {
	t.Helper()
	return localRequests(t, c, event.PlannedRun{ID: "r", TargetRPS: 1, Duration: 500 * time.Millisecond, Agents: 1}, secret, key, nil, 1)[0]
}

// localRequests runs run p (one arrival) with tokex's local driver against
// a capturing server and returns the n requests that arrived.
func localRequests(t *testing.T, c config.Campaign, p event.PlannedRun, secret string, key, actorKey *jose.Key, n int) []captured {
	t.Helper()
	got := make(chan captured, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- captured{r.Method, r.URL.Path, r.Header.Clone(), string(b)}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"a","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"N_A"}`)
	}))
	defer srv.Close()
	c.Target.URL = srv.URL + "/as/token.oauth2"
	c.Agents.Count = 1
	d := &local.Driver{Cfg: c, CampaignID: "cmp", Secret: secret, SubjectKey: key, ActorKey: actorKey}
	out := &recorder{}
	ctx := context.Background()
	if err := d.Start(ctx, out); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Run(ctx, p, out); err != nil {
		t.Fatal(err)
	}
	var reqs []captured
	for range n {
		select {
		case r := <-got:
			reqs = append(reqs, r)
		default:
			t.Fatalf("the local driver sent %d requests, want %d: %s", len(reqs), n, out.logs())
		}
	}
	return reqs
}

// TestBothDriversSendTheSameRequest compares, for the same config, the
// request tokex's local driver sends (captured at a server) with the one the
// k6 agent script builds (run under node): method, URL, headers, the form
// byte for byte but for the subject token, and the token's header and
// claims. Secrets with characters that form- and URI-encoding treat apart.
func TestBothDriversSendTheSameRequest(t *testing.T) {
	const secret = "s3cr!t (x)*'~ é+&=/"
	cases := []struct {
		name string
		edit func(*config.Campaign)
	}{
		{"client_secret_basic", func(c *config.Campaign) {}},
		{"client_secret_post, jwt, two resources, audience, extra, 2.5 s timeout", func(c *config.Campaign) {
			c.Request.AuthMethod = string(exchange.AuthPost)
			c.Request.RequestedTokenType = exchange.TokenTypeJWT
			c.Request.Resources = append(c.Request.Resources, "https://b.example/api?x=1&y=2")
			c.Request.Audiences = []string{"urn:example:aud"}
			c.Request.Extra = map[string]string{"connector_id": "tokex (local)"}
			c.Request.Timeout = 2500 * time.Millisecond
		}},
	}
	for _, alg := range []string{jose.RS256, jose.ES256} {
		for _, tc := range cases {
			t.Run(alg+" "+tc.name, func(t *testing.T) {
				o := testObjects(t)
				key, err := jose.GenerateKey(alg)
				if err != nil {
					t.Fatal(err)
				}
				o.Key, o.Secret = key, secret
				o.Cfg.Subject.Alg, o.Cfg.Target.Embedded.SigningAlg = alg, alg
				tc.edit(&o.Cfg)
				loc := localRequest(t, o.Cfg, secret, key)
				reqs, _ := runAgentScript(t, o, 1, 0) // the local driver's single agent
				if len(reqs) != 1 {
					t.Fatalf("%d k6 requests", len(reqs))
				}
				k := reqs[0]
				if k.Method != loc.method || !strings.HasSuffix(k.URL, "/as/token.oauth2") || loc.path != "/as/token.oauth2" {
					t.Errorf("k6 %s %s, local %s %s", k.Method, k.URL, loc.method, loc.path)
				}
				for _, h := range []string{"Content-Type", "Accept", "Authorization"} {
					if kv, lv := k.Params.Headers[h], loc.header.Get(h); kv != lv {
						t.Errorf("%s: k6 %q, local %q", h, kv, lv)
					}
				}
				for h := range k.Params.Headers {
					if loc.header.Get(h) == "" {
						t.Errorf("k6 sends %s, the local driver does not", h)
					}
				}
				kTok, kForm := cutToken(t, k.Body)
				lTok, lForm := cutToken(t, loc.body)
				if kForm != lForm {
					t.Errorf("forms differ:\n k6    %s\n local %s", kForm, lForm)
				}
				kp, lp := strings.Split(kTok, "."), strings.Split(lTok, ".")
				if len(kp) != 3 || len(lp) != 3 || kp[0] != lp[0] {
					t.Errorf("token headers differ: %q vs %q", kp[0], lp[0])
				}
				if kc, lc := claimKeys(t, kp[1]), claimKeys(t, lp[1]); kc != lc {
					t.Errorf("claims differ: k6 %s, local %s", kc, lc)
				}
				if want := k6Duration(o.Cfg.Request.Timeout); k.Params.Timeout != want || k.Params.Redirects == nil || *k.Params.Redirects != 0 {
					t.Errorf("k6 timeout %q (want %q), redirects %v", k.Params.Timeout, want, k.Params.Redirects)
				}
			})
		}
	}
}

// cutToken returns a form's subject token and the form with it blanked.
func cutToken(t *testing.T, form string) (string, string) {
	t.Helper()
	tok, rest, ok := cutField(t, form, "subject_token")
	if !ok {
		t.Fatalf("no subject_token in %q", form)
	}
	return tok, rest
}

// cutField returns a form's field (the first after a '&' or at the start)
// and the form with it blanked.
func cutField(t *testing.T, form, name string) (string, string, bool) {
	t.Helper()
	i := -1
	for _, at := range []string{"&" + name + "=", name + "="} {
		if j := strings.Index(form, at); j >= 0 && (at[0] == '&' || j == 0) {
			i = j + len(at) - len(name) - 1
			break
		}
	}
	if i < 0 {
		return "", form, false
	}
	j := strings.IndexByte(form[i:], '&')
	if j < 0 {
		j = len(form) - i
	}
	tok, err := url.QueryUnescape(form[i+len(name)+1 : i+j])
	if err != nil {
		t.Fatal(err)
	}
	return tok, form[:i] + name + "=…" + form[i+j:], true
}

// claimKeys renders a token's claims with the values that must agree
// (issuer, audience, lifetime) and the names of the rest, in order.
func claimKeys(t *testing.T, seg string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Iss, Aud string
		Iat, Exp int64
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	var names []string
	dec := json.NewDecoder(strings.NewReader(string(b)))
	_, _ = dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		names = append(names, k.(string))
		var skip json.RawMessage
		_ = dec.Decode(&skip)
	}
	return fmt.Sprintf("%s iss=%s aud=%s lifetime=%d", strings.Join(names, ","), c.Iss, c.Aud, c.Exp-c.Iat)
}

// TestBothDriversSendTheSameChain (issue 30 item 5): a delegation chain of
// 3 with minted actor tokens, a chain of 2 with client_secret_post, and the
// baseline runs of client_credentials and jwt_bearer: the local driver and
// the k6 script send each hop's request as the same client, with the same
// headers and the same form byte for byte but for the user's token and the
// actor token (fresh jti and iat), whose claims agree; a later hop's
// subject token is the token the hop before was issued.
func TestBothDriversSendTheSameChain(t *testing.T) {
	const secret = "s3cr!t (x)*'~ é+&=/"
	plan := event.PlannedRun{ID: "01-r1-1rps", Index: 1, TargetRPS: 1, Duration: 500 * time.Millisecond, Agents: 1}
	cases := []struct {
		name  string
		edit  func(*config.Campaign)
		p     func(event.PlannedRun) event.PlannedRun
		hops  int
		token string // the field of the user's token
	}{
		{"chain of 3, minted actor tokens", func(c *config.Campaign) {
			c.Workload.Chain, c.Subject.Actor = 3, config.Actor{Source: config.ActorMinted}
		}, func(p event.PlannedRun) event.PlannedRun { p.Chain = 3; return p }, 3, "subject_token"},
		{"chain of 2, client_secret_post, named services", func(c *config.Campaign) {
			c.Workload.Chain, c.Request.AuthMethod = 2, string(exchange.AuthPost)
			c.Workload.Hops = []config.Hop{{ClientID: "svc-b", Audience: "https://b.example/"}}
		}, func(p event.PlannedRun) event.PlannedRun { p.Chain = 2; return p }, 2, "subject_token"},
		{"client_credentials baseline", func(c *config.Campaign) { c.Workload.Baseline = "client_credentials" },
			func(p event.PlannedRun) event.PlannedRun { p.Grant = exchange.GrantClientCredentials; return p }, 1, ""},
		{"jwt_bearer baseline", func(c *config.Campaign) {
			// Each driver targets its own URL here: name the assertions' audience.
			c.Workload.Baseline, c.Request.ClientAssertion.Audience = "jwt_bearer", "https://as.example/as/token.oauth2"
		},
			func(p event.PlannedRun) event.PlannedRun { p.Grant = exchange.GrantJWTBearer; return p }, 1, "assertion"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := testObjects(t)
			key, err := jose.GenerateKey(jose.ES256)
			if err != nil {
				t.Fatal(err)
			}
			actor, _ := jose.GenerateKey(jose.ES256)
			o.Key, o.Secret, o.ActorKey = key, secret, actor
			o.Cfg.Subject.Alg, o.Cfg.Target.Embedded.SigningAlg = jose.ES256, jose.ES256
			tc.edit(&o.Cfg)
			if err := o.Cfg.Validate(nil); err != nil {
				t.Fatal(err)
			}
			p := tc.p(plan)
			loc := localRequests(t, o.Cfg, p, secret, key, actor, tc.hops)
			// The script's Job targets the local driver's capture URL's path.
			reqs, logs := runAgentScriptFor(t, o, p, 1, 0)
			if len(reqs) != tc.hops || len(logs) != tc.hops {
				t.Fatalf("k6 sent %d requests and printed %d lines, want %d", len(reqs), len(logs), tc.hops)
			}
			for k := range tc.hops {
				sameRequest(t, k+1, reqs[k], loc[k], tc.token)
				l, ok, err := k6.ParseLine(logs[k])
				wantHop := 0
				if tc.hops > 1 {
					wantHop = k + 1
				}
				if !ok || err != nil || l.Hop != wantHop || l.Kind != p.Grant || l.TokenBytes != 1 || l.Outcome != "ok" {
					t.Errorf("hop %d: line %q: %+v %v", k+1, logs[k], l, err)
				}
			}
		})
	}
}

// sameRequest compares hop's request as k6 and the local driver sent it.
func sameRequest(t *testing.T, hop int, k shimRequest, loc captured, tokenField string) {
	t.Helper()
	if k.Method != loc.method || !strings.HasSuffix(k.URL, "/as/token.oauth2") || loc.path != "/as/token.oauth2" {
		t.Errorf("hop %d: k6 %s %s, local %s %s", hop, k.Method, k.URL, loc.method, loc.path)
	}
	for _, h := range []string{"Content-Type", "Accept", "Authorization"} {
		if kv, lv := k.Params.Headers[h], loc.header.Get(h); kv != lv {
			t.Errorf("hop %d: %s: k6 %q, local %q", hop, h, kv, lv)
		}
	}
	kForm, lForm := k.Body, loc.body
	var kTok, lTok string
	if hop == 1 && tokenField != "" {
		kTok, kForm, _ = cutField(t, kForm, tokenField)
		lTok, lForm, _ = cutField(t, lForm, tokenField)
		if kc, lc := claimKeys(t, strings.Split(kTok, ".")[1]), claimKeys(t, strings.Split(lTok, ".")[1]); kc != lc {
			t.Errorf("hop %d: %s claims differ: k6 %s, local %s", hop, tokenField, kc, lc)
		}
	}
	if tok, _, _ := cutField(t, lForm, "subject_token"); hop > 1 && tok != "a" {
		t.Errorf("hop %d: subject_token %q, not the token hop %d was issued", hop, tok, hop-1)
	}
	kAct, kForm, kHas := cutField(t, kForm, "actor_token")
	lAct, lForm, lHas := cutField(t, lForm, "actor_token")
	if kHas != lHas {
		t.Errorf("hop %d: actor_token sent by k6 %v, by the local driver %v", hop, kHas, lHas)
	}
	if kHas && lHas {
		kp, lp := strings.Split(kAct, "."), strings.Split(lAct, ".")
		if len(kp) != 3 || len(lp) != 3 || kp[0] != lp[0] || claimKeys(t, kp[1]) != claimKeys(t, lp[1]) {
			t.Errorf("hop %d: actor tokens differ: k6 %s.%s, local %s.%s", hop, kp[0], kp[1], lp[0], lp[1])
		}
	}
	if kForm != lForm {
		t.Errorf("hop %d: forms differ:\n k6    %s\n local %s", hop, kForm, lForm)
	}
}

// TestScriptDrawsTheMixAsTokex: the agent script's mixHash is
// exchange.MixHash (node runs the function from the generated script).
func TestScriptDrawsTheMixAsTokex(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	js, err := k6.Script(k6.ScriptParams{})
	if err != nil {
		t.Fatal(err)
	}
	i, j := strings.Index(js, "// mixHash:begin"), strings.Index(js, "// mixHash:end")
	if i < 0 || j < i {
		t.Fatal("the script has no mixHash block")
	}
	type arrival struct {
		Seed  uint32
		Agent int
		Seq   int64
	}
	var in []arrival
	for _, seed := range []uint32{0, 1, 12345, 0xffffffff} {
		for _, agent := range []int{0, 7, 999} {
			for _, seq := range []int64{0, 1, 4095, 1 << 31, 1<<32 + 5, 1<<52 + 3} {
				in = append(in, arrival{seed, agent, seq})
			}
		}
	}
	b, _ := json.Marshal(in)
	prog := js[i:j] + "\nconst out = JSON.parse(process.argv[1]).map((a) => mixHash(a.Seed, a.Agent, a.Seq));\nprocess.stdout.write(JSON.stringify(out));\n"
	out, err := exec.Command(node, "-e", prog, string(b)).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []uint32
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(in) {
		t.Fatalf("%v: %s", err, out)
	}
	for n, a := range in {
		if want := exchange.MixHash(a.Seed, a.Agent, a.Seq); got[n] != want {
			t.Errorf("mixHash(%d, %d, %d): script %d, tokex %d", a.Seed, a.Agent, a.Seq, got[n], want)
		}
	}
}
