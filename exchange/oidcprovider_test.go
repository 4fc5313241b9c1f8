package exchange

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// oidcProvider starts testdata/oidc-provider/cc-server.mjs — oidc-provider
// 9.13.3 with client_credentials — and returns its issuer, or skips when
// node or the package is not there: the package is installed with `npm ci`
// in testdata/oidc-provider (node_modules is not committed) or found in
// $TOKEX_OIDC_PROVIDER_DIR/node_modules.
func oidcProvider(t *testing.T, secret string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the oidc-provider test needs it")
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "oidc-provider", "cc-server.mjs"))
	dir := os.Getenv("TOKEX_OIDC_PROVIDER_DIR")
	if dir == "" {
		dir = filepath.Dir(script)
	}
	entry, _ := filepath.Abs(filepath.Join(dir, "node_modules", "oidc-provider", "lib", "index.js"))
	if _, err := os.Stat(entry); err != nil {
		t.Skip("oidc-provider is not installed: run npm ci in exchange/testdata/oidc-provider, or set TOKEX_OIDC_PROVIDER_DIR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "CLIENT_SECRET="+secret, "OIDC_PROVIDER=file://"+entry)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- line
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case line := <-ready:
		var r struct{ Issuer string }
		if json.Unmarshal([]byte(line), &r) != nil || r.Issuer == "" {
			t.Fatalf("oidc-provider did not start: %q", line)
		}
		return r.Issuer
	case <-time.After(30 * time.Second):
		t.Skip("oidc-provider did not start within 30 s (a busy machine): nothing judged")
	}
	return ""
}

// TestOIDCProviderClientCredentials is issue 30's baseline grant against a
// real third-party server: node oidc-provider's built-in client_credentials
// issues an RFC 9068 token (sub and client_id the client, aud the
// resource, no act) that sampled verification accepts from the provider's
// own metadata and JWKS; its refusals (a wrong secret, a client not
// allowed the grant, the jwt-bearer and token-exchange grants it lacks)
// are registered OAuth errors tokex classifies.
func TestOIDCProviderClientCredentials(t *testing.T) {
	const secret = "oidc-provider-secret-Zq9"
	issuer := oidcProvider(t, secret)
	post := func(id, sec string, v url.Values) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest("POST", issuer+"/token", strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", BasicAuth(id, sec))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, b
	}
	const resource = "https://mcp.example.internal/mcp"
	cc := url.Values{"grant_type": {GrantTypeClientCredentials}, "resource": {resource}}
	code, body := post("perf-agent-0", secret, cc)
	if o, _, why := (Check{Required: []string{"access_token"}, TokenType: "Bearer"}).Classify(code, body); o != OutcomeOK {
		t.Fatalf("client_credentials: %d %s (%s)", code, body, why)
	}
	if _, has := StringMember(body, "issued_token_type"); has {
		t.Errorf("an RFC 6749 response with issued_token_type: %s", body)
	}
	v, _, err := Discover(context.Background(), http.DefaultClient, issuer+"/token", "")
	if err != nil {
		t.Fatal(err)
	}
	v.Expect = Expect{Audience: resource, Client: true, Lifetime: 5 * time.Minute}
	if err := v.VerifyActors(body, "perf-agent-0", nil); err != nil {
		t.Fatalf("sampled verification: %v", err)
	}
	tok, _ := StringMember(body, "access_token")
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	var c struct {
		Sub      string `json:"sub"`
		ClientID string `json:"client_id"`
	}
	if json.Unmarshal(payload, &c) != nil || c.Sub != "perf-agent-0" || c.ClientID != "perf-agent-0" {
		t.Errorf("claims %s", payload)
	}
	for _, tc := range []struct {
		name, id, secret, grant string
		status                  int
		detail                  string
	}{
		{"a wrong secret", "perf-agent-0", "nope", GrantTypeClientCredentials, 401, ErrInvalidClient},
		// RFC 6749 §5.2 says unauthorized_client; oidc-provider answers invalid_request.
		{"a client without the grant", "perf-agent-1", secret, GrantTypeClientCredentials, 400, ErrInvalidRequest},
		{"jwt-bearer", "perf-agent-0", secret, GrantTypeJWTBearer, 400, ErrUnsupportedGrantType},
		{"token exchange", "perf-agent-0", secret, GrantTypeTokenExchange, 400, ErrUnsupportedGrantType},
	} {
		v := url.Values{"grant_type": {tc.grant}, "resource": {resource}, "assertion": {"x"}, "subject_token": {"x"},
			"subject_token_type": {TokenTypeAccessToken}}
		code, body := post(tc.id, tc.secret, v)
		if o, detail := Classify(code, body); code != tc.status || o != OutcomeOAuthError || detail != tc.detail {
			t.Errorf("%s: %d %s, classified %s %s", tc.name, code, body, o, detail)
		}
	}
}
