package cli

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/authserver"
	"github.com/tokex-dev/tokex/internal/confload"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/statedir"
	"github.com/tokex-dev/tokex/runner/local"
	"github.com/tokex-dev/tokex/subject"
)

type serveOptions struct {
	config        string
	addr          string
	subjectJWKS   string
	subjectCA     string
	subjectIssuer string
	clientSecret  string
	clients       int
	tls           bool
	tlsCert       string
	tlsKey        string
	signingAlg    string
	signingKey    string
	maxLifetime   time.Duration
	verbose       bool
	clientJWKS    string
	clientCA      string
}

func newServeCmd() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the reference RFC 8693 token-exchange server",
		Long: `Run tokex's reference token-exchange server: the PingFederate engine of the
seed article in miniature. With no flags it listens on 127.0.0.1:9031, accepts
the clients perf-agent-0..9 (secret from --client-secret, TOKEX_CLIENT_SECRET,
or tokex's own stored secret) and trusts subject tokens signed with tokex's
default subject key, and actor tokens signed with its stored actor keys under
the issuer <subject issuer>/actors. Besides token exchange it has the
client_credentials and jwt-bearer grants, for the clients a config allows
(default_clients.grant_types); docs/agentic.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "YAML config file (flags override it)")
	f.StringVar(&o.addr, "addr", "", "listen address HOST:PORT (default 127.0.0.1:9031)")
	f.StringVar(&o.subjectJWKS, "subject-jwks", "", "subject-token JWKS: a file or an http(s) URL")
	f.StringVar(&o.subjectCA, "subject-ca", "", "CA certificate (PEM) trusted for an https --subject-jwks")
	f.StringVar(&o.subjectIssuer, "subject-issuer", "", "required iss of subject tokens (default https://pf-perf-subject)")
	f.StringVar(&o.clientSecret, "client-secret", "", "shared secret of the default perf-agent-* clients (or TOKEX_CLIENT_SECRET)")
	f.IntVar(&o.clients, "clients", 0, "number of default perf-agent-* clients (default 10)")
	f.BoolVar(&o.tls, "tls", false, "serve HTTPS with a generated self-signed certificate")
	f.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM)")
	f.StringVar(&o.tlsKey, "tls-key", "", "private key (PEM) for --tls-cert")
	f.StringVar(&o.signingAlg, "signing-alg", "", "issued-token algorithm RS256|ES256|EdDSA (default RS256)")
	f.StringVar(&o.signingKey, "signing-key", "", "issued-token signing key (PEM); default: a fresh key per start")
	f.DurationVar(&o.maxLifetime, "max-subject-lifetime", 0, "longest subject/actor token lifetime accepted (default 1h; subject.max_lifetime)")
	f.BoolVar(&o.verbose, "verbose", false, "log at debug level")
	f.StringVar(&o.clientJWKS, "client-jwks", "", "the default clients' public keys for private_key_jwt: what 'tokex jwks --clients' prints")
	f.StringVar(&o.clientCA, "client-ca", "", "verify client certificates against this CA (PEM) for tls_client_auth; each default client's subject DN is CN=<client id>")
	return cmd
}

func (o *serveOptions) complete() (authserver.Config, *confload.Doc, error) {
	cfg := authserver.Default()
	var doc *confload.Doc
	if o.config != "" {
		var err error
		if cfg, doc, err = authserver.Load(o.config); err != nil {
			return cfg, doc, err
		}
	}
	if o.addr != "" {
		cfg.Addr = o.addr
	}
	if o.subjectJWKS != "" {
		cfg.Subject.JWKSURL, cfg.Subject.JWKSFile = "", ""
		if strings.HasPrefix(o.subjectJWKS, "http://") || strings.HasPrefix(o.subjectJWKS, "https://") {
			cfg.Subject.JWKSURL = o.subjectJWKS
		} else {
			cfg.Subject.JWKSFile = o.subjectJWKS
		}
	}
	if o.subjectCA != "" {
		cfg.Subject.CAFile = o.subjectCA
	}
	if o.subjectIssuer != "" {
		cfg.Subject.Issuer = o.subjectIssuer
	}
	if o.clients > 0 {
		cfg.DefaultClients.Count = o.clients
	}
	if o.tls {
		cfg.TLS.Enabled, cfg.TLS.SelfSigned = true, true
	}
	if o.tlsCert != "" || o.tlsKey != "" {
		cfg.TLS = authserver.TLSConfig{Enabled: true, CertFile: o.tlsCert, KeyFile: o.tlsKey}
	}
	if o.signingAlg != "" {
		cfg.Signing.Alg = o.signingAlg
	}
	if o.signingKey != "" {
		cfg.Signing.KeyFile = o.signingKey
	}
	if o.maxLifetime != 0 {
		cfg.Subject.MaxLifetime = o.maxLifetime
	}
	if o.clientJWKS != "" {
		cfg.DefaultClients.JWKSFile = o.clientJWKS
	}
	if o.clientCA != "" {
		cfg.TLS.ClientCAFile, cfg.DefaultClients.TLSClientAuthSubjectDN = o.clientCA, "CN={{client_id}}"
	}
	return cfg, doc, cfg.Validate(doc)
}

func (o *serveOptions) run(cmd *cobra.Command) error {
	cfg, _, err := o.complete()
	if err != nil {
		return err
	}
	opt := authserver.Options{Logger: authserver.NewLogger(cmd.ErrOrStderr(), o.verbose)}
	if len(cfg.Clients) == 0 {
		opt.ClientSecret = o.clientSecret
		if opt.ClientSecret == "" {
			opt.ClientSecret = os.Getenv(cfg.DefaultClients.SecretEnv)
		}
		if opt.ClientSecret == "" {
			if opt.ClientSecret, err = statedir.ClientSecret(); err != nil {
				return fmt.Errorf("default client secret: %w", err)
			}
		}
	}
	subjectSource := cfg.Subject.JWKSURL + cfg.Subject.JWKSFile
	if subjectSource == "" {
		keys, err := subject.StoredKeys()
		if err == nil {
			opt.SubjectJWKS, err = jose.JWKS(keys...)
		}
		if err != nil {
			return fmt.Errorf("stored subject keys: %w", err)
		}
		dir, _ := statedir.Dir()
		subjectSource = "tokex's stored subject keys, RS256, ES256 and EdDSA (" + dir + ")"
		if err := storedActors(&cfg, &opt); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	banner := authserver.Banner{Out: cmd.OutOrStdout(), SubjectSource: subjectSource, ClientsFrom: o.config}
	if err := authserver.Run(ctx, cfg, opt, banner, nil); err != nil {
		return err
	}
	return nil
}

// storedActors trusts tokex's stored actor keys as the actor issuer,
// subject.ActorIssuer(subject.issuer) — what `tokex jwks --serve` publishes
// beside the stored subject keys — unless the config names one.
func storedActors(cfg *authserver.Config, opt *authserver.Options) error {
	if cfg.Subject.Actor.Issuer != "" {
		return nil
	}
	keys, err := subject.ActorKeys("")
	if err == nil {
		opt.ActorJWKS, err = jose.JWKS(keys...)
	}
	if err != nil {
		return fmt.Errorf("stored actor keys: %w", err)
	}
	cfg.Subject.Actor.Issuer = subject.ActorIssuer(cfg.Subject.Issuer)
	return nil
}

// newEngineCmd is tokex run as the embedded server when no tokex-engine
// binary is found (runner/local.FindServerProgram): hidden, its flags are the
// embedded server's own.
func newEngineCmd() *cobra.Command {
	return &cobra.Command{
		Use:                local.ServerArg,
		Short:              "The reference server as the local driver's child (use tokex-engine)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := authserver.EmbeddedMain(args, cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
}
