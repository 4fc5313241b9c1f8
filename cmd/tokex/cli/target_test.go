package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/authserver"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/subject"
)

// Issue 12: `tokex jwks` publishes one stored key per algorithm, or the
// one asked for.
func TestJWKSStoredKeyPerAlgorithm(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	var all, es, errb bytes.Buffer
	if Main([]string{"jwks"}, &all, &errb) != 0 || Main([]string{"jwks", "--subject-alg", "ES256", "--kid", "tokex-es"}, &es, &errb) != 0 {
		t.Fatal(errb.String())
	}
	var set struct{ Keys []map[string]any }
	if json.Unmarshal(all.Bytes(), &set) != nil || len(set.Keys) != 3 || set.Keys[0]["alg"] != "RS256" || set.Keys[1]["alg"] != "ES256" || set.Keys[2]["alg"] != "EdDSA" {
		t.Errorf("jwks: %s", all.String())
	}
	esKid := set.Keys[1]["kid"]
	if json.Unmarshal(es.Bytes(), &set) != nil || len(set.Keys) != 1 || set.Keys[0]["kid"] != "tokex-es" || esKid == "tokex-es" {
		t.Errorf("jwks --subject-alg ES256 --kid tokex-es: %s", es.String())
	}
}

// Issue 12: `tokex jwks --serve` is a minimal OIDC issuer and prints the
// exact subject.issuer to use.
func TestJWKSServeIsAnIssuer(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	root := NewRoot()
	root.SetArgs([]string{"jwks", "--serve", "127.0.0.1:0", "--subject-alg", "ES256"})
	root.SetOut(pw)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); pw.Close() }()
	var out bytes.Buffer
	buf := make([]byte, 4096)
	issuerLine := regexp.MustCompile(`subject\.issuer  (http://127\.0\.0\.1:\d+)\n`)
	for !strings.Contains(out.String(), "configure the server") {
		n, err := pr.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := issuerLine.FindStringSubmatch(out.String())
	if m == nil || !strings.Contains(out.String(), "keys            ES256 kid ") {
		t.Fatalf("output:\n%s", out.String())
	}
	resp, err := http.Get(m[1] + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	var d subject.Discovery
	_ = json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if d.Issuer != m[1] || d.JWKSURI != m[1]+"/jwks.json" || strings.Join(d.IDTokenSigningAlgValuesSupported, ",") != "ES256" {
		t.Errorf("discovery %+v", d)
	}
	// Issue 30: the actor issuer beside it, with the stored actor key.
	actor, _, _ := subject.StoredActorKey(jose.ES256)
	if !strings.Contains(out.String(), "actor issuer    "+m[1]+"/actors (jwks_uri "+m[1]+"/actors/jwks.json; keys ES256 kid "+actor.Kid+")") {
		t.Errorf("output:\n%s", out.String())
	}
	resp, err = http.Get(m[1] + "/actors/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	d = subject.Discovery{}
	_ = json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if d.Issuer != m[1]+"/actors" || d.JWKSURI != m[1]+"/actors/jwks.json" {
		t.Errorf("actor discovery %+v", d)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("jwks --serve did not stop")
	}
}

// Issue 12: against an external target, --subject-alg ES256 uses the stored
// ES256 key (it used to fail: "the stored default key is RS256"); the run
// says where the client secret came from, and a refused secret says what to
// check.
func TestRunAgainstExternalTarget(t *testing.T) {
	home := t.TempDir()
	t.Setenv("TOKEX_HOME", home)
	keys, err := subject.StoredKeys()
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := jose.JWKS(keys...)
	cfg := authserver.Default()
	cfg.Subject.Issuer = "http://127.0.0.1:5551"
	srv, err := authserver.New(context.Background(), cfg, authserver.Options{ClientSecret: "target-secret-1234", SubjectJWKS: jwks})
	if err != nil {
		t.Fatal(err)
	}
	// h2c and HTTP/1.1 without TLS; every exchange's protocol counted.
	var h1, h2 atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			h2.Add(1)
		} else {
			h1.Add(1)
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	ts.Config.Protocols = &p
	ts.Start()
	defer ts.Close()
	srv.SetBaseURL(ts.URL)
	args := []string{"run", "--config", lenientConfig(t), "--target", ts.URL + "/as/token.oauth2", "--subject-alg", "ES256", "--subject-issuer", "http://127.0.0.1:5551",
		"--stages", "10", "--rounds", "1", "--duration", "1s", "--warmup", "0s", "--agents", "2", "--no-tui", "--idle", "0s",
		"--allow-warning", "generator_late,generator_starved,host_saturated"}
	var out, errb bytes.Buffer
	t.Setenv("TOKEX_CLIENT_SECRET", "target-secret-1234")
	if code := Main(append(args, "--out", t.TempDir(), "--http", "h2c", "--new-connection-per-request"), &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "note: client authentication: client_secret_basic perf-agent-0..1, secret from TOKEX_CLIENT_SECRET") ||
		!strings.Contains(out.String(), "note: HTTP: h2c (HTTP/2 without TLS), a new connection per request") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if h2.Load() < 10 || h1.Load() != 0 {
		t.Errorf("--http h2c: %d HTTP/2 and %d HTTP/1 requests", h2.Load(), h1.Load())
	}
	t.Setenv("TOKEX_CLIENT_SECRET", "")
	out.Reset()
	code := Main(append(args, "--out", t.TempDir()), &out, &errb)
	for _, want := range []string{"secret from tokex's stored secret (" + home, "oauth_error:invalid_client",
		`"client authentication failed"`, "the server refused the clients' credentials: check that it has the clients perf-agent-0..1"} {
		if !strings.Contains(out.String()+errb.String(), want) {
			t.Errorf("exit %d, output lacks %q:\n%s\n%s", code, want, out.String(), errb.String())
		}
	}
	if code != ExitCannotRun {
		t.Errorf("exit %d", code)
	}
}

// TestServeTrustsStoredActorKeys: tokex serve without a subject JWKS trusts
// the stored actor keys under <subject issuer>/actors (what jwks --serve
// publishes), so an actor token of the stored key nests its agent; a
// configured actor issuer is left as it is.
func TestServeTrustsStoredActorKeys(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	o := &serveOptions{}
	cfg, _, err := o.complete()
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := subject.StoredKeys()
	opt := authserver.Options{ClientSecret: "s3cret-Zq9"}
	opt.SubjectJWKS, _ = jose.JWKS(keys...)
	if err := storedActors(&cfg, &opt); err != nil {
		t.Fatal(err)
	}
	if cfg.Subject.Actor.Issuer != "https://pf-perf-subject/actors" {
		t.Fatalf("actor issuer %q", cfg.Subject.Actor.Issuer)
	}
	srv, err := authserver.New(context.Background(), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetBaseURL("https://tokex.test")
	actorKey, _, _ := subject.StoredActorKey(jose.EdDSA)
	user, _ := (&subject.Minter{Key: keys[0], Issuer: cfg.Subject.Issuer, Lifetime: time.Minute, Users: subject.Users(1)}).Mint("perf-agent-0")
	actor, _ := (&subject.ActorMinter{Key: actorKey, Issuer: cfg.Subject.Actor.Issuer, Lifetime: time.Minute}).Mint("perf-agent-0")
	v := url.Values{"grant_type": {exchange.GrantTypeTokenExchange}, "subject_token": {user}, "subject_token_type": {exchange.TokenTypeJWT},
		"actor_token": {actor}, "actor_token_type": {exchange.TokenTypeJWT}, "resource": {authserver.DefaultResource}}
	req := httptest.NewRequest("POST", "/as/token.oauth2", strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", exchange.BasicAuth("perf-agent-0", "s3cret-Zq9"))
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	cfg.Subject.Actor.Issuer = "https://configured"
	if err := storedActors(&cfg, &opt); err != nil || cfg.Subject.Actor.Issuer != "https://configured" {
		t.Errorf("a configured actor issuer was replaced: %q %v", cfg.Subject.Actor.Issuer, err)
	}
}
