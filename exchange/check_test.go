package exchange

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/internal/jwks"
)

func TestCheckClassify(t *testing.T) {
	t.Parallel()
	ok := `{"access_token":"a.b.c","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"bearer"}`
	for _, tc := range []struct {
		name   string
		check  Check
		status int
		body   string
		want   Outcome
		why    string
	}{
		{"default", Check{}, 200, ok, OutcomeOK, ""},
		{"default, no issued_token_type", Check{}, 200, `{"access_token":"x"}`, OutcomeBadResponse, "the response has no issued_token_type"},
		{"not JSON", Check{}, 200, `<html>`, OutcomeBadResponse, "the response is not JSON"},
		{"only access_token required", Check{Required: []string{"access_token"}}, 200, `{"access_token":"x"}`, OutcomeOK, ""},
		{"id_token required", Check{Required: []string{"access_token", "id_token"}}, 200, ok, OutcomeBadResponse, "the response has no id_token"},
		{"token_type any case", Check{TokenType: "Bearer"}, 200, ok, OutcomeOK, ""},
		{"token_type wrong", Check{TokenType: "N_A"}, 200, ok, OutcomeBadResponse, `token_type is "bearer", want N_A`},
		{"token_type absent", Check{TokenType: "Bearer", Required: []string{"access_token"}}, 200, `{"access_token":"x"}`, OutcomeBadResponse, "the response has no token_type (want Bearer)"},
		{"an OAuth error is unchanged", Check{Required: []string{"x"}}, 400, `{"error":"invalid_client"}`, OutcomeOAuthError, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, why := tc.check.Classify(tc.status, []byte(tc.body))
			if o != tc.want || why != tc.why {
				t.Errorf("got %s %q, want %s %q", o, why, tc.want, tc.why)
			}
		})
	}
}

// issuer signs tokens with a P-256 key and publishes its metadata and JWKS
// where Dex does: under the token endpoint's folder.
type issuer struct {
	key *ecdsa.PrivateKey
	srv *httptest.Server
}

func newIssuer(t *testing.T, jwksURI func(base string) string) *issuer {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	is := &issuer{key: k}
	mux := http.NewServeMux()
	mux.HandleFunc("/dex/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": is.srv.URL + "/dex", "jwks_uri": jwksURI(is.srv.URL)})
	})
	mux.HandleFunc("/dex/keys", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Use: "sig"}}})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) token(t *testing.T, key *ecdsa.PrivateKey, edit func(jwt.MapClaims)) []byte {
	t.Helper()
	now := time.Now().Unix()
	c := jwt.MapClaims{"iss": is.srv.URL + "/dex", "aud": "api", "sub": "u", "iat": now, "exp": now + 300,
		"act": map[string]any{"sub": "perf-agent-0"}}
	if edit != nil {
		edit(c)
	}
	tk := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tk.Header["kid"] = "k1"
	s, err := tk.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"access_token": s, "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
	return b
}

func TestIssuedVerifier(t *testing.T) {
	t.Parallel()
	is := newIssuer(t, func(base string) string { return base + "/dex/keys" })
	v, where, err := Discover(context.Background(), http.DefaultClient, is.srv.URL+"/dex/token", "")
	if err != nil {
		t.Fatal(err)
	}
	if where != is.srv.URL+"/dex/.well-known/openid-configuration" || v.Issuer != is.srv.URL+"/dex" {
		t.Fatalf("metadata %s, issuer %s", where, v.Issuer)
	}
	v.Expect = Expect{Audience: "api", Client: true, Lifetime: 5 * time.Minute}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, tc := range []struct {
		name string
		key  *ecdsa.PrivateKey
		edit func(jwt.MapClaims)
		want string // "" valid
	}{
		{"valid", is.key, nil, ""},
		{"client_id instead of act", is.key, func(c jwt.MapClaims) { delete(c, "act"); c["client_id"] = "perf-agent-0" }, ""},
		{"another key", other, nil, "issued token signature is invalid or its algorithm is not allowed"},
		{"wrong audience", is.key, func(c jwt.MapClaims) { c["aud"] = []string{"other"} }, "issued token: aud does not hold the expected audience"},
		{"wrong client", is.key, func(c jwt.MapClaims) { c["act"] = map[string]any{"sub": "perf-agent-1"} }, "issued token: neither client_id nor act.sub is the client"},
		{"wrong lifetime", is.key, func(c jwt.MapClaims) { c["exp"] = c["iat"].(int64) + 3600 }, "issued token: exp − iat is not 5m0s"},
		{"expired", is.key, func(c jwt.MapClaims) { c["exp"] = int64(1); c["iat"] = int64(1) - 300 }, "issued token is expired"},
		{"no exp", is.key, func(c jwt.MapClaims) { delete(c, "exp") }, "issued token has no exp"},
		{"foreign issuer", is.key, func(c jwt.MapClaims) { c["iss"] = "https://evil" }, "issued token iss is not the target's issuer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Verify(is.token(t, tc.key, tc.edit), "perf-agent-0")
			if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	// Not a JWT, unsigned, or an access_token of another type.
	none := base64url(`{"alg":"none"}`) + "." + base64url(`{"sub":"u"}`) + "."
	for body, want := range map[string]string{
		`{"access_token":"opaque-token"}`: "issued token is not a JWT",
		`{"access_token":"` + none + `"}`: "issued token signature is invalid or its algorithm is not allowed",
		`{"access_token":42}`:             "issued token: the response has no access_token",
	} {
		if err := v.Verify([]byte(body), "perf-agent-0"); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", body, err, want)
		}
	}
}

func base64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestDiscoverRefusals(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		jwks func(string) string
		want string
	}{
		"jwks_uri not http":  {func(string) string { return "file:///etc/passwd" }, "jwks_uri is not an http(s) URL"},
		"jwks_uri not found": {func(b string) string { return b + "/nope" }, "HTTP 404"},
	} {
		t.Run(name, func(t *testing.T) {
			is := newIssuer(t, tc.jwks)
			_, _, err := Discover(context.Background(), http.DefaultClient, is.srv.URL+"/dex/token", "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want …%s…", err, tc.want)
			}
		})
	}
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"jwks_uri":"` + strings.Repeat("a", jwks.MaxBytes) + `"}`))
	}))
	defer big.Close()
	_, _, err := Discover(context.Background(), http.DefaultClient, big.URL+"/token", "")
	if err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("oversized metadata: %v", err)
	}
}

func TestMetadataURLs(t *testing.T) {
	t.Parallel()
	got := MetadataURLs("https://h:8443/dex/token")
	want := []string{"https://h:8443/dex/.well-known/openid-configuration", "https://h:8443/.well-known/oauth-authorization-server/dex",
		"https://h:8443/.well-known/openid-configuration", "https://h:8443/.well-known/oauth-authorization-server"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v", got)
	}
	if got := MetadataURLs("http://h/token"); len(got) != 2 || got[0] != "http://h/.well-known/openid-configuration" {
		t.Errorf("root endpoint: %v", got)
	}
}

// TestDiscoveryNeverFollowsRedirects: a metadata document or a jwks_uri
// that redirects is not followed, even with a client that would (issue 25
// item 8; SECURITY.md: redirects are never followed).
func TestDiscoveryNeverFollowsRedirects(t *testing.T) {
	t.Parallel()
	var followed atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		followed.Add(1)
		http.NotFound(w, r)
	}))
	defer elsewhere.Close()
	is := newIssuer(t, func(b string) string { return b + "/moved-jwks" })
	mux := http.NewServeMux()
	mux.HandleFunc("/moved-jwks", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/jwks", http.StatusTemporaryRedirect)
	})
	mux.Handle("/", is.srv.Config.Handler)
	is.srv.Config.Handler = mux
	moved := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusFound)
	}))
	defer moved.Close()
	for name, tc := range map[string]struct{ token, metadata, want string }{
		"metadata":     {moved.URL + "/token", "", "HTTP 302, a redirect: not followed"},
		"metadata_url": {is.srv.URL + "/token", moved.URL + "/.well-known/openid-configuration", "HTTP 302, a redirect: not followed"},
		"jwks_uri":     {is.srv.URL + "/dex/token", "", "HTTP 307, a redirect: not followed"},
	} {
		_, _, err := Discover(context.Background(), &http.Client{}, tc.token, tc.metadata)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want …%s…", name, err, tc.want)
		}
	}
	if n := followed.Load(); n != 0 {
		t.Errorf("%d redirects followed", n)
	}
}
