// Package smoke is `tokex smoke`: one real token exchange as agent 0
// before any load, checked as the campaign checks responses (check:), the
// issued token decoded and verified as check.verify does; then one
// exchange as every other agent, so that a client the server does not
// know is named before a campaign fails on it.
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
	"strings"
	"time"
	"unicode"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/subject"
)

// Options are what one smoke exchange needs.
type Options struct {
	Cfg    config.Campaign
	Key    *jose.Key
	Secret string
	// ClientKeys sign each agent's client assertion (private_key_jwt);
	// ClientKey, agent 0's when ClientKeys is empty.
	ClientKeys []*jose.Key
	ClientKey  *jose.Key
	// ClientCerts are each agent's certificate (tls_client_auth); without
	// them every exchange presents TLS's.
	ClientCerts []tls.Certificate
	URL         string      // the token endpoint the request goes to
	TLS         *tls.Config // see TLSConfig
	Lifetime    time.Duration
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

// Run performs the exchange as agent 0 and writes to out what happened:
// the request (never the secret), the answer and the decoded token
// (truncated and made printable: a target may be hostile), then each
// check; then one exchange as every other agent, naming the clients that
// failed (issue 23: a smoke test as agent 0 passed with 8 of 10 clients
// unregistered). passed: every exchange succeeded and every check held;
// err: agent 0's exchange could not be performed.
func Run(ctx context.Context, out io.Writer, o Options) (passed bool, err error) {
	c := o.Cfg
	client := c.ClientID(0)
	m := minter(o)
	body := c.Request.Template().Compile()
	a, err := exchangeAs(ctx, o, m, body, 0)
	if err != nil {
		return false, fmt.Errorf("exchange: %w", err)
	}
	fmt.Fprintf(out, "POST %s as %s (%s, credentials not shown): HTTP %d in %s over %s\n", o.URL, client,
		body.Auth(), a.status, a.took.Round(time.Microsecond), a.proto)
	// The campaign's own check (check.required, check.token_type).
	outcome, detail, why := c.Check.Exchange().Classify(a.status, a.raw)
	if outcome != exchange.OutcomeOK {
		fmt.Fprintf(out, "✗ exchange failed: %s %s %s\n", outcome, detail, printable(failure(outcome, why, a.raw), 200))
		everyAgent(ctx, out, o, m, body, false)
		return false, nil
	}
	showToken(out, a.raw, &c, client)
	expect := c.Expect()
	if o.Lifetime > 0 {
		expect.Lifetime = o.Lifetime
	}
	passed = verify(ctx, out, c.Check.Verify, expect, o, a.raw, client)
	return everyAgent(ctx, out, o, m, body, true) && passed, nil
}

// minter mints the smoke test's subject tokens.
func minter(o Options) *subject.Minter {
	c := o.Cfg
	return &subject.Minter{Key: o.Key, Issuer: c.Subject.Issuer, Lifetime: c.Subject.Lifetime, Users: c.Users.Names(), Shape: c.Subject.Shape(),
		Prefix: fmt.Sprintf("smoke-%d-", time.Now().UnixNano())}
}

// failure is what the server said about a failed exchange.
func failure(outcome exchange.Outcome, why string, raw []byte) string {
	if why == "" || outcome != exchange.OutcomeBadResponse {
		exact(raw, map[string]any{"error_description": &why})
	}
	return why
}

// answer is one exchange's response.
type answer struct {
	status int
	raw    []byte
	proto  string
	took   time.Duration
}

// exchangeAs performs one exchange as agent i, with its credential (its
// client assertion, its certificate), over the protocol and connection
// handling the campaign's generator uses.
func exchangeAs(ctx context.Context, o Options, m *subject.Minter, body exchange.Body, i int) (answer, error) {
	c := o.Cfg
	client := c.ClientID(i)
	tok, err := m.Mint(client)
	if err != nil {
		return answer{}, err
	}
	cred, err := credential(o, body.Auth(), i)
	if err != nil {
		return answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.URL, strings.NewReader(body.Form(tok, client, cred)))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if body.Auth() == exchange.AuthBasic {
		req.Header.Set("Authorization", exchange.BasicAuth(client, o.Secret))
	}
	tlsCfg := o.TLS.Clone()
	if i < len(o.ClientCerts) {
		tlsCfg.Certificates = o.ClientCerts[i : i+1]
	}
	tr := &http.Transport{TLSClientConfig: tlsCfg, Protocols: c.Target.HTTPProtocols(), DisableKeepAlives: c.Target.NewConnectionPerRequest()}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Timeout: 30 * time.Second, Transport: tr, CheckRedirect: exchange.NoRedirect}
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return answer{status: resp.StatusCode, raw: raw, proto: resp.Proto, took: time.Since(start)}, nil
}

// credential is what authenticates agent i besides its id: its secret, or
// for private_key_jwt a fresh client assertion for the target's token
// endpoint (request.client_assertion.audience when set).
func credential(o Options, m exchange.AuthMethod, i int) (string, error) {
	if m != exchange.AuthPrivateKeyJWT {
		return o.Secret, nil
	}
	key := o.ClientKey
	if i < len(o.ClientKeys) {
		key = o.ClientKeys[i]
	}
	if key == nil || (i > 0 && i >= len(o.ClientKeys)) {
		return "", fmt.Errorf("private_key_jwt: no client key for agent %d", i)
	}
	c := o.Cfg
	aud := c.Request.ClientAssertion.Audience
	if aud == "" {
		aud = c.Target.URL
	}
	if aud == "" {
		aud = o.URL
	}
	a := &subject.Asserter{Key: key, ClientID: c.ClientID(i), Audience: aud, Lifetime: c.Request.ClientAssertion.Lifetime,
		Prefix: fmt.Sprintf("smoke-%d-", time.Now().UnixNano())}
	return a.Assert()
}

// claims are the issued token's claims shown beside the subject's.
type claims struct {
	Sub, Scope, ActSub string
	Aud                []string
	Iat, Exp           int64
}

// showToken prints the response and, for a JWT, its header and claims, and
// notes whether sub and act.sub are the article's (the subject's user and
// the client): a third-party server may well use others, so these are not
// checks.
func showToken(out io.Writer, raw []byte, c *config.Campaign, client string) {
	var r exchange.Response
	exact(raw, map[string]any{"access_token": &r.AccessToken, "issued_token_type": &r.IssuedTokenType,
		"token_type": &r.TokenType, "expires_in": &r.ExpiresIn, "scope": &r.Scope})
	fmt.Fprintf(out, "✓ the response passes the check\nissued_token_type %s, token_type %s, expires_in %d, scope %q\naccess_token %s\n",
		printable(r.IssuedTokenType, 100), printable(r.TokenType, 100), r.ExpiresIn, printable(r.Scope, 200), printable(trunc(r.AccessToken, 24), 30))
	parts := strings.Split(r.AccessToken, ".")
	if len(parts) != 3 {
		return
	}
	hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
	pay, _ := base64.RawURLEncoding.DecodeString(parts[1])
	fmt.Fprintf(out, "header  %s\nclaims  %s\n", printable(string(hdr), 2000), printable(string(pay), 2000))
	cl := readClaims(pay)
	user := c.Users.Names()[0] // the first token's subject
	for _, n := range []struct{ name, want, got string }{{"sub", user, cl.Sub}, {"act.sub", client, cl.ActSub}} {
		if n.got == n.want {
			fmt.Fprintf(out, "✓ %s is %s, as the article's server\n", n.name, n.want)
		} else {
			fmt.Fprintf(out, "· %s is %s, not %s as the article's server (a note, not a check)\n", n.name, printable(n.got, 100), n.want)
		}
	}
}

// verify verifies the issued token as check.verify does under load:
// signature against the keys of the target's metadata, iss, exp, and what
// expect asks. Without check.verify a target without metadata is noted,
// not failed.
func verify(ctx context.Context, out io.Writer, v config.Verify, expect exchange.Expect, o Options, raw []byte, client string) bool {
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: o.TLS.Clone()}}
	ver, where, err := exchange.Discover(ctx, hc, o.URL, v.MetadataURL)
	if err != nil {
		if v.Sample > 0 {
			fmt.Fprintf(out, "✗ issued token not verifiable: %s\n", printable(err.Error(), 600))
			return false
		}
		fmt.Fprintf(out, "– issued token not verified: %s\n", printable(err.Error(), 600))
		return true
	}
	ver.Expect = expect
	what := []string{"signature", "iss " + ver.Issuer, "exp"}
	if expect.Audience != "" {
		what = append(what, "aud holds "+expect.Audience)
	}
	if expect.Client {
		what = append(what, "client_id or act.sub is "+client)
	}
	if expect.Lifetime > 0 {
		what = append(what, "exp − iat is "+expect.Lifetime.String())
	}
	if err := ver.Verify(raw, client); err != nil {
		fmt.Fprintf(out, "✗ %s (checked against the keys of %s)\n", err, printable(where, 300))
		return false
	}
	fmt.Fprintf(out, "✓ issued token verified against the keys of %s: %s\n", printable(where, 300), printable(strings.Join(what, ", "), 600))
	return true
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
