package smoke

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/authserver"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/subject"
)

// smokeAgainst runs one smoke exchange against the reference server.
func smokeAgainst(t *testing.T, c config.Campaign, lifetime time.Duration) (bool, string) {
	t.Helper()
	return smokeOver(t, c, lifetime, func(ts *httptest.Server) { ts.Start() }, nil)
}

// smokeOver is smokeAgainst with the test server started by start; with a
// client key, perf-agent-0 is registered with it (private_key_jwt).
func smokeOver(t *testing.T, c config.Campaign, lifetime time.Duration, start func(*httptest.Server), clientKey *subject.Key) (bool, string) {
	t.Helper()
	key, err := subject.GenerateKey(subject.ES256)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := subject.JWKS(key)
	sc := authserver.Default()
	if clientKey != nil {
		ck, _ := subject.JWKS(clientKey)
		sc.DefaultClients.JWKSFile = filepath.Join(t.TempDir(), "clients.json")
		if err := os.WriteFile(sc.DefaultClients.JWKSFile, []byte(`{"perf-agent-0":`+string(ck)+`}`), 0o600); err != nil {
			t.Fatal(err)
		}
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
	passed, err := Run(context.Background(), &out, Options{Cfg: c, Key: key, Secret: "s3cret-smoke", ClientKey: clientKey, URL: c.Target.URL,
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
		if ok, out := smokeOver(t, c, 0, tc.start, nil); !ok || !strings.Contains(out, tc.want) {
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
	ck, err := subject.GenerateKey(subject.ES256)
	if err != nil {
		t.Fatal(err)
	}
	if ok, out := smokeOver(t, c, 0, func(ts *httptest.Server) { ts.Start() }, ck); !ok || !strings.Contains(out, "as perf-agent-0 (private_key_jwt, credentials not shown): HTTP 200") {
		t.Errorf("passed %v:\n%s", ok, out)
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
	key, _ := subject.GenerateKey(subject.ES256)
	jwks, _ := subject.JWKS(key)
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
	var out bytes.Buffer
	passed, err := Run(context.Background(), &out, Options{Cfg: c, Key: key, URL: c.Target.URL, TLS: tlsCfg})
	if err != nil || !passed || !strings.Contains(out.String(), "(tls_client_auth, credentials not shown): HTTP 200") ||
		!strings.Contains(out.String(), `"cnf":{"x5t#S256":`) {
		t.Errorf("passed %v %v:\n%s", passed, err, out.String())
	}
}
