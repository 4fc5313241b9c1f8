package local

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tokex-dev/tokex/authserver"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/owner"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/subject"
)

// EmbeddedOptions describe the reference server tokex starts for itself.
type EmbeddedOptions struct {
	Program       ServerProgram // the embedded server's program (FindServerProgram)
	Clients       int           // perf-agent-0..N-1
	ClientPrefix  string        // perf-agent-
	Secret        string        // passed through the environment, never argv
	SubjectKey    *jose.Key
	SubjectIssuer string
	// SubjectLifetime is the minted tokens' lifetime; the server accepts it
	// even when longer than its default maximum.
	SubjectLifetime time.Duration
	SigningAlg      string
	TLS             bool
	Resources       []string
	Scopes          []string
	BaseConfig      string // a tokex serve YAML to start from
	// ClientJWKS are the default clients' public keys, one JWK Set by
	// client id (private_key_jwt).
	ClientJWKS []byte
	// ClientCA is what verifies the clients' certificates, and
	// ClientSubjectDN each one's subject DN (tls_client_auth).
	ClientCA        []byte
	ClientSubjectDN string
	// ActorKey signs the agents' actor tokens (subject.ActorMinter): the
	// JWKS endpoint publishes it as the actor issuer ActorIssuer (default
	// subject.ActorIssuer(SubjectIssuer)), which the embedded server trusts for
	// actor tokens (subject.actor). nil: actor tokens are trusted as
	// subject tokens are.
	ActorKey    *jose.Key
	ActorIssuer string
	// GrantTypes the agents may use (default: token exchange only); with
	// jwt-bearer, client_auth.max_lifetime admits assertions of
	// SubjectLifetime.
	GrantTypes []string
	// PeerAudiences lets an agent ask for a token to another agent
	// (delegation.peer_audiences: the next hop of a chain); MaxActDepth is
	// delegation.max_depth (0: the server's default, 5).
	PeerAudiences bool
	MaxActDepth   int
	// Services are the clients of a chain's later hops (workload.chain),
	// registered beside the agents with their secret and grants: the
	// agents and the services are then listed clients, each of which may
	// ask for a token to another (PeerAudiences).
	Services []string
	Log      func(level, msg string)
	// Fleet makes the engine the first of several sharing its port
	// (SO_REUSEPORT, one signing key): Embedded.Fleet grows it. CPUs pins
	// this first engine (nil: unpinned).
	Fleet bool
	CPUs  []int
}

// embeddedPrefix names the temporary folder of an embedded server.
const embeddedPrefix = "tokex-embedded-"

// OnEmbeddedStart learns each child's pid when set (tests).
var OnEmbeddedStart func(pid int)

// Embedded is a running embedded server (a child process) plus the HTTPS
// JWKS endpoint of the generator's key (the article's perf-jwks-server).
type Embedded struct {
	URL     string // token endpoint
	PID     int
	Version string      // the server's build, from its ready report
	TLS     *tls.Config // trusts the child's certificate
	dir     string
	proc    *serverProcess
	jwks    *subject.IssuerServer
	// Fleet: the engines sharing the port (EmbeddedOptions.Fleet), else nil.
	Fleet *embeddedFleet
	cfg   authserver.Config // the engines' configuration
	port  int
}

// StartEmbedded starts the JWKS endpoint and the server, waits for its
// ready report, then until it answers /healthz.
func StartEmbedded(ctx context.Context, o EmbeddedOptions) (e *Embedded, err error) {
	if o.Program.Path == "" {
		return nil, errors.New("embedded server: no program")
	}
	if o.Log == nil {
		o.Log = func(string, string) {}
	}
	e = &Embedded{}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	if e.dir, err = tempFolder(o.Log); err != nil {
		return e, err
	}
	caFile, err := e.serveJWKS(o.SubjectKey, o.ActorKey)
	if err != nil {
		return e, err
	}
	cfg, err := e.serverConfig(o, caFile)
	if err != nil {
		return e, err
	}
	if o.Fleet {
		if err = e.fleetConfig(&cfg); err != nil {
			return e, err
		}
	}
	e.cfg = cfg
	cfgFile := filepath.Join(e.dir, "serve.yaml")
	if err = writeYAML(cfgFile, cfg); err != nil {
		return e, err
	}
	cmd := serverCommand{
		Path: o.Program.Path, Args: o.Program.Args, Config: cfgFile,
		Env:         append(os.Environ(), "TOKEX_CLIENT_SECRET="+o.Secret),
		SysProcAttr: sysProcAttr(),
		Stdout:      func(line string) { o.Log("info", line) },
		Stderr:      func(line string) { o.Log(levelOf(line), line) },
		Timeout:     15 * time.Second,
	}
	err = withAffinity(o.CPUs, func() error {
		e.proc, err = startServer(ctx, cmd)
		return err
	})
	if err != nil {
		return e, fmt.Errorf("embedded server: %w", err)
	}
	e.PID, e.Version = e.proc.PID(), e.proc.Ready.Version
	if OnEmbeddedStart != nil {
		OnEmbeddedStart(e.PID)
	}
	e.URL = e.proc.Ready.URL + cfg.TokenPath
	if o.Fleet {
		if e.port, err = urlPort(e.proc.Ready.URL); err != nil {
			return e, err
		}
		if e.Fleet, err = newEmbeddedFleet(e, cmd); err != nil {
			return e, err
		}
	}
	return e, e.waitHealthy(ctx, e.proc.Ready.URL)
}

// fleetConfig makes the engines' configuration shareable: SO_REUSEPORT,
// and one signing key (each engine would make its own, and a token one
// signed would not verify against the keys another serves).
func (e *Embedded) fleetConfig(cfg *authserver.Config) error {
	cfg.ReusePort = true
	if cfg.Signing.KeyFile != "" {
		return nil
	}
	var err error
	cfg.Signing.KeyFile, err = signingKey(e.dir, cfg.Signing.Alg)
	return err
}

// urlPort is the port of an engine's base URL.
func urlPort(base string) (int, error) {
	u, err := url.Parse(base)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(u.Port())
}

// tempFolder makes the folder of the server's config and keys, after
// removing those a killed tokex left (a SIGKILL runs no cleanup): ours
// only, whose owner is gone.
func tempFolder(logf func(level, msg string)) (string, error) {
	if removed, _ := owner.Sweep(os.TempDir(), embeddedPrefix, ""); len(removed) > 0 {
		logf("info", fmt.Sprintf("removed %d temporary folder(s) of killed tokex runs: %s", len(removed), strings.Join(removed, ", ")))
	}
	dir, err := os.MkdirTemp("", embeddedPrefix)
	if err != nil {
		return "", err
	}
	if err := owner.Mark(dir); err != nil {
		return dir, err
	}
	return dir, nil
}

// serveJWKS serves the subject key set (and the actor key's, when there is
// one) over HTTPS with its own self-signed certificate, and writes that
// certificate for the server to trust.
func (e *Embedded) serveJWKS(key, actor *jose.Key) (caFile string, err error) {
	pair, err := tlscert.Loopback()
	if err != nil {
		return "", err
	}
	opt := subject.IssuerOptions{Addr: "127.0.0.1:0", Keys: []*jose.Key{key}, Cert: &pair.Cert}
	if actor != nil {
		opt.Actors = []*jose.Key{actor}
	}
	if e.jwks, err = subject.ServeIssuer(opt); err != nil {
		return "", err
	}
	caFile = filepath.Join(e.dir, "jwks-ca.pem")
	return caFile, os.WriteFile(caFile, pair.CertPEM, 0o600)
}

// serverConfig is the server's configuration: the base config or the
// defaults, on a free loopback port, trusting the JWKS endpoint.
func (e *Embedded) serverConfig(o EmbeddedOptions, caFile string) (authserver.Config, error) {
	cfg := authserver.Default()
	if o.BaseConfig != "" {
		var err error
		if cfg, _, err = authserver.Load(o.BaseConfig); err != nil {
			return cfg, err
		}
	}
	cfg.Addr = "127.0.0.1:0"
	cfg.Subject.JWKSURL, cfg.Subject.JWKSFile, cfg.Subject.CAFile = e.jwks.JWKSURL, "", caFile
	cfg.Subject.Issuer = o.SubjectIssuer
	cfg.Subject.MaxLifetime = max(cfg.Subject.MaxLifetime, o.SubjectLifetime)
	if o.SigningAlg != "" {
		cfg.Signing.Alg = o.SigningAlg
	}
	if len(cfg.Clients) == 0 {
		cfg.DefaultClients.Count = o.Clients
		cfg.DefaultClients.Prefix = o.ClientPrefix
		cfg.DefaultClients.SecretEnv = "TOKEX_CLIENT_SECRET"
		cfg.DefaultClients.Resources = o.Resources
		cfg.DefaultClients.Scopes = o.Scopes
	}
	if o.TLS {
		if err := e.serverTLS(&cfg); err != nil {
			return cfg, err
		}
	}
	if err := e.clientAuth(&cfg, o); err != nil {
		return cfg, err
	}
	e.agentic(&cfg, o, caFile)
	e.services(&cfg, o)
	if err := cfg.Validate(nil); err != nil {
		return cfg, fmt.Errorf("embedded server config: %w", err)
	}
	return cfg, nil
}

// clientAuth registers the agents' keys and certificates with the server.
func (e *Embedded) clientAuth(cfg *authserver.Config, o EmbeddedOptions) error {
	if len(o.ClientJWKS) > 0 {
		cfg.DefaultClients.JWKSFile = filepath.Join(e.dir, "client-jwks.json")
		if err := os.WriteFile(cfg.DefaultClients.JWKSFile, o.ClientJWKS, 0o600); err != nil {
			return err
		}
	}
	if len(o.ClientCA) > 0 {
		cfg.TLS.ClientCAFile = filepath.Join(e.dir, "client-ca.pem")
		cfg.DefaultClients.TLSClientAuthSubjectDN = o.ClientSubjectDN
		if err := os.WriteFile(cfg.TLS.ClientCAFile, o.ClientCA, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// agentic sets the embedded server up for issue 30's workloads: the actor issuer,
// the agents' grants, chains to other agents and their depth.
func (e *Embedded) agentic(cfg *authserver.Config, o EmbeddedOptions, caFile string) {
	if o.ActorKey != nil {
		iss := o.ActorIssuer
		if iss == "" {
			iss = subject.ActorIssuer(o.SubjectIssuer)
		}
		cfg.Subject.Actor = authserver.ActorConfig{Issuer: iss, JWKSURL: e.jwks.ActorJWKSURL, CAFile: caFile, Audience: cfg.Subject.Actor.Audience}
	}
	if len(o.GrantTypes) > 0 && len(cfg.Clients) == 0 {
		cfg.DefaultClients.GrantTypes = o.GrantTypes
	}
	if slices.Contains(o.GrantTypes, exchange.GrantTypeJWTBearer) {
		cfg.ClientAuth.MaxLifetime = max(cfg.ClientAuth.MaxLifetime, min(o.SubjectLifetime, 24*time.Hour))
	}
	cfg.Delegation.PeerAudiences = cfg.Delegation.PeerAudiences || o.PeerAudiences
	if o.MaxActDepth > 0 {
		cfg.Delegation.MaxDepth = o.MaxActDepth
	}
}

// services lists the agents and a chain's services as clients of their
// own, with the default clients' secret, grants, resources and scopes (a
// chain authenticates with the secret only: config's validateWorkload).
func (e *Embedded) services(cfg *authserver.Config, o EmbeddedOptions) {
	if len(o.Services) == 0 || len(cfg.Clients) > 0 {
		return
	}
	d := cfg.DefaultClients
	ids := make([]string, 0, d.Count+len(o.Services))
	for i := 0; i < d.Count; i++ {
		ids = append(ids, fmt.Sprintf("%s%d", d.Prefix, i))
	}
	for _, id := range append(ids, o.Services...) {
		cfg.Clients = append(cfg.Clients, authserver.ClientConfig{ID: id, SecretEnv: d.SecretEnv, GrantTypes: d.GrantTypes,
			Resources: d.Resources, Scopes: d.Scopes})
	}
}

// serverTLS gives the server a loopback certificate that e.TLS trusts.
func (e *Embedded) serverTLS(cfg *authserver.Config) error {
	pair, err := tlscert.Loopback()
	if err != nil {
		return err
	}
	certFile, keyFile := filepath.Join(e.dir, "server.pem"), filepath.Join(e.dir, "server-key.pem")
	if err := os.WriteFile(certFile, pair.CertPEM, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, pair.KeyPEM, 0o600); err != nil {
		return err
	}
	cfg.TLS = authserver.TLSConfig{Enabled: true, CertFile: certFile, KeyFile: keyFile}
	e.TLS = &tls.Config{RootCAs: tlscert.Pool(pair.CertPEM), MinVersion: tls.VersionTLS12}
	return nil
}

func writeYAML(path string, v any) error {
	y, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, y, 0o600)
}

func (e *Embedded) waitHealthy(ctx context.Context, base string) error {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: e.TLS}}
	defer c.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := c.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("embedded server not healthy: %v", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-e.proc.Exited():
			return fmt.Errorf("embedded server exited: %v", e.proc.ExitErr())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Exited is closed when the child process ends.
func (e *Embedded) Exited() <-chan struct{} { return e.proc.Exited() }

// ExitErr is the child's exit status once Exited is closed.
func (e *Embedded) ExitErr() error {
	if e.proc == nil {
		return nil
	}
	return e.proc.ExitErr()
}

// Close stops the child (SIGTERM, then SIGKILL after 5 s), the JWKS
// endpoint, and removes the temporary folder with the TLS key.
func (e *Embedded) Close() error {
	var err error
	if e.Fleet != nil {
		e.Fleet.close()
	}
	if e.proc != nil {
		e.proc.Stop(5 * time.Second)
	}
	if e.jwks != nil {
		err = e.jwks.Close()
	}
	if e.dir != "" {
		err = errors.Join(err, os.RemoveAll(e.dir))
	}
	return err
}

// levelOf reads slog's text level from a child's log line.
func levelOf(line string) string {
	switch {
	case strings.Contains(line, "level=ERROR"):
		return "error"
	case strings.Contains(line, "level=WARN"):
		return "warn"
	}
	return "info"
}
