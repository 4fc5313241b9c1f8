package cli

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

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/termsafe"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/runner/kube"
	"github.com/tokex-dev/tokex/subject"
)

func newSmokeCmd() *cobra.Command {
	o := &runOptions{kube: newKubeConn()}
	var direct string
	var lifetime time.Duration
	cmd := &cobra.Command{
		Use:   "smoke",
		Short: "One real token exchange before any load, with the issued token decoded and checked",
		Long: `Perform one token exchange as agent 0 and check the issued token: sub is the
subject token's user, act.sub is the client, aud is the requested resource,
scope is the requested scope and exp − iat is the expected lifetime. Without
--url it goes through a port-forward to the engine Service (kube.engines),
like the article's smoke test. Tokens and secrets are printed truncated.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if direct != "" && o.target == "" { // a remote target: stored secret and subject key
				_ = cmd.Flags().Set("target", direct)
			}
			if err := o.complete(cmd); err != nil {
				return &exitError{code: ExitCannotRun, err: err}
			}
			c := o.cfg
			target := c.Target.URL
			if direct != "" {
				target = direct
			}
			if target == "" {
				return &exitError{code: ExitCannotRun, err: fmt.Errorf("give --url, or target.url with kube.engines.service")}
			}
			tu, err := url.Parse(target)
			if err != nil {
				return &exitError{code: ExitCannotRun, err: err}
			}
			tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: tu.Hostname(), InsecureSkipVerify: c.Target.InsecureSkipVerify || c.Kube.InsecureSkipVerify} //nolint:gosec // opt-in
			if c.Target.CAFile != "" {
				pem, err := tlscert.ReadPEM(c.Target.CAFile)
				if err != nil {
					return &exitError{code: ExitCannotRun, err: err}
				}
				tlsCfg.RootCAs = tlscert.Pool(pem)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			out := termsafe.Writer(cmd.OutOrStdout()) // what the server answers is shown, never obeyed
			if direct == "" && c.Kube.Engines.Service != "" {
				if err := o.kube.connect(c.Kube.Namespace); err != nil {
					return &exitError{code: ExitCannotRun, err: err}
				}
				ns := c.Kube.Engines.Namespace
				if ns == "" {
					ns = o.kube.Namespace
				}
				local, stop, err := kube.Forward(ctx, o.kube.Config, o.kube.Client, ns, c.Kube.Engines.Service, c.Kube.Engines.Port)
				if err != nil {
					return &exitError{code: ExitCannotRun, err: err}
				}
				defer stop()
				fmt.Fprintf(out, "port-forward 127.0.0.1:%d → service %s/%s:%d\n", local, ns, c.Kube.Engines.Service, c.Kube.Engines.Port)
				tu.Host = fmt.Sprintf("127.0.0.1:%d", local)
			}
			return smoke(ctx, out, o, tu.String(), tlsCfg, lifetime)
		},
	}
	o.campaignFlags(cmd)
	cmd.Flags().StringVar(&direct, "url", "", "token endpoint to call directly (no port-forward)")
	cmd.Flags().DurationVar(&lifetime, "lifetime", 5*time.Minute, "expected issued-token lifetime (exp − iat)")
	cmd.Flags().BoolVar(&o.insecure, "insecure", false, "do not verify the server's TLS certificate")
	return cmd
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func smoke(ctx context.Context, out io.Writer, o *runOptions, target string, tlsCfg *tls.Config, lifetime time.Duration) error {
	c := o.cfg
	if o.insecure {
		tlsCfg.InsecureSkipVerify = true
	}
	client := c.ClientID(0)
	m := &subject.Minter{Key: o.key, Issuer: c.Subject.Issuer, Lifetime: c.Subject.Lifetime, Users: c.Users.Names(), Shape: c.Subject.Shape(),
		Prefix: fmt.Sprintf("smoke-%d-", time.Now().UnixNano())}
	tok, err := m.Mint(client)
	if err != nil {
		return &exitError{code: ExitCannotRun, err: err}
	}
	body := c.Request.Template().Compile()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(body.Form(tok, client, o.secret)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if body.Auth() == exchange.AuthBasic {
		req.Header.Set("Authorization", exchange.BasicAuth(client, o.secret))
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg, ForceAttemptHTTP2: true},
		CheckRedirect: exchange.NoRedirect}
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return &exitError{code: ExitCannotRun, err: fmt.Errorf("exchange: %w", err)}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	fmt.Fprintf(out, "POST %s as %s (client_secret_%s, secret not shown): HTTP %d in %s\n", target, client, strings.TrimPrefix(string(body.Auth()), "client_secret_"), resp.StatusCode, time.Since(start).Round(time.Microsecond))
	outcome, detail := exchange.Classify(resp.StatusCode, raw)
	if outcome != exchange.OutcomeOK {
		var desc string
		exact(raw, map[string]any{"error_description": &desc})
		fmt.Fprintf(out, "✗ exchange failed: %s %s %s\n", outcome, detail, printable(desc, 200))
		return &exitError{code: ExitThresholds}
	}
	var r exchange.Response
	exact(raw, map[string]any{"access_token": &r.AccessToken, "issued_token_type": &r.IssuedTokenType,
		"token_type": &r.TokenType, "expires_in": &r.ExpiresIn, "scope": &r.Scope})
	fmt.Fprintf(out, "issued_token_type %s, token_type %s, expires_in %d, scope %q\naccess_token %s\n",
		printable(r.IssuedTokenType, 100), printable(r.TokenType, 100), r.ExpiresIn, r.Scope, printable(trunc(r.AccessToken, 24), 30))
	parts := strings.Split(r.AccessToken, ".")
	if len(parts) != 3 {
		fmt.Fprintln(out, "✗ the access token is not a JWT")
		return &exitError{code: ExitThresholds}
	}
	hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
	pay, _ := base64.RawURLEncoding.DecodeString(parts[1])
	fmt.Fprintf(out, "header  %s\nclaims  %s\n", printable(string(hdr), 2000), printable(string(pay), 2000))
	// Claim names are case-sensitive (RFC 7519 §4): read them exactly.
	var cl struct {
		Sub, Scope, ActSub string
		Aud, Act           json.RawMessage
		Iat, Exp           int64
	}
	exact(pay, map[string]any{"sub": &cl.Sub, "aud": &cl.Aud, "scope": &cl.Scope, "iat": &cl.Iat, "exp": &cl.Exp, "act": &cl.Act})
	exact(cl.Act, map[string]any{"sub": &cl.ActSub})
	var aud []string
	if json.Unmarshal(cl.Aud, &aud) != nil {
		var one string
		_ = json.Unmarshal(cl.Aud, &one)
		aud = []string{one}
	}
	wantAud := append(append([]string{}, c.Request.Resources...), c.Request.Audiences...)
	checks := []struct {
		name string
		ok   bool
		got  string
	}{
		{"sub is the subject's user " + subject.Users(c.Users.Count)[0], cl.Sub == subject.Users(c.Users.Count)[0], printable(cl.Sub, 100)},
		{"act.sub is the client " + client, cl.ActSub == client, printable(cl.ActSub, 100)},
		{"aud is " + strings.Join(wantAud, " "), slices.Equal(aud, wantAud), printable(strings.Join(aud, " "), 200)},
		{"scope is " + c.Request.Scope, cl.Scope == c.Request.Scope, printable(cl.Scope, 200)},
		{"exp − iat is " + lifetime.String(), time.Duration(cl.Exp-cl.Iat)*time.Second == lifetime, (time.Duration(cl.Exp-cl.Iat) * time.Second).String()},
	}
	failed := 0
	for _, ch := range checks {
		if ch.ok {
			fmt.Fprintf(out, "✓ %s\n", ch.name)
		} else {
			failed++
			fmt.Fprintf(out, "✗ %s (got %s)\n", ch.name, ch.got)
		}
	}
	if failed > 0 {
		return &exitError{code: ExitThresholds}
	}
	fmt.Fprintln(out, "smoke test passed")
	return nil
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
