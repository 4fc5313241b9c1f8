package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/safefs"
	"github.com/tokex-dev/tokex/internal/statedir"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/subject"
)

type jwksOptions struct {
	config, keyFile, alg, kid string
	serve, issuerURL          string
	tls                       bool
	certFile, keyPEM, certOut string
	hostnames                 []string
	clients, actors           bool
	agents                    int
	out, clientCAOut          string
}

func newJWKSCmd() *cobra.Command {
	o := &jwksOptions{}
	cmd := &cobra.Command{
		Use:   "jwks",
		Short: "Print the subject keys' JWKS, or serve them as a minimal OpenID Connect issuer",
		Long: `Print the public JWK Set of the keys tokex signs subject tokens with, to
configure an authorization server with. tokex stores one key per algorithm
(RS256, ES256, EdDSA), each created once and reused, so a server that trusts
them keeps working; --subject-alg or --config selects one.

--serve HOST:PORT serves them as a minimal OpenID Connect issuer: the
discovery document (/.well-known/openid-configuration, also at RFC 8414's
/.well-known/oauth-authorization-server) with issuer, jwks_uri and the
signing algorithms, and the JWKS — what Dex's OIDC connector, Keycloak's
identity provider or zitadel need to trust tokex's subject tokens. Plain HTTP
on a loopback address; HTTPS with --tls (a generated certificate, written to
--cert-out for the server to trust) or --tls-cert/--tls-key. It prints the
exact subject.issuer to configure.

--clients prints instead the agents' private_key_jwt public keys: a JSON
object of one JWK Set per client id (perf-agent-0 …), the form tokex serve's
default_clients.jwks_file reads. tokex stores one key per agent
(agents.client_key.alg, ES256 by default), created once and reused, unless
agents.client_key.file gives one for all. --out DIR also writes
DIR/<client id>.jwks.json for each; with --serve the issuer also serves
each at /clients/<client id>/jwks.json, for a server that registers a
jwks_uri per client.

Actor tokens (RFC 8693 actor_token: each agent's own workload identity) are
signed by a second key per algorithm (actor-key-<alg>.pem in the state
folder) under an issuer of their own, <issuer>/actors: --serve publishes its
discovery document and JWKS there too (a server trusts it as its actor-token
issuer: tokex serve's subject.actor), and --actors prints the actor keys'
JWKS instead of the subject keys'.

--client-ca-out FILE writes the certificate of tokex's stored client CA,
which issues each agent's tls_client_auth certificate (subject
CN=<client id>): the server trusts it and registers each client with
tls_client_auth_subject_dn CN=<client id>.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "campaign YAML: its subject.alg, subject.key_file and subject.kid select the key")
	f.StringVar(&o.keyFile, "subject-key", "", "subject-token signing key (PEM) instead of the stored ones")
	f.StringVar(&o.alg, "subject-alg", "", "only the stored key of this algorithm: RS256|ES256|EdDSA (default: all three)")
	f.StringVar(&o.kid, "kid", "", "publish the key under this kid (default: its RFC 7638 thumbprint)")
	f.StringVar(&o.serve, "serve", "", "serve a minimal OIDC issuer (discovery + JWKS) on HOST:PORT until interrupted")
	f.StringVar(&o.issuerURL, "issuer-url", "", "the issuer URL servers reach it at (default: scheme://HOST:PORT served on)")
	f.BoolVar(&o.tls, "tls", false, "serve HTTPS with a generated self-signed certificate")
	f.StringVar(&o.certOut, "cert-out", "", "write the generated certificate (PEM) here, for the server to trust (implies --tls)")
	f.StringSliceVar(&o.hostnames, "hostname", nil, "extra DNS name or IP of the generated certificate (repeatable)")
	f.StringVar(&o.certFile, "tls-cert", "", "serve HTTPS with this certificate (PEM)")
	f.StringVar(&o.keyPEM, "tls-key", "", "private key (PEM) of --tls-cert")
	f.BoolVar(&o.clients, "clients", false, "the agents' private_key_jwt public keys: one JWKS per client id")
	f.BoolVar(&o.actors, "actors", false, "print the actor-token keys' JWKS (the agents' workload identities) instead of the subject keys'")
	f.IntVar(&o.agents, "agents", 0, "with --clients: how many agents (default agents.count of --config, else 10)")
	f.StringVarP(&o.out, "out", "o", "", "with --clients: also write <client id>.jwks.json for each into this folder")
	f.StringVar(&o.clientCAOut, "client-ca-out", "", "write the certificate of the CA of the agents' tls_client_auth certificates here")
	return cmd
}

func (o *jwksOptions) run(cmd *cobra.Command) error {
	if o.clientCAOut != "" {
		return o.writeClientCA(cmd)
	}
	if o.config != "" {
		c, _, err := config.Load(o.config, "")
		if err != nil {
			return err
		}
		o.keyFile, o.alg, o.kid = first(o.keyFile, c.Subject.KeyFile), first(o.alg, c.Subject.Alg), first(o.kid, c.Subject.Kid)
	}
	keys, err := subject.Keys(o.keyFile, o.alg, o.kid)
	if err != nil {
		return fmt.Errorf("subject key: %w", err)
	}
	var clients map[string][]byte
	if o.clients {
		if clients, err = o.clientJWKS(cmd); err != nil || o.serve == "" {
			return err
		}
	}
	actors, err := subject.ActorKeys(o.alg)
	if err != nil {
		return fmt.Errorf("actor key: %w", err)
	}
	if o.serve == "" {
		if o.actors {
			keys = actors
		}
		b, err := jose.JWKS(keys...)
		if err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), string(b))
		return nil
	}
	opt := subject.IssuerOptions{Addr: o.serve, Keys: keys, URL: o.issuerURL, Clients: clients, Actors: actors}
	certNote, err := o.issuerCert(&opt)
	if err != nil {
		return err
	}
	s, err := subject.ServeIssuer(opt)
	if err != nil {
		return err
	}
	defer s.Close()
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "tokex subject issuer on %s (Ctrl-C stops it)\n", s.Addr())
	fmt.Fprintf(out, "  subject.issuer  %s\n", s.URL)
	fmt.Fprintf(out, "  discovery       %s%s\n", s.URL, subject.DiscoveryPath)
	fmt.Fprintf(out, "  jwks_uri        %s\n", s.JWKSURL)
	var ks []string
	for _, k := range keys {
		ks = append(ks, k.Alg+" kid "+k.Kid)
	}
	fmt.Fprintf(out, "  keys            %s\n", strings.Join(ks, ", "))
	ks = ks[:0]
	for _, k := range actors {
		ks = append(ks, k.Alg+" kid "+k.Kid)
	}
	fmt.Fprintf(out, "  actor issuer    %s (jwks_uri %s; keys %s)\n", s.ActorURL, s.ActorJWKSURL, strings.Join(ks, ", "))
	if len(clients) > 0 {
		fmt.Fprintf(out, "  client JWKS     %s%s (%d clients)\n", s.URL, fmt.Sprintf(subject.ClientJWKSPath, "<client id>"), len(clients))
	}
	if certNote != "" {
		fmt.Fprintf(out, "  certificate     %s\n", certNote)
	}
	fmt.Fprintf(out, "configure the server to trust the issuer %s, and tokex with --subject-issuer %s (subject.issuer)\n", s.URL, s.URL)
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// issuerCert sets the issuer's certificate from --tls-cert, or the stored
// generated one with --tls or --cert-out, and says where it is.
func (o *jwksOptions) issuerCert(opt *subject.IssuerOptions) (certNote string, err error) {
	switch {
	case o.certFile != "" || o.keyPEM != "":
		pair, err := tlscert.LoadPair(o.certFile, o.keyPEM)
		if err != nil {
			return "", fmt.Errorf("--tls-cert: %w", err)
		}
		opt.Cert, certNote = &pair, o.certFile
	case o.tls || o.certOut != "":
		certPath, keyPath, err := statedir.IssuerCertPaths()
		if err != nil {
			return "", err
		}
		p, created, err := tlscert.Stored(certPath, keyPath, certHosts(o.serve, o.issuerURL, o.hostnames))
		if err != nil {
			return "", fmt.Errorf("issuer certificate: %w", err)
		}
		how := "stored"
		if created {
			how = "created"
		}
		opt.Cert, certNote = &p.Cert, fmt.Sprintf("%s (%s, self-signed, reused at every start; --cert-out FILE copies it)", certPath, how)
		if o.certOut != "" {
			if err := os.WriteFile(o.certOut, p.CertPEM, 0o644); err != nil {
				return "", fmt.Errorf("--cert-out: %w", err)
			}
			certNote = o.certOut + " (written; the server must trust it; the same certificate at every start)"
		}
	}
	return certNote, nil
}

// writeClientCA writes the stored client CA's certificate and says how
// the server registers the agents.
func (o *jwksOptions) writeClientCA(cmd *cobra.Command) error {
	ca, path, err := config.StoredClientCA()
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.clientCAOut, ca.CertPEM, 0o644); err != nil {
		return fmt.Errorf("--client-ca-out: %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "tokex client CA written to %s (stored in %s)\n", o.clientCAOut, path)
	fmt.Fprintln(cmd.OutOrStdout(), "the server trusts it for client certificates; each agent's certificate has the subject DN CN=<client id>"+
		" (tls_client_auth_subject_dn), created on the first tls_client_auth run")
	return nil
}

// clientJWKS prints the agents' private_key_jwt public keys, one JWKS per
// client id, writes each to --out, and returns them.
func (o *jwksOptions) clientJWKS(cmd *cobra.Command) (map[string][]byte, error) {
	c := config.Article()
	if o.config != "" {
		var err error
		if c, _, err = config.Load(o.config, ""); err != nil {
			return nil, err
		}
	}
	if o.agents != 0 {
		c.Agents.Count = o.agents
	}
	if c.Agents.Count < 1 || c.Agents.Count > config.MaxAgents {
		return nil, fmt.Errorf("--agents: must be between 1 and %d", config.MaxAgents)
	}
	keys, source, err := c.RegisteredClientKeys()
	if err != nil {
		return nil, err
	}
	var dir *safefs.Dir
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return nil, fmt.Errorf("--out: %w", err)
		}
		if dir, err = safefs.Open(o.out); err != nil {
			return nil, fmt.Errorf("--out: %w", err)
		}
		defer dir.Close()
	}
	all := map[string]json.RawMessage{}
	byID := map[string][]byte{}
	for i, k := range keys {
		b, err := jose.JWKS(k)
		if err != nil {
			return nil, err
		}
		id := c.ClientID(i)
		all[id], byID[id] = b, b
		if dir != nil {
			if err := dir.WriteFile(id+".jwks.json", b, nil); err != nil {
				return nil, fmt.Errorf("--out: %w", err)
			}
		}
	}
	b, _ := json.MarshalIndent(all, "", "  ")
	fmt.Fprintln(cmd.OutOrStdout(), string(b))
	fmt.Fprintf(cmd.ErrOrStderr(), "%d clients' public keys from %s\n", len(keys), source)
	return byID, nil
}

// certHosts are the names a generated certificate is valid for: loopback,
// the listen host (unless a wildcard), the issuer URL's host and any given.
func certHosts(addr, issuerURL string, extra []string) []string {
	hosts := append([]string{"localhost", "127.0.0.1", "::1"}, extra...)
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" && h != "0.0.0.0" && h != "::" {
		hosts = append(hosts, h)
	}
	if u, err := url.Parse(issuerURL); err == nil && u.Hostname() != "" {
		hosts = append(hosts, u.Hostname())
	}
	return hosts
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
