package authserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/subject"
)

const tokenURL = "https://tokex.test/as/token.oauth2"

// assertionFixture is a server whose default clients perf-agent-0 and -1
// have their own ES256 keys (default_clients.jwks_file, as `tokex jwks
// --clients` writes it) and no secret.
func assertionFixture(t testing.TB, mutate func(*Config)) (*fixture, map[string]*jose.Key) {
	t.Helper()
	keys := map[string]*jose.Key{}
	sets := map[string]json.RawMessage{}
	for _, id := range []string{"perf-agent-0", "perf-agent-1"} {
		k, err := jose.GenerateKey(jose.ES256)
		if err != nil {
			t.Fatal(err)
		}
		keys[id] = k
		sets[id], _ = jose.JWKS(k)
	}
	b, _ := json.Marshal(sets)
	path := filepath.Join(t.TempDir(), "clients.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return newFixture(t, jose.ES256, func(c *Config) {
		c.DefaultClients.Count, c.DefaultClients.JWKSFile = 2, path
		if mutate != nil {
			mutate(c)
		}
	}), keys
}

// assertionForm is an exchange request authenticated by assertion.
func (f *fixture) assertionForm(t *testing.T, id, assertion string) string {
	v := form(f.token(t, id))
	v.Set("client_id", id)
	v.Set("client_assertion_type", exchange.ClientAssertionType)
	v.Set("client_assertion", assertion)
	return v.Encode()
}

// signAssertion signs claims (iss = sub = id, aud the token endpoint, a
// minute, a fresh jti, unless edit changes them) with key under method.
func signAssertion(t *testing.T, method jwt.SigningMethod, key any, kid, id string, edit func(jwt.MapClaims)) string {
	t.Helper()
	now := time.Now().Unix()
	c := jwt.MapClaims{"iss": id, "sub": id, "aud": tokenURL, "iat": now, "exp": now + 60, "jti": rand.Text()}
	if edit != nil {
		edit(c)
	}
	tok := jwt.NewWithClaims(method, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPrivateKeyJWT: the server accepts a client assertion signed with the
// client's registered key and refuses every other, each with a fixed
// phrase that says why.
func TestPrivateKeyJWT(t *testing.T) {
	f, keys := assertionFixture(t, nil)
	k0 := keys["perf-agent-0"]
	es := jwt.SigningMethodES256
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	asr := &subject.Asserter{Key: k0, ClientID: "perf-agent-0", Audience: tokenURL, Lifetime: time.Minute, Prefix: "t-"}
	good, err := asr.Assert()
	if err != nil {
		t.Fatal(err)
	}
	none := signAssertion(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, k0.Kid, "perf-agent-0", nil)
	pub, _ := json.Marshal(k0.PublicJWK()) // an HMAC "secret" anyone can read: the public JWK
	hmac := signAssertion(t, jwt.SigningMethodHS256, pub, k0.Kid, "perf-agent-0", nil)
	for _, tc := range []struct {
		name, id, assertion string
		status              int
		desc                string
	}{
		{"valid (tokex's asserter)", "perf-agent-0", good, 200, ""},
		{"replayed jti", "perf-agent-0", good, 401, "already used"},
		{"valid (golang-jwt)", "perf-agent-0", signAssertion(t, es, k0.Signer, k0.Kid, "perf-agent-0", nil), 200, ""},
		{"issuer as audience", "perf-agent-0", signAssertion(t, es, k0.Signer, k0.Kid, "perf-agent-0", func(c jwt.MapClaims) { c["aud"] = "https://tokex.test" }), 200, ""},
		{"wrong key, same kid", "perf-agent-0", signAssertion(t, es, other, k0.Kid, "perf-agent-0", nil), 401, "signature is invalid"},
		{"another client's key", "perf-agent-0", signAssertion(t, es, keys["perf-agent-1"].Signer, keys["perf-agent-1"].Kid, "perf-agent-0", nil), 401, "unknown key"},
		{"expired", "perf-agent-0", signAssertion(t, es, k0.Signer, k0.Kid, "perf-agent-0", func(c jwt.MapClaims) {
			c["iat"], c["exp"] = time.Now().Unix()-120, time.Now().Unix()-60
		}), 401, "is expired"},
		{"wrong audience", "perf-agent-0", signAssertion(t, es, k0.Signer, k0.Kid, "perf-agent-0", func(c jwt.MapClaims) { c["aud"] = "https://elsewhere/token" }), 401, "audience"},
		{"alg none", "perf-agent-0", none, 401, "client assertion"},
		{"HMAC with the public key", "perf-agent-0", hmac, 401, "algorithm is not allowed"},
		{"iss is not the client", "perf-agent-0", signAssertion(t, es, k0.Signer, k0.Kid, "perf-agent-0", func(c jwt.MapClaims) { c["iss"] = "someone" }), 401, "iss and sub"},
		{"client_id is another client", "perf-agent-1", signAssertion(t, es, k0.Signer, k0.Kid, "perf-agent-0", nil), 401, "iss and sub"},
		{"no jti", "perf-agent-0", signAssertion(t, es, k0.Signer, k0.Kid, "perf-agent-0", func(c jwt.MapClaims) { delete(c, "jti") }), 401, "jti"},
		{"lives too long", "perf-agent-0", signAssertion(t, es, k0.Signer, k0.Kid, "perf-agent-0", func(c jwt.MapClaims) { c["exp"] = time.Now().Unix() + 3600 }), 401, "longer than the maximum"},
		{"unknown client", "perf-agent-7", signAssertion(t, es, k0.Signer, k0.Kid, "perf-agent-7", nil), 401, "client authentication failed"},
		{"malformed", "perf-agent-0", "a.b.c", 401, "client assertion"},
	} {
		rec := f.do("POST", f.assertionForm(t, tc.id, tc.assertion), nil)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.desc) {
			t.Errorf("%s: %d %s, want %d %q", tc.name, rec.Code, rec.Body.String(), tc.status, tc.desc)
		}
		if tc.status != 200 && strings.Contains(rec.Body.String(), tc.assertion) {
			t.Errorf("%s: the answer quotes the assertion", tc.name)
		}
	}
	// A wrong assertion type, and an assertion beside a secret, are refused.
	v, _ := url.ParseQuery(f.assertionForm(t, "perf-agent-0", signAssertion(t, es, k0.Signer, k0.Kid, "perf-agent-0", nil)))
	v.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:saml2-bearer")
	if rec := f.do("POST", v.Encode(), nil); rec.Code != 401 || !strings.Contains(rec.Body.String(), "client_assertion_type must be") {
		t.Errorf("saml2-bearer: %d %s", rec.Code, rec.Body.String())
	}
	v.Set("client_assertion_type", exchange.ClientAssertionType)
	v.Set("client_secret", testSecret)
	if rec := f.do("POST", v.Encode(), nil); rec.Code != 400 || !strings.Contains(rec.Body.String(), "use one client authentication method") {
		t.Errorf("assertion and secret: %d %s", rec.Code, rec.Body.String())
	}
}

// TestReplayCacheIsBounded: a full cache refuses (never forgets a valid
// jti), and an expired bucket makes room.
func TestReplayCacheIsBounded(t *testing.T) {
	c := newReplayCache(2, 10, 0, 2) // no share reserved: a pool of 2
	now := int64(1_000_000)
	for _, tc := range []struct {
		client, jti string
		exp         int64
		want        replayVerdict
	}{
		{"a", "1", now + 5, replayNew},
		{"a", "1", now + 50, replaySeen},
		{"b", "1", now + 50, replayNew}, // jtis are per client
		{"a", "2", now + 50, replayFull},
	} {
		if got := c.add(tc.client, tc.jti, tc.exp, now); got != tc.want {
			t.Errorf("%s/%s: %v, want %v", tc.client, tc.jti, got, tc.want)
		}
	}
	if got := c.add("a", "2", now+70, now+20); got != replayNew || c.n != 2 {
		t.Errorf("after the first expired: %v, %d held", got, c.n)
	}
}

// TestClientAuthConfigErrors: bad client-auth settings name their field.
func TestClientAuthConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"HMAC allowed", func(c *Config) { c.ClientAuth.Algorithms = []string{"HS256"} }, "client_auth.algorithms[0]"},
		{"none allowed", func(c *Config) { c.ClientAuth.Algorithms = []string{"none"} }, "client_auth.algorithms[0]"},
		{"lifetime", func(c *Config) { c.ClientAuth.MaxLifetime = 48 * time.Hour }, "client_auth.max_lifetime"},
		{"cache", func(c *Config) { c.ClientAuth.ReplayCache = 1 << 30 }, "client_auth.replay_cache"},
		{"two bindings", func(c *Config) {
			c.Clients = []ClientConfig{{ID: "a", TLSBinding: TLSBinding{SubjectDN: "CN=a", SANDNS: "a"}}}
		}, "clients[0].tls_client_auth_subject_dn"},
		{"no credential", func(c *Config) { c.Clients = []ClientConfig{{ID: "a"}} }, "a credential is required"},
		{"method without credential", func(c *Config) {
			c.Clients = []ClientConfig{{ID: "a", Secret: "s", AuthMethods: []string{"private_key_jwt"}}}
		}, "private_key_jwt needs jwks or jwks_file"},
		{"client CA without TLS", func(c *Config) { c.TLS.ClientCAFile = "ca.pem" }, "tls.client_ca_file"},
	} {
		c := Default()
		tc.mutate(&c)
		if err := c.Validate(nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestTLSClientAuth: over TLS with tls.client_ca_file, a default client is
// authenticated by a certificate of the CA whose subject DN is its own
// (CN={{client_id}}), and the token it gets is bound to that certificate
// (cnf.x5t#S256); a missing certificate, another client's, or another
// CA's is refused; a secret still works without a certificate.
func TestTLSClientAuth(t *testing.T) {
	ca, err := tlscert.NewClientCA(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, jose.ES256, func(c *Config) {
		c.Addr, c.TLS = "127.0.0.1:0", TLSConfig{Enabled: true, SelfSigned: true, ClientCAFile: caFile}
		c.DefaultClients.TLSClientAuthSubjectDN = "CN={{client_id}}"
	})
	f.srv.baseURL = "" // Serve sets it to where it listens
	ln, err := f.srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = f.srv.Serve(ctx, ln) }()
	url := "https://" + ln.Addr().String() + "/as/token.oauth2"
	agent0, _ := ca.Issue("perf-agent-0", time.Hour)
	agent1, _ := ca.Issue("perf-agent-1", time.Hour)
	otherCA, _ := tlscert.NewClientCA(time.Hour)
	stranger, _ := otherCA.Issue("perf-agent-0", time.Hour)
	post := func(cert *tlscert.Pair, body string, hdr map[string]string) (int, string, error) {
		tc := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the server's self-signed loopback certificate
		if cert != nil {
			tc.Certificates = []tls.Certificate{cert.Cert}
		}
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	byCert := func(id string) string {
		v := form(f.token(t, id))
		v.Set("client_id", id)
		return v.Encode()
	}
	code, body, err := post(agent0, byCert("perf-agent-0"), nil)
	if err != nil || code != 200 {
		t.Fatalf("agent 0's certificate: %d %s %v", code, body, err)
	}
	var resp exchange.Response
	_ = json.Unmarshal([]byte(body), &resp)
	var claims struct {
		Cnf map[string]string `json:"cnf"`
	}
	parts := strings.Split(resp.AccessToken, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	_ = json.Unmarshal(payload, &claims)
	want := sha256.Sum256(agent0.Cert.Certificate[0])
	if claims.Cnf["x5t#S256"] != base64.RawURLEncoding.EncodeToString(want[:]) {
		t.Errorf("the token is not bound to the certificate: %s", payload)
	}
	for _, tc := range []struct {
		name string
		cert *tlscert.Pair
		id   string
		want string
	}{
		{"no certificate", nil, "perf-agent-0", "no verified client certificate"},
		{"another client's certificate", agent1, "perf-agent-0", "not the one registered"},
	} {
		if code, body, err := post(tc.cert, byCert(tc.id), nil); err != nil || code != 401 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s %v", tc.name, code, body, err)
		}
	}
	if _, _, err := post(stranger, byCert("perf-agent-0"), nil); err == nil {
		t.Error("another CA's certificate passed the handshake")
	}
	if code, body, err := post(nil, form(f.token(t, "perf-agent-0")).Encode(), basic("perf-agent-0")); err != nil || code != 200 {
		t.Errorf("a secret without a certificate: %d %s %v", code, body, err)
	}
}

// FuzzClientAssertion feeds arbitrary assertions (and client ids) to
// private_key_jwt: no panic, never accepted unless signed with the
// client's key, never quoted in the answer.
func FuzzClientAssertion(f *testing.F) {
	fx, keys := assertionFixture(f, nil)
	k0 := keys["perf-agent-0"]
	a := &subject.Asserter{Key: k0, ClientID: "perf-agent-0", Audience: tokenURL, Lifetime: time.Minute, Prefix: "fuzz-"}
	good, _ := a.Assert()
	f.Add("perf-agent-0", good)
	f.Add("perf-agent-1", good)
	f.Add("perf-agent-0", "eyJhbGciOiJub25lIn0.eyJpc3MiOiJwZXJmLWFnZW50LTAiLCJzdWIiOiJwZXJmLWFnZW50LTAifQ.")
	f.Add("perf-agent-0", fx.signRaw(f, `{"alg":"ES256","alg":"none"}`, `{"iss":"perf-agent-0","sub":"perf-agent-0","sub":"x"}`))
	f.Add("", "a.b.c")
	f.Fuzz(func(t *testing.T, id, assertion string) {
		v := url.Values{"client_assertion_type": {exchange.ClientAssertionType}, "client_assertion": {assertion}}
		if id != "" {
			v.Set("client_id", id)
		}
		cl, oe := fx.srv.assertionClient(v)
		if oe == nil && (cl == nil || cl.id != "perf-agent-0" && cl.id != "perf-agent-1") {
			t.Fatalf("accepted for %v", cl)
		}
		if oe != nil && len(assertion) > 12 && strings.Contains(oe.desc, assertion) {
			t.Fatal("the answer quotes the assertion")
		}
	})
}

// BenchmarkClientAuth is one ES256 exchange through the handler with each
// client authentication method (the subject token and the client's
// credential prepared beforehand): what private_key_jwt's assertion check
// (an ES256 verification and the replay cache) and tls_client_auth's
// binding and cnf add to client_secret_basic, as ratios in one run.
func BenchmarkClientAuth(b *testing.B) {
	ca, _ := tlscert.NewClientCA(time.Hour)
	cert, _ := ca.Issue("perf-agent-0", time.Hour)
	f, keys := assertionFixture(b, func(c *Config) { c.DefaultClients.TLSClientAuthSubjectDN = "CN={{client_id}}" })
	asr := &subject.Asserter{Key: keys["perf-agent-0"], ClientID: "perf-agent-0", Audience: tokenURL, Lifetime: time.Minute, Prefix: "b-"}
	for _, m := range exchange.AuthMethods {
		if m == exchange.AuthPost {
			continue
		}
		b.Run(string(m), func(b *testing.B) {
			reqs := make([]*http.Request, b.N)
			for i := range reqs {
				v := form(f.token(b, "perf-agent-0"))
				hdr := ""
				switch m {
				case exchange.AuthBasic:
					hdr = exchange.BasicAuth("perf-agent-0", testSecret)
				case exchange.AuthPrivateKeyJWT:
					a, _ := asr.Assert()
					v.Set("client_id", "perf-agent-0")
					v.Set("client_assertion_type", exchange.ClientAssertionType)
					v.Set("client_assertion", a)
				case exchange.AuthTLSClient:
					v.Set("client_id", "perf-agent-0")
				}
				r := httptest.NewRequest("POST", "/as/token.oauth2", strings.NewReader(v.Encode()))
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				if hdr != "" {
					r.Header.Set("Authorization", hdr)
				}
				if m == exchange.AuthTLSClient {
					r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert.Cert.Leaf}}}
				}
				reqs[i] = r
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rec := httptest.NewRecorder()
				f.srv.Handler().ServeHTTP(rec, reqs[i])
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
