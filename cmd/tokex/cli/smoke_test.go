package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestSmokeNeverFollowsRedirects is issue 9 item 7 for tokex smoke: a 307
// must not carry the secret or the subject token to the redirect target, in
// client_secret_basic or client_secret_post.
func TestSmokeNeverFollowsRedirects(t *testing.T) {
	const secret = "smoke-secret-123456"
	t.Setenv("TOKEX_HOME", t.TempDir())
	t.Setenv("TOKEX_CLIENT_SECRET", secret)
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
	}))
	defer other.Close()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/as/token.oauth2", http.StatusTemporaryRedirect)
	}))
	defer target.Close()
	post := filepath.Join(t.TempDir(), "post.yaml")
	_ = os.WriteFile(post, []byte("request:\n  auth_method: client_secret_post\n"), 0o600)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"client_secret_basic", nil},
		{"client_secret_post", []string{"--config", post}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(append([]string{"smoke", "--url", target.URL + "/as/token.oauth2"}, tc.args...), &out, &errb)
			if code != ExitThresholds || !strings.Contains(out.String(), "HTTP 307") || !strings.Contains(out.String(), "http_error 307") {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
			}
			if n := elsewhere.Load(); n != 0 {
				t.Fatalf("the redirect target received %d requests", n)
			}
		})
	}
}

// TestSmokePrintsNoTargetControlText: what a hostile target answers is
// printed without terminal control sequences, and its error code only if
// registered.
func TestSmokePrintsNoTargetControlText(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	t.Setenv("TOKEX_CLIENT_SECRET", "smoke-secret-123456")
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"error":"smoke-secret-123456","error_description":"\u001b]0;pwned\u0007\u001b[2Jgone"}`))
	}))
	defer target.Close()
	var out, errb bytes.Buffer
	code := Main([]string{"smoke", "--url", target.URL}, &out, &errb)
	if code != ExitThresholds || !strings.Contains(out.String(), "oauth_error other") {
		t.Fatalf("exit %d\n%q", code, out.String())
	}
	if strings.ContainsRune(out.String(), 0x1b) || strings.ContainsRune(out.String(), 0x07) {
		t.Errorf("control characters printed: %q", out.String())
	}
	if strings.Contains(out.String(), "smoke-secret-123456") {
		t.Error("the secret was printed")
	}
}

// TestSmokeUsesTheCampaignCheck: smoke passes a third-party server whose
// exchange succeeds though its token is not the article's (an opaque
// token, no metadata), and applies check.required, check.token_type and
// check.verify as a campaign does.
func TestSmokeUsesTheCampaignCheck(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	t.Setenv("TOKEX_CLIENT_SECRET", "smoke-secret-123456")
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/token" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"access_token":"opaque-ab12","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"bearer"}`))
	}))
	defer target.Close()
	cfg := func(y string) string {
		p := filepath.Join(t.TempDir(), "c.yaml")
		_ = os.WriteFile(p, []byte(y), 0o600)
		return p
	}
	for _, tc := range []struct {
		name, config string
		code         int
		want         string
	}{
		{"default check, no metadata", "", 0, "– issued token not verified: no metadata with a jwks_uri"},
		{"token_type", "check: {token_type: DPoP}\n", ExitThresholds, `✗ exchange failed: bad_response 200 token_type is "bearer", want DPoP`},
		{"required", "check: {required: [access_token, refresh_token]}\n", ExitThresholds, "✗ exchange failed: bad_response 200 the response has no refresh_token"},
		{"verify asked", "check: {verify: {sample: 0.1}}\n", ExitThresholds, "✗ issued token not verifiable: no metadata with a jwks_uri"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"smoke", "--url", target.URL + "/token"}
			if tc.config != "" {
				args = append(args, "--config", cfg(tc.config))
			}
			var out, errb bytes.Buffer
			if code := Main(args, &out, &errb); code != tc.code || !strings.Contains(out.String(), tc.want) {
				t.Fatalf("exit %d, want %d and %q\n%s\n%s", code, tc.code, tc.want, out.String(), errb.String())
			}
		})
	}
}
