// Package smoke is `tokex smoke`: one real token exchange as agent 0
// before any load, the issued token decoded and its claims checked against
// what the campaign asked for.
package smoke

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/subject"
)

// Options are what one smoke exchange needs.
type Options struct {
	Cfg      config.Campaign
	Key      *subject.Key
	Secret   string
	URL      string      // the token endpoint the request goes to
	TLS      *tls.Config // see TLSConfig
	Lifetime time.Duration
}

// TLSConfig trusts what the campaign trusts for target: target.ca_file,
// or nothing at all with target.insecure / kube.insecure (or insecure).
func TLSConfig(c *config.Campaign, target string, insecure bool) (*tls.Config, error) {
	tu, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: tu.Hostname(), //nolint:gosec // opt-in
		InsecureSkipVerify: insecure || c.Target.InsecureSkipVerify || c.Kube.InsecureSkipVerify}
	if c.Target.CAFile != "" {
		pem, err := tlscert.ReadPEM(c.Target.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = tlscert.Pool(pem)
	}
	return cfg, nil
}

// Run performs the exchange and writes to out what happened: the request
// (never the secret), the answer and the decoded token (truncated and made
// printable: a target may be hostile), then each check. passed: the
// exchange succeeded and every check held; err: it could not be performed.
func Run(ctx context.Context, out io.Writer, o Options) (passed bool, err error) {
	c := o.Cfg
	client := c.ClientID(0)
	m := &subject.Minter{Key: o.Key, Issuer: c.Subject.Issuer, Lifetime: c.Subject.Lifetime, Users: c.Users.Names(), Shape: c.Subject.Shape(),
		Prefix: fmt.Sprintf("smoke-%d-", time.Now().UnixNano())}
	tok, err := m.Mint(client)
	if err != nil {
		return false, err
	}
	body := c.Request.Template().Compile()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.URL, strings.NewReader(body.Form(tok, client, o.Secret)))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if body.Auth() == exchange.AuthBasic {
		req.Header.Set("Authorization", exchange.BasicAuth(client, o.Secret))
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: o.TLS, ForceAttemptHTTP2: true},
		CheckRedirect: exchange.NoRedirect}
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return false, fmt.Errorf("exchange: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	fmt.Fprintf(out, "POST %s as %s (client_secret_%s, secret not shown): HTTP %d in %s\n", o.URL, client,
		strings.TrimPrefix(string(body.Auth()), "client_secret_"), resp.StatusCode, time.Since(start).Round(time.Microsecond))
	outcome, detail := exchange.Classify(resp.StatusCode, raw)
	if outcome != exchange.OutcomeOK {
		var desc string
		exact(raw, map[string]any{"error_description": &desc})
		fmt.Fprintf(out, "✗ exchange failed: %s %s %s\n", outcome, detail, printable(desc, 200))
		return false, nil
	}
	return checkToken(out, raw, &c, client, o.Lifetime), nil
}

// claims are the issued token's claims the checks read.
type claims struct {
	Sub, Scope, ActSub string
	Aud                []string
	Iat, Exp           int64
}

// checkToken prints the issued token and checks its claims.
func checkToken(out io.Writer, raw []byte, c *config.Campaign, client string, lifetime time.Duration) bool {
	var r exchange.Response
	exact(raw, map[string]any{"access_token": &r.AccessToken, "issued_token_type": &r.IssuedTokenType,
		"token_type": &r.TokenType, "expires_in": &r.ExpiresIn, "scope": &r.Scope})
	fmt.Fprintf(out, "issued_token_type %s, token_type %s, expires_in %d, scope %q\naccess_token %s\n",
		printable(r.IssuedTokenType, 100), printable(r.TokenType, 100), r.ExpiresIn, r.Scope, printable(trunc(r.AccessToken, 24), 30))
	parts := strings.Split(r.AccessToken, ".")
	if len(parts) != 3 {
		fmt.Fprintln(out, "✗ the access token is not a JWT")
		return false
	}
	hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
	pay, _ := base64.RawURLEncoding.DecodeString(parts[1])
	fmt.Fprintf(out, "header  %s\nclaims  %s\n", printable(string(hdr), 2000), printable(string(pay), 2000))
	cl := readClaims(pay)
	user := c.Users.Names()[0] // the first token's subject
	wantAud := append(append([]string{}, c.Request.Resources...), c.Request.Audiences...)
	checks := []struct {
		name string
		ok   bool
		got  string
	}{
		{"sub is the subject's user " + user, cl.Sub == user, printable(cl.Sub, 100)},
		{"act.sub is the client " + client, cl.ActSub == client, printable(cl.ActSub, 100)},
		{"aud is " + strings.Join(wantAud, " "), slices.Equal(cl.Aud, wantAud), printable(strings.Join(cl.Aud, " "), 200)},
		{"scope is " + c.Request.Scope, cl.Scope == c.Request.Scope, printable(cl.Scope, 200)},
		{"exp − iat is " + lifetime.String(), time.Duration(cl.Exp-cl.Iat)*time.Second == lifetime, (time.Duration(cl.Exp-cl.Iat) * time.Second).String()},
	}
	passed := true
	for _, ch := range checks {
		if ch.ok {
			fmt.Fprintf(out, "✓ %s\n", ch.name)
		} else {
			passed = false
			fmt.Fprintf(out, "✗ %s (got %s)\n", ch.name, ch.got)
		}
	}
	return passed
}

// readClaims reads the claims by exact name: they are case-sensitive
// (RFC 7519 §4). aud may be one string or an array.
func readClaims(payload []byte) claims {
	var cl claims
	var aud, act json.RawMessage
	exact(payload, map[string]any{"sub": &cl.Sub, "aud": &aud, "scope": &cl.Scope, "iat": &cl.Iat, "exp": &cl.Exp, "act": &act})
	exact(act, map[string]any{"sub": &cl.ActSub})
	if json.Unmarshal(aud, &cl.Aud) != nil {
		var one string
		_ = json.Unmarshal(aud, &one)
		cl.Aud = []string{one}
	}
	return cl
}

// exact decodes members of a JSON object by exact name into fields
// (encoding/json would also fill a struct field from "SUB" or "ſub").
func exact(raw []byte, fields map[string]any) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	for name, dst := range fields {
		if v, ok := m[name]; ok {
			_ = json.Unmarshal(v, dst)
		}
	}
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// printable makes text a target chose safe for a terminal: control and
// bidirectional-override characters become '?', and it is cut at max bytes.
func printable(s string, max int) string {
	s = trunc(s, max)
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return '?'
		}
		return r
	}, s)
}
