package smoke

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/authserver"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/subject"
)

// smokeAgainst runs one smoke exchange against the reference server.
func smokeAgainst(t *testing.T, c config.Campaign, lifetime time.Duration) (bool, string) {
	t.Helper()
	key, err := subject.GenerateKey(subject.ES256)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := subject.JWKS(key)
	srv, err := authserver.New(context.Background(), authserver.Default(), authserver.Options{ClientSecret: "s3cret-smoke", SubjectJWKS: jwks})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	srv.SetBaseURL(ts.URL)
	c.Target.URL = ts.URL + "/as/token.oauth2"
	tlsCfg, err := TLSConfig(&c, c.Target.URL, false)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	passed, err := Run(context.Background(), &out, Options{Cfg: c, Key: key, Secret: "s3cret-smoke", URL: c.Target.URL, TLS: tlsCfg, Lifetime: lifetime})
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

func TestReadClaimsIsExact(t *testing.T) {
	cl := readClaims([]byte(`{"SUB":"x","sub":"u","aud":"one","act":{"sub":"c","Sub":"z"},"iat":10,"exp":70}`))
	if cl.Sub != "u" || cl.ActSub != "c" || len(cl.Aud) != 1 || cl.Aud[0] != "one" || cl.Exp-cl.Iat != 60 {
		t.Errorf("%+v", cl)
	}
	if cl := readClaims([]byte(`{"aud":["a","b"]}`)); strings.Join(cl.Aud, " ") != "a b" {
		t.Errorf("aud array: %+v", cl)
	}
}
