package authserver

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/subject"
)

const testSecret = "s3cr3t+/=&:é"

type fixture struct {
	srv    *Server
	key    *jose.Key // subject signing key
	minter *subject.Minter
}

func newFixture(t testing.TB, alg string, mutate func(*Config)) *fixture {
	t.Helper()
	key, err := jose.GenerateKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := jose.JWKS(key)
	cfg := Default()
	cfg.Signing.Alg = alg
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := New(context.Background(), cfg, Options{ClientSecret: testSecret, SubjectJWKS: jwks})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetBaseURL("https://tokex.test")
	return &fixture{srv: srv, key: key, minter: &subject.Minter{
		Key: key, Issuer: DefaultIssuerIn, Lifetime: 5 * time.Minute, Users: subject.Users(100), Prefix: "t-",
	}}
}

func (f *fixture) token(t testing.TB, aud string) string {
	t.Helper()
	tok, err := f.minter.Mint(aud)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// sign signs arbitrary claims with the fixture's subject key.
func (f *fixture) sign(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(f.key.Method(), claims)
	tok.Header["kid"] = f.key.Kid
	s, err := tok.SignedString(f.key.Signer)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func form(token string) url.Values {
	return url.Values{
		"grant_type":           {exchange.GrantTypeTokenExchange},
		"subject_token":        {token},
		"subject_token_type":   {exchange.TokenTypeAccessToken},
		"requested_token_type": {exchange.TokenTypeAccessToken},
		"resource":             {DefaultResource},
		"scope":                {DefaultScope},
	}
}

func (f *fixture) do(method string, body string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/as/token.oauth2", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	f.srv.Handler().ServeHTTP(rec, req)
	return rec
}

func basic(id string) map[string]string {
	return map[string]string{"Authorization": exchange.BasicAuth(id, testSecret)}
}

func TestExchangeSuccess(t *testing.T) {
	for _, alg := range jose.Algorithms {
		t.Run(alg, func(t *testing.T) {
			f := newFixture(t, alg, nil)
			rec := f.do("POST", form(f.token(t, "perf-agent-3")).Encode(), basic("perf-agent-3"))
			if rec.Code != 200 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control = %q", cc)
			}
			var r exchange.Response
			if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if r.IssuedTokenType != exchange.TokenTypeAccessToken || r.TokenType != "Bearer" || r.ExpiresIn != 300 || r.Scope != DefaultScope {
				t.Errorf("response = %+v", r)
			}
			claims := jwt.MapClaims{}
			tok, err := jwt.NewParser(jwt.WithValidMethods([]string{alg})).ParseWithClaims(r.AccessToken, claims,
				func(*jwt.Token) (any, error) { return f.srv.Key().Signer.Public(), nil })
			if err != nil {
				t.Fatal(err)
			}
			if tok.Header["typ"] != "at+jwt" || tok.Header["kid"] != f.srv.Key().Kid {
				t.Errorf("header = %v", tok.Header)
			}
			want := map[string]any{"iss": "https://tokex.test", "sub": "perf-user-001", "aud": DefaultResource,
				"client_id": "perf-agent-3", "scope": DefaultScope}
			for k, v := range want {
				if claims[k] != v {
					t.Errorf("claim %s = %v, want %v", k, claims[k], v)
				}
			}
			if act, _ := claims["act"].(map[string]any); act["sub"] != "perf-agent-3" {
				t.Errorf("act = %v", claims["act"])
			}
			if exp, iat := claims["exp"].(float64), claims["iat"].(float64); exp-iat != 300 {
				t.Errorf("exp-iat = %v", exp-iat)
			}
			if claims["jti"] == "" || claims["jti"] == nil {
				t.Error("no jti")
			}
		})
	}
}

func TestClientSecretPostAndJWTType(t *testing.T) {
	f := newFixture(t, jose.ES256, nil)
	v := form(f.token(t, "perf-agent-1"))
	v.Set("client_id", "perf-agent-1")
	v.Set("client_secret", testSecret)
	v.Set("requested_token_type", exchange.TokenTypeJWT)
	v["resource"] = []string{DefaultResource}
	rec := f.do("POST", v.Encode(), nil)
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var r exchange.Response
	_ = json.Unmarshal(rec.Body.Bytes(), &r)
	if r.IssuedTokenType != exchange.TokenTypeJWT || r.TokenType != "N_A" {
		t.Errorf("response = %+v", r)
	}
}

func TestMultipleTargets(t *testing.T) {
	f := newFixture(t, jose.ES256, func(c *Config) {
		c.DefaultClients.Resources = []string{DefaultResource, "https://b.example/api", "billing"}
	})
	v := form(f.token(t, "perf-agent-0"))
	v.Add("resource", "https://b.example/api")
	v.Add("audience", "billing")
	rec := f.do("POST", v.Encode(), basic("perf-agent-0"))
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var r exchange.Response
	_ = json.Unmarshal(rec.Body.Bytes(), &r)
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(r.AccessToken, claims); err != nil {
		t.Fatal(err)
	}
	aud, _ := claims["aud"].([]any)
	if len(aud) != 3 {
		t.Errorf("aud = %v", claims["aud"])
	}
}

// TestActorTokenNests: with an actor token the actor is its sub (RFC 8693
// §4.1: the acting party), above the subject token's own chain; without a
// subject.actor issuer, actor tokens are trusted as subject tokens are. An
// actor token is an identity: one carrying act is refused (it nested below
// the client before issue 30, and the subject's chain was lost).
func TestActorTokenNests(t *testing.T) {
	f := newFixture(t, jose.ES256, nil)
	now := time.Now().Unix()
	actorTok := f.sign(t, jwt.MapClaims{"iss": DefaultIssuerIn, "sub": "orchestrator", "aud": "perf-agent-2", "iat": now, "exp": now + 60})
	subjectTok := f.sign(t, jwt.MapClaims{"iss": DefaultIssuerIn, "sub": "perf-user-001", "aud": "perf-agent-2", "iat": now, "exp": now + 60,
		"act": map[string]any{"sub": "upstream"}})
	v := form(subjectTok)
	v.Set("actor_token", actorTok)
	v.Set("actor_token_type", exchange.TokenTypeJWT)
	rec := f.do("POST", v.Encode(), basic("perf-agent-2"))
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var r exchange.Response
	_ = json.Unmarshal(rec.Body.Bytes(), &r)
	var claims struct {
		Act      *jose.Actor
		ClientID string `json:"client_id"`
	}
	parts := strings.Split(r.AccessToken, ".")
	b, _ := jwt.NewParser().DecodeSegment(parts[1])
	_ = json.Unmarshal(b, &claims)
	a := claims.Act
	if a == nil || a.Sub != "orchestrator" || a.Act == nil || a.Act.Sub != "upstream" || a.Act.Act != nil || claims.ClientID != "perf-agent-2" {
		t.Fatalf("act chain wrong: %s", b)
	}
	v.Set("actor_token", f.sign(t, jwt.MapClaims{"iss": DefaultIssuerIn, "sub": "orchestrator", "aud": "perf-agent-2", "iat": now, "exp": now + 60,
		"act": map[string]any{"sub": "upstream"}}))
	if rec := f.do("POST", v.Encode(), basic("perf-agent-2")); rec.Code != 400 || !strings.Contains(rec.Body.String(), "actor token carries act") {
		t.Fatalf("a delegated actor token: %d %s", rec.Code, rec.Body)
	}
}

func rsaHMACConfusion(t *testing.T, f *fixture) string {
	// HS256 signed with the RSA public key bytes: the classic confusion attack.
	der, _ := x509.MarshalPKIXPublicKey(f.key.Signer.Public())
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	now := time.Now().Unix()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": DefaultIssuerIn, "sub": "x", "aud": "perf-agent-0", "iat": now, "exp": now + 60})
	tok.Header["kid"] = f.key.Kid
	s, err := tok.SignedString(pemKey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRefusals(t *testing.T) {
	f := newFixture(t, jose.RS256, nil)
	now := time.Now().Unix()
	good := func() string { return f.token(t, "perf-agent-0") }
	claims := func(mod func(jwt.MapClaims)) string {
		c := jwt.MapClaims{"iss": DefaultIssuerIn, "sub": "perf-user-001", "aud": "perf-agent-0", "iat": now, "exp": now + 300, "jti": "x"}
		mod(c)
		return f.sign(t, c)
	}
	otherKey, _ := jose.GenerateKey(jose.RS256)
	unknownKid := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": DefaultIssuerIn, "sub": "u", "aud": "perf-agent-0", "iat": now, "exp": now + 60})
		tok.Header["kid"] = otherKey.Kid
		s, _ := tok.SignedString(otherKey.Signer)
		return s
	}
	noneTok := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": DefaultIssuerIn, "sub": "u", "aud": "perf-agent-0", "iat": now, "exp": now + 60})
		s, _ := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		return s
	}
	big := strings.Repeat("a", 70<<10)
	cases := []struct {
		name   string
		method string
		body   func() string
		hdr    map[string]string
		status int
		code   string
	}{
		{"GET", "GET", func() string { return "" }, basic("perf-agent-0"), 405, exchange.ErrInvalidRequest},
		{"wrong content type", "POST", func() string { return form(good()).Encode() }, map[string]string{"Content-Type": "application/json", "Authorization": exchange.BasicAuth("perf-agent-0", testSecret)}, 400, exchange.ErrInvalidRequest},
		{"oversized body", "POST", func() string { return form(big).Encode() }, basic("perf-agent-0"), 413, exchange.ErrInvalidRequest},
		{"malformed form", "POST", func() string { return "grant_type=%zz" }, basic("perf-agent-0"), 400, exchange.ErrInvalidRequest},
		{"repeated parameter", "POST", func() string { v := form(good()); v.Add("scope", "x"); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidRequest},
		{"no client auth", "POST", func() string { return form(good()).Encode() }, nil, 401, exchange.ErrInvalidClient},
		{"wrong secret", "POST", func() string { return form(good()).Encode() }, map[string]string{"Authorization": exchange.BasicAuth("perf-agent-0", "nope")}, 401, exchange.ErrInvalidClient},
		{"unknown client", "POST", func() string { return form(good()).Encode() }, basic("intruder"), 401, exchange.ErrInvalidClient},
		{"malformed basic", "POST", func() string { return form(good()).Encode() }, map[string]string{"Authorization": "Basic !!!"}, 401, exchange.ErrInvalidClient},
		{"bearer scheme", "POST", func() string { return form(good()).Encode() }, map[string]string{"Authorization": "Bearer abc"}, 401, exchange.ErrInvalidClient},
		{"two auth methods", "POST", func() string { v := form(good()); v.Set("client_secret", testSecret); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidRequest},
		{"missing grant", "POST", func() string { v := form(good()); v.Del("grant_type"); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidRequest},
		{"unknown grant", "POST", func() string { v := form(good()); v.Set("grant_type", "password"); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrUnsupportedGrantType},
		{"grant not allowed", "POST", func() string { v := form(good()); v.Set("grant_type", "client_credentials"); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrUnauthorizedClient},
		{"jwt-bearer not allowed", "POST", func() string {
			v := form(good())
			v.Set("grant_type", exchange.GrantTypeJWTBearer)
			v.Set("assertion", good())
			return v.Encode()
		}, basic("perf-agent-0"), 400, exchange.ErrUnauthorizedClient},
		{"missing subject", "POST", func() string { v := form(good()); v.Del("subject_token"); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidRequest},
		{"bad subject type", "POST", func() string { v := form(good()); v.Set("subject_token_type", "urn:x"); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidRequest},
		{"bad requested type", "POST", func() string { v := form(good()); v.Set("requested_token_type", "urn:x"); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidRequest},
		{"no target", "POST", func() string { v := form(good()); v.Del("resource"); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidTarget},
		{"foreign resource", "POST", func() string { v := form(good()); v.Set("resource", "https://evil.example/"); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidTarget},
		{"relative resource", "POST", func() string { v := form(good()); v.Set("resource", "/mcp"); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidTarget},
		{"bad scope", "POST", func() string { v := form(good()); v.Set("scope", "admin"); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidScope},
		{"malformed jwt", "POST", func() string { return form("not.a.jwt").Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidGrant},
		{"alg none", "POST", func() string { return form(noneTok()).Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidGrant},
		{"hmac with rsa public key", "POST", func() string { return form(rsaHMACConfusion(t, f)).Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidGrant},
		{"unknown kid", "POST", func() string { return form(unknownKid()).Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidGrant},
		{"expired", "POST", func() string { return form(claims(func(c jwt.MapClaims) { c["exp"] = now - 60 })).Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidGrant},
		{"no exp", "POST", func() string { return form(claims(func(c jwt.MapClaims) { delete(c, "exp") })).Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidGrant},
		{"not yet valid", "POST", func() string { return form(claims(func(c jwt.MapClaims) { c["nbf"] = now + 120 })).Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidGrant},
		{"issued in future", "POST", func() string { return form(claims(func(c jwt.MapClaims) { c["iat"] = now + 120 })).Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidGrant},
		{"wrong iss", "POST", func() string { return form(claims(func(c jwt.MapClaims) { c["iss"] = "https://evil" })).Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidGrant},
		{"wrong aud", "POST", func() string { return form(claims(func(c jwt.MapClaims) { c["aud"] = "perf-agent-9" })).Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidGrant},
		{"no sub", "POST", func() string { return form(claims(func(c jwt.MapClaims) { delete(c, "sub") })).Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidGrant},
		{"actor type without token", "POST", func() string { v := form(good()); v.Set("actor_token_type", exchange.TokenTypeJWT); return v.Encode() }, basic("perf-agent-0"), 400, exchange.ErrInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body()
			rec := f.do(tc.method, body, tc.hdr)
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			var e exchange.ErrorResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
				t.Fatalf("body is not JSON: %q", rec.Body)
			}
			if e.Error != tc.code {
				t.Errorf("error = %q (%s), want %q", e.Error, e.ErrorDescription, tc.code)
			}
			if tc.status == 401 && rec.Header().Get("WWW-Authenticate") == "" && tc.hdr != nil {
				t.Error("401 without WWW-Authenticate")
			}
			assertNoLeak(t, rec.Body.String(), body)
		})
	}
}

// assertNoLeak fails when a response echoes the secret or any token.
func assertNoLeak(t *testing.T, resp, request string) {
	t.Helper()
	if strings.Contains(resp, testSecret) || strings.Contains(resp, url.QueryEscape(testSecret)) {
		t.Errorf("response leaks the client secret: %s", resp)
	}
	v, _ := url.ParseQuery(request)
	for _, k := range []string{"subject_token", "actor_token"} {
		if tok := v.Get(k); len(tok) > 8 && strings.Contains(resp, tok[:8]) {
			t.Errorf("response echoes the %s: %s", k, resp)
		}
	}
}

func TestClientRestrictedGrant(t *testing.T) {
	f := newFixture(t, jose.ES256, func(c *Config) {
		c.Clients = []ClientConfig{{ID: "cc-only", Secret: testSecret, GrantTypes: []string{"client_credentials"},
			Resources: []string{DefaultResource}, Scopes: []string{DefaultScope}}}
	})
	rec := f.do("POST", form(f.token(t, "cc-only")).Encode(), basic("cc-only"))
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), exchange.ErrUnauthorizedClient) {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}
}

func TestBasicAuthFormEncoding(t *testing.T) {
	for _, tc := range []struct{ id, secret string }{{"perf-agent-0", "a:b c+d%"}, {"client id:x", "é/=&"}} {
		h := exchange.BasicAuth(tc.id, tc.secret)
		id, sec, ok, err := exchange.ParseBasicAuth(h)
		if !ok || err != nil || id != tc.id || sec != tc.secret {
			t.Errorf("round trip %q/%q -> %q/%q ok=%v err=%v", tc.id, tc.secret, id, sec, ok, err)
		}
	}
}

func TestJWKSOverTLSAndRefreshOnUnknownKid(t *testing.T) {
	k1, _ := jose.GenerateKey(jose.ES256)
	k2, _ := jose.GenerateKey(jose.ES256)
	current, _ := jose.JWKS(k1)
	var fetches atomic.Int32
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		_, _ = w.Write(current)
	}))
	defer ts.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	certDER := ts.Certificate().Raw
	_ = os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER}), 0o600)

	cfg := Default()
	cfg.Signing.Alg = jose.ES256
	cfg.Subject.JWKSURL = ts.URL + "/jwks.json"
	cfg.Subject.CAFile = caFile
	cfg.Subject.UnknownKidInterval = time.Hour // one refresh at most in this test
	srv, err := New(context.Background(), cfg, Options{ClientSecret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetBaseURL("https://tokex.test")
	f := &fixture{srv: srv}
	mint := func(k *jose.Key) string {
		m := &subject.Minter{Key: k, Issuer: DefaultIssuerIn, Lifetime: time.Minute, Users: []string{"u"}}
		s, _ := m.Mint("perf-agent-0")
		return s
	}
	if rec := f.do("POST", form(mint(k1)).Encode(), basic("perf-agent-0")); rec.Code != 200 {
		t.Fatalf("k1: %d %s", rec.Code, rec.Body)
	}
	// Rotate: k2 is unknown until a refresh, which the unknown kid triggers.
	current, _ = jose.JWKS(k1, k2)
	if rec := f.do("POST", form(mint(k2)).Encode(), basic("perf-agent-0")); rec.Code != 200 {
		t.Fatalf("k2 after rotation: %d %s", rec.Code, rec.Body)
	}
	// A third unknown key: the rate limiter forbids another refresh.
	k3, _ := jose.GenerateKey(jose.ES256)
	before := fetches.Load()
	if rec := f.do("POST", form(mint(k3)).Encode(), basic("perf-agent-0")); rec.Code != 400 {
		t.Fatalf("k3: %d %s", rec.Code, rec.Body)
	}
	if fetches.Load() != before {
		t.Errorf("unknown kid refreshed despite the rate limit (%d -> %d fetches)", before, fetches.Load())
	}
}

func TestFaultsInjectErrors(t *testing.T) {
	f := newFixture(t, jose.ES256, func(c *Config) { c.Faults.ErrorRatio = 1 })
	if !strings.Contains(f.srv.Faults(), "100.00% errors") {
		t.Errorf("faults banner = %q", f.srv.Faults())
	}
	rec := f.do("POST", form(f.token(t, "perf-agent-0")).Encode(), basic("perf-agent-0"))
	if rec.Code != 503 {
		t.Fatalf("status %d", rec.Code)
	}
}

func TestFaultDelay(t *testing.T) {
	cases := []struct {
		name string
		cfg  FaultConfig
		at   time.Duration // since start
		min  time.Duration
		max  time.Duration
	}{
		{"fixed", FaultConfig{Latency: LatencyFault{Fixed: 5 * time.Millisecond}}, 0, 5 * time.Millisecond, 5 * time.Millisecond},
		{"uniform", FaultConfig{Latency: LatencyFault{Distribution: "uniform", Max: 3 * time.Millisecond}}, 0, 0, 3 * time.Millisecond},
		{"in stall", FaultConfig{Stall: StallFault{Every: 10 * time.Second, Duration: 2 * time.Second}}, 10*time.Second + 500*time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"after stall", FaultConfig{Stall: StallFault{Every: 10 * time.Second, Duration: 2 * time.Second}}, 13 * time.Second, 0, 0},
		{"capped exponential", FaultConfig{Latency: LatencyFault{Distribution: "exponential", Mean: time.Second, Max: 2 * time.Millisecond}}, 0, 0, 2 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fl := newFaults(tc.cfg)
			for i := 0; i < 200; i++ {
				d := fl.delay(fl.start.Add(tc.at))
				if d < tc.min || d > tc.max {
					t.Fatalf("delay %v outside [%v, %v]", d, tc.min, tc.max)
				}
			}
		})
	}
}

func TestValidateNamesField(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "serve.yaml")
	_ = os.WriteFile(p, []byte("addr: 127.0.0.1:0\nsigning:\n  alg: HS256\n"), 0o600)
	cfg, doc, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate(doc)
	if err == nil || !strings.Contains(err.Error(), "serve.yaml:3: signing.alg") {
		t.Fatalf("err = %v", err)
	}
	_ = os.WriteFile(p, []byte("addr: x\nsubjct:\n  issuer: y\n"), 0o600)
	if _, _, err = Load(p); err == nil || !strings.Contains(err.Error(), "serve.yaml:2") || !strings.Contains(err.Error(), `unknown field "subjct"`) {
		t.Fatalf("err = %v", err)
	}
}
