package smoke

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/authserver"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/runner/config"
)

// smokeAgainst runs the smoke test against the reference server.
func smokeAgainst(t *testing.T, c config.Campaign, lifetime time.Duration) (bool, string) {
	t.Helper()
	return smokeOver(t, c, lifetime, func(ts *httptest.Server) { ts.Start() }, nil, nil)
}

// smokeOver is smokeAgainst with the test server started by start and its
// config adjusted by server; with client keys, perf-agent-i is registered
// with the i-th (private_key_jwt).
func smokeOver(t *testing.T, c config.Campaign, lifetime time.Duration, start func(*httptest.Server), clientKeys []*jose.Key,
	server func(*authserver.Config)) (bool, string) {
	t.Helper()
	return smokeWith(t, c, lifetime, start, clientKeys, clientKeys, server)
}

// smokeOverKeys registers the agents' keys registered and signs with used.
func smokeOverKeys(t *testing.T, c config.Campaign, registered, used []*jose.Key, server func(*authserver.Config)) (bool, string) {
	t.Helper()
	return smokeWith(t, c, 0, func(ts *httptest.Server) { ts.Start() }, registered, used, server)
}

func smokeWith(t *testing.T, c config.Campaign, lifetime time.Duration, start func(*httptest.Server), clientKeys, used []*jose.Key,
	server func(*authserver.Config)) (bool, string) {
	t.Helper()
	key, err := jose.GenerateKey(jose.ES256)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := jose.JWKS(key)
	sc := authserver.Default()
	if clientKeys != nil {
		sets := map[string]json.RawMessage{}
		for i, k := range clientKeys {
			sets[c.ClientID(i)], _ = jose.JWKS(k)
		}
		b, _ := json.Marshal(sets)
		sc.DefaultClients.JWKSFile = filepath.Join(t.TempDir(), "clients.json")
		if err := os.WriteFile(sc.DefaultClients.JWKSFile, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if server != nil {
		server(&sc)
	}
	srv, err := authserver.New(context.Background(), sc, authserver.Options{ClientSecret: "s3cret-smoke", SubjectJWKS: jwks})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv.Handler())
	start(ts)
	t.Cleanup(ts.Close)
	srv.SetBaseURL(ts.URL)
	c.Target.URL = ts.URL + "/as/token.oauth2"
	tlsCfg, err := TLSConfig(&c, c.Target.URL, false)
	if err != nil {
		t.Fatal(err)
	}
	if ts.TLS != nil {
		tlsCfg.RootCAs = x509.NewCertPool()
		tlsCfg.RootCAs.AddCert(ts.Certificate())
	}
	var out bytes.Buffer
	passed, err := Run(context.Background(), &out, Options{Cfg: c, Key: key, Secret: "s3cret-smoke", ClientKeys: used, URL: c.Target.URL,
		TLS: tlsCfg, Lifetime: lifetime})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "s3cret-smoke") {
		t.Error("the secret was printed")
	}
	return passed, out.String()
}

func TestRunChecksTheIssuedToken(t *testing.T) {
	c, err := config.FromProfile("quick")
	if err != nil {
		t.Fatal(err)
	}
	if ok, out := smokeAgainst(t, c, 5*time.Minute); !ok || !strings.Contains(out, "✓ sub is perf-user-001, as the article's server") ||
		!strings.Contains(out, ", exp, aud holds https://mcp.example.internal/mcp, exp − iat is 5m0s") {
		t.Errorf("passed %v:\n%s", ok, out)
	}
	if ok, out := smokeAgainst(t, c, 10*time.Minute); ok || !strings.Contains(out, "✗ issued token: exp − iat is not 10m0s") {
		t.Errorf("a wrong lifetime passed %v:\n%s", ok, out)
	}
}

// TestRunWithUsersPrefix: the token is minted for users.prefix's first
// user, and the check expected perf-user-001 whatever the prefix, so a
// campaign with its own users failed its smoke test.
func TestRunWithUsersPrefix(t *testing.T) {
	c, err := config.FromProfile("quick")
	if err != nil {
		t.Fatal(err)
	}
	c.Users.Prefix = "acme-"
	if ok, out := smokeAgainst(t, c, 5*time.Minute); !ok || !strings.Contains(out, "✓ sub is acme-001, as the article's server") {
		t.Errorf("passed %v:\n%s", ok, out)
	}
}

// TestRunHonoursTargetHTTP: smoke spoke HTTP/2 whenever TLS offered it and
// HTTP/1.1 otherwise, whatever target.http asked for, so it did not test
// what the campaign sends.
func TestRunHonoursTargetHTTP(t *testing.T) {
	tlsH2 := func(ts *httptest.Server) { ts.EnableHTTP2 = true; ts.StartTLS() }
	h2c := func(ts *httptest.Server) {
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		ts.Config.Protocols = &p
		ts.Start()
	}
	for _, tc := range []struct {
		http  string
		start func(*httptest.Server)
		want  string
	}{
		{"", tlsH2, "over HTTP/2.0"},
		{"1.1", tlsH2, "over HTTP/1.1"},
		{"2", tlsH2, "over HTTP/2.0"},
		{"h2c", h2c, "over HTTP/2.0"},
		{"", h2c, "over HTTP/1.1"},
	} {
		c, err := config.FromProfile("quick")
		if err != nil {
			t.Fatal(err)
		}
		c.Target.HTTP = tc.http
		if ok, out := smokeOver(t, c, 0, tc.start, nil, nil); !ok || !strings.Contains(out, tc.want) {
			t.Errorf("http %q: passed %v, want %q:\n%s", tc.http, ok, tc.want, out)
		}
	}
}

// TestRunWithPrivateKeyJWT: smoke authenticates agent 0 with a client
// assertion signed with its key, which the reference server verifies.
func TestRunWithPrivateKeyJWT(t *testing.T) {
	c, err := config.FromProfile("quick")
	if err != nil {
		t.Fatal(err)
	}
	c.Request.AuthMethod = "private_key_jwt"
	var keys []*jose.Key
	for range c.Agents.Count {
		ck, err := jose.GenerateKey(jose.ES256)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, ck)
	}
	if ok, out := smokeOver(t, c, 0, func(ts *httptest.Server) { ts.Start() }, keys, nil); !ok || !strings.Contains(out, "as perf-agent-0 (private_key_jwt, credentials not shown): HTTP 200") ||
		!strings.Contains(out, "✓ every agent's client exchanged: perf-agent-0…perf-agent-9") {
		t.Errorf("passed %v:\n%s", ok, out)
	}
	// Agent 3 signs with a key the server does not have for it.
	wrong := append([]*jose.Key{}, keys...)
	wrong[3], _ = jose.GenerateKey(jose.ES256)
	sc := func(*authserver.Config) {}
	ok, out := smokeOverKeys(t, c, keys, wrong, sc)
	if ok || !strings.Contains(out, "✗ 1 of the other 9 agents' clients failed") || !strings.Contains(out, ": perf-agent-3\n") {
		t.Errorf("a wrong key for agent 3 passed %v:\n%s", ok, out)
	}
}

// TestRunNamesEveryMissingClient (issue 23): smoke exchanged as agent 0
// only, and passed against a server that knew 2 of the campaign's 10
// clients; the sanity run then failed at 20 %. Every agent's client now
// makes one exchange, and the ones the server refused are named.
func TestRunNamesEveryMissingClient(t *testing.T) {
	c, err := config.FromProfile("quick")
	if err != nil {
		t.Fatal(err)
	}
	ok, out := smokeOver(t, c, 5*time.Minute, func(ts *httptest.Server) { ts.Start() }, nil, func(sc *authserver.Config) {
		sc.DefaultClients.Count = 2
	})
	want := "✗ 8 of the other 9 agents' clients failed (the campaign sends as all 10):\n  oauth_error invalid_client"
	if ok || !strings.Contains(out, "✓ issued token verified") || !strings.Contains(out, want) ||
		!strings.Contains(out, ": perf-agent-2, perf-agent-3, perf-agent-4, perf-agent-5, perf-agent-6, perf-agent-7, perf-agent-8, perf-agent-9\n") {
		t.Errorf("passed %v with 2 of 10 clients registered:\n%s", ok, out)
	}
	c.Agents.Count = 2
	if ok, out := smokeAgainst(t, c, 5*time.Minute); !ok || !strings.Contains(out, "✓ every agent's client exchanged: perf-agent-0…perf-agent-1") {
		t.Errorf("both clients registered: passed %v:\n%s", ok, out)
	}
}

func TestReadClaimsIsExact(t *testing.T) {
	cl := readClaims([]byte(`{"SUB":"x","sub":"u","aud":"one","act":{"sub":"c","Sub":"z"},"iat":10,"exp":70}`))
	if cl.Sub != "u" || cl.ActSub != "c" || len(cl.Aud) != 1 || cl.Aud[0] != "one" || cl.Exp-cl.Iat != 60 {
		t.Errorf("%+v", cl)
	}
	if cl := readClaims([]byte(`{"aud":["a","b"]}`)); strings.Join(cl.Aud, " ") != "a b" {
		t.Errorf("aud array: %+v", cl)
	}
}

// TestRunWithTLSClientAuth: smoke presents agent 0's certificate
// (Options.TLS carries it, as tokex smoke sets it) and the reference server
// recognises the client by its subject DN and binds the token to it.
func TestRunWithTLSClientAuth(t *testing.T) {
	ca, err := tlscert.NewClientCA(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := ca.Issue("perf-agent-0", time.Hour)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	key, _ := jose.GenerateKey(jose.ES256)
	jwks, _ := jose.JWKS(key)
	sc := authserver.Default()
	sc.TLS = authserver.TLSConfig{Enabled: true, SelfSigned: true, ClientCAFile: caFile}
	sc.DefaultClients.TLSClientAuthSubjectDN = "CN={{client_id}}"
	srv, err := authserver.New(context.Background(), sc, authserver.Options{ClientSecret: "s3cret-smoke", SubjectJWKS: jwks})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.TLS = &tls.Config{ClientCAs: tlscert.Pool(ca.CertPEM), ClientAuth: tls.VerifyClientCertIfGiven}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	srv.SetBaseURL(ts.URL)
	c, _ := config.FromProfile("quick")
	c.Request.AuthMethod, c.Target.URL = "tls_client_auth", ts.URL+"/as/token.oauth2"
	tlsCfg, _ := TLSConfig(&c, c.Target.URL, false)
	tlsCfg.RootCAs = x509.NewCertPool()
	tlsCfg.RootCAs.AddCert(ts.Certificate())
	tlsCfg.Certificates = []tls.Certificate{cert.Cert}
	certs := []tls.Certificate{cert.Cert}
	for i := 1; i < c.Agents.Count; i++ {
		p, _ := ca.Issue(c.ClientID(i), time.Hour)
		certs = append(certs, p.Cert)
	}
	var out bytes.Buffer
	passed, err := Run(context.Background(), &out, Options{Cfg: c, Key: key, URL: c.Target.URL, TLS: tlsCfg, ClientCerts: certs})
	if err != nil || !passed || !strings.Contains(out.String(), "(tls_client_auth, credentials not shown): HTTP 200") ||
		!strings.Contains(out.String(), `"cnf":{"x5t#S256":`) || !strings.Contains(out.String(), "✓ every agent's client exchanged") {
		t.Errorf("passed %v %v:\n%s", passed, err, out.String())
	}
	// Agent 5 presents agent 0's certificate.
	certs[5] = cert.Cert
	out.Reset()
	passed, _ = Run(context.Background(), &out, Options{Cfg: c, Key: key, URL: c.Target.URL, TLS: tlsCfg, ClientCerts: certs})
	if passed || !strings.Contains(out.String(), "not the one registered for the client\": perf-agent-5\n") {
		t.Errorf("agent 5 with agent 0's certificate passed %v:\n%s", passed, out.String())
	}
}
