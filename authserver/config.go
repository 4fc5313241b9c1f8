// Package authserver is tokex's reference RFC 8693 token-exchange server:
// the target of the embedded default, a lower bound for what an exchange
// costs, and a peer for the tests. It behaves like the PingFederate engine
// of the seed article.
package authserver

import (
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/confload"
	"github.com/tokex-dev/tokex/internal/jose"
)

// Config is the server's YAML configuration. Zero values take the defaults
// of Default(), which match the seed article.
type Config struct {
	Addr string `yaml:"addr"`
	// ReusePort listens with SO_REUSEPORT, so that several engines share
	// the port (the local driver's --engines; Linux spreads connections).
	ReusePort    bool          `yaml:"reuse_port,omitempty"`
	Issuer       string        `yaml:"issuer"` // default: the server's own base URL
	TokenPath    string        `yaml:"token_path"`
	MaxBodyBytes int64         `yaml:"max_body_bytes"`
	HTTP2        *bool         `yaml:"http2"` // HTTP/2 over TLS, and h2c without TLS
	TLS          TLSConfig     `yaml:"tls"`
	Signing      SigningConfig `yaml:"signing"`
	Subject      SubjectConfig `yaml:"subject"`
	// Clients; when empty, DefaultClients perf-agent-0..N-1 share one secret.
	Clients        []ClientConfig `yaml:"clients"`
	DefaultClients DefaultClients `yaml:"default_clients"`
	Faults         FaultConfig    `yaml:"faults"`
	// ClientAuth is how client assertions (private_key_jwt) and the
	// assertions of the jwt-bearer grant are checked.
	ClientAuth ClientAuthConfig `yaml:"client_auth"`
	// Metrics serves the process's CPU and memory for Prometheus on a
	// listener of its own (off by default).
	Metrics MetricsConfig `yaml:"metrics"`
	// Delegation bounds the act chains of exchanged tokens.
	Delegation DelegationConfig `yaml:"delegation"`
}

// TLSConfig selects HTTPS: a given pair, or a generated self-signed one.
type TLSConfig struct {
	Enabled    bool   `yaml:"enabled"`
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	SelfSigned bool   `yaml:"self_signed"`
	// ClientCAFile asks for client certificates and verifies them against
	// these CAs (PEM): tls_client_auth.
	ClientCAFile string `yaml:"client_ca_file"`
}

// SigningConfig is the issued tokens' signing key.
type SigningConfig struct {
	Alg      string        `yaml:"alg"`      // RS256 (default), ES256, EdDSA
	KeyFile  string        `yaml:"key_file"` // PEM; empty: a fresh key per start
	Lifetime time.Duration `yaml:"lifetime"` // issued token lifetime, 5m
}

// SubjectConfig is how subject (and actor) tokens are validated.
type SubjectConfig struct {
	Issuer     string   `yaml:"issuer"`
	JWKSURL    string   `yaml:"jwks_url"`
	JWKSFile   string   `yaml:"jwks_file"`
	CAFile     string   `yaml:"ca_file"` // trust for an https jwks_url
	Algorithms []string `yaml:"algorithms"`
	// Audience: "client_id" (the authenticated client, as in the article),
	// "any", or a literal audience value.
	Audience string        `yaml:"audience"`
	Leeway   time.Duration `yaml:"leeway"`
	// MaxLifetime bounds how long a subject or actor token may live: exp −
	// iat when it has an iat, and exp − now (plus leeway) always.
	MaxLifetime time.Duration `yaml:"max_lifetime"`
	// Refresh is the periodic JWKS refresh; UnknownKidInterval rate-limits
	// the refresh triggered by a token with an unknown kid.
	Refresh            time.Duration `yaml:"refresh"`
	UnknownKidInterval time.Duration `yaml:"unknown_kid_interval"`
	// MaxTokenBytes bounds a subject token, an actor token and a
	// jwt-bearer assertion.
	MaxTokenBytes int `yaml:"max_token_bytes"`
	// Actor is the issuer of actor tokens (the agents' workload
	// identities); without an issuer, actor tokens are trusted as
	// subject tokens are.
	Actor ActorConfig `yaml:"actor"`
}

// ActorConfig is the actor-token issuer (RFC 8693 §2.1 actor_token): its
// iss, its own keys and its audience rule. Leeway, algorithms, refresh and
// the maximum lifetime are subject's.
type ActorConfig struct {
	Issuer   string `yaml:"issuer"`
	JWKSURL  string `yaml:"jwks_url"`
	JWKSFile string `yaml:"jwks_file"`
	CAFile   string `yaml:"ca_file"`
	// Audience: client_id (default: the actor token was issued to the
	// client that presents it), any, or a literal value.
	Audience string `yaml:"audience"`
}

// DelegationConfig bounds delegation chains: the act claim (RFC 8693
// §4.1) of an exchanged token nests every actor of the chain.
type DelegationConfig struct {
	// MaxDepth is the most actors an issued act may nest (hops of a chain).
	MaxDepth int `yaml:"max_depth"`
	// MaxActBytes bounds the actors' subs of an issued act, together.
	MaxActBytes int `yaml:"max_act_bytes"`
	// PeerAudiences lets a client ask (audience=) for a token to another
	// client of this server: the next agent of a chain, which exchanges it
	// in turn. Off: only the client's resources.
	PeerAudiences bool `yaml:"peer_audiences"`
}

// ClientConfig is one OAuth client.
type ClientConfig struct {
	ID          string   `yaml:"id"`
	Secret      string   `yaml:"secret"`
	SecretEnv   string   `yaml:"secret_env"`
	GrantTypes  []string `yaml:"grant_types"`
	AuthMethods []string `yaml:"auth_methods"`
	Resources   []string `yaml:"resources"` // allowed resource/audience values
	Scopes      []string `yaml:"scopes"`
	// JWKS (inline JSON) or JWKSFile: the client's public keys, for
	// private_key_jwt.
	JWKS     string `yaml:"jwks"`
	JWKSFile string `yaml:"jwks_file"`
	// The RFC 8705 §2.1.2 binding of tls_client_auth: exactly one.
	TLSBinding `yaml:",inline"`
}

// DefaultClients describes the article's perf-agent-N clients.
type DefaultClients struct {
	Count int `yaml:"count"`
	// GrantTypes the default clients may use (default: token exchange).
	GrantTypes []string `yaml:"grant_types"`
	Prefix     string   `yaml:"prefix"`
	SecretEnv  string   `yaml:"secret_env"`
	Resources  []string `yaml:"resources"`
	Scopes     []string `yaml:"scopes"`
	// JWKSFile holds one JWK Set per client id (what `tokex jwks --clients`
	// prints): those clients may use private_key_jwt.
	JWKSFile string `yaml:"jwks_file"`
	// TLSClientAuthSubjectDN binds every default client to a certificate
	// subject DN (RFC 4514); {{client_id}} is replaced by the client's id.
	TLSClientAuthSubjectDN string `yaml:"tls_client_auth_subject_dn"`
}

// FaultConfig injects trouble for testing the measuring side. Off by default.
type FaultConfig struct {
	Latency    LatencyFault `yaml:"latency"`
	Stall      StallFault   `yaml:"stall"`
	ErrorRatio float64      `yaml:"error_ratio"` // fraction answered 503 temporarily_unavailable
}

// LatencyFault adds Fixed plus a random delay from Distribution.
type LatencyFault struct {
	Fixed        time.Duration `yaml:"fixed"`
	Distribution string        `yaml:"distribution"` // "", uniform, exponential, lognormal
	Mean         time.Duration `yaml:"mean"`
	StdDev       time.Duration `yaml:"stddev"` // lognormal
	Max          time.Duration `yaml:"max"`    // uniform upper bound; cap for the others
}

// StallFault holds every request for Duration once per Every.
type StallFault struct {
	Every    time.Duration `yaml:"every"`
	Duration time.Duration `yaml:"duration"`
}

// Enabled reports whether any fault is configured.
func (f FaultConfig) Enabled() bool {
	return f.Latency.Fixed > 0 || f.Latency.Distribution != "" || f.Stall.Every > 0 || f.ErrorRatio > 0
}

// Article defaults.
const (
	DefaultResource = "https://mcp.example.internal/mcp"
	DefaultScope    = "mcp:tools:invoke"
	DefaultIssuerIn = "https://pf-perf-subject"
	DefaultAddr     = "127.0.0.1:9031"
	// MaxClients bounds the clients of a server (listed or default).
	MaxClients = 10000
	// DefaultMaxSubjectLifetime is the longest subject token accepted by
	// default: access tokens rarely live longer, tokex mints 5-minute ones.
	DefaultMaxSubjectLifetime = time.Hour
	// MaxMaxSubjectLifetime is the largest max_lifetime accepted.
	MaxMaxSubjectLifetime = 365 * 24 * time.Hour
	// DefaultMaxTokenBytes bounds inbound tokens: a subject token with the
	// largest extra claims tokex mints (16 KiB of JSON) fits.
	DefaultMaxTokenBytes = 32 << 10
	// DefaultMaxActDepth is the deepest act chain issued: 5 hops.
	DefaultMaxActDepth = 5
	// MaxMaxActDepth stays below the JWS reader's nesting limit (32).
	MaxMaxActDepth = 16
	// DefaultMaxActBytes bounds an issued act's subs together.
	DefaultMaxActBytes = 4096
)

// Default returns the configuration that reproduces the article's engine.
func Default() Config {
	return Config{
		Addr:         DefaultAddr,
		TokenPath:    "/as/token.oauth2",
		MaxBodyBytes: 64 << 10,
		Signing:      SigningConfig{Alg: jose.RS256, Lifetime: 5 * time.Minute},
		Subject: SubjectConfig{
			Issuer:             DefaultIssuerIn,
			Algorithms:         slices.Clone(jose.Algorithms),
			Audience:           "client_id",
			Leeway:             10 * time.Second,
			MaxLifetime:        DefaultMaxSubjectLifetime,
			Refresh:            5 * time.Minute,
			UnknownKidInterval: 10 * time.Second,
			MaxTokenBytes:      DefaultMaxTokenBytes,
			Actor:              ActorConfig{Audience: "client_id"},
		},
		ClientAuth: defaultClientAuth(),
		Delegation: DelegationConfig{MaxDepth: DefaultMaxActDepth, MaxActBytes: DefaultMaxActBytes},
		DefaultClients: DefaultClients{
			Count:     10,
			Prefix:    "perf-agent-",
			SecretEnv: "TOKEX_CLIENT_SECRET",
			Resources: []string{DefaultResource},
			Scopes:    []string{DefaultScope},
		},
	}
}

// Load reads a YAML file over the defaults.
func Load(path string) (Config, *confload.Doc, error) {
	cfg := Default()
	doc, err := confload.ReadFile(path)
	if err != nil {
		return cfg, nil, err
	}
	if err := doc.Decode(&cfg); err != nil {
		return cfg, doc, err
	}
	return cfg, doc, nil
}

// Validate checks the configuration; doc (may be nil) locates the fields.
func (c *Config) Validate(doc *confload.Doc) error {
	for _, check := range []func(*confload.Doc) error{
		c.validateEndpoint, c.Signing.validate, c.Subject.validate, c.validateTLS, c.validateClients, c.Faults.validate,
		c.ClientAuth.validate, c.Metrics.validate, c.Delegation.validate,
	} {
		if err := check(doc); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validateEndpoint(doc *confload.Doc) error {
	if c.TokenPath == "" || c.TokenPath[0] != '/' {
		return doc.Errorf("token_path", "must start with /")
	}
	if c.MaxBodyBytes < 1024 || c.MaxBodyBytes > 16<<20 {
		return doc.Errorf("max_body_bytes", "must be between 1024 and 16777216")
	}
	return nil
}

func (sc SigningConfig) validate(doc *confload.Doc) error {
	if !slices.Contains(jose.Algorithms, sc.Alg) {
		return doc.Errorf("signing.alg", "unsupported algorithm %q (RS256, ES256, EdDSA)", sc.Alg)
	}
	if sc.Lifetime < time.Second || sc.Lifetime > 24*time.Hour {
		return doc.Errorf("signing.lifetime", "must be between 1s and 24h")
	}
	return nil
}

func (sc SubjectConfig) validate(doc *confload.Doc) error {
	if len(sc.Algorithms) == 0 {
		return doc.Errorf("subject.algorithms", "must list at least one algorithm")
	}
	for i, a := range sc.Algorithms {
		if !slices.Contains(jose.Algorithms, a) {
			return doc.Errorf(fmt.Sprintf("subject.algorithms[%d]", i), "unsupported algorithm %q (RS256, ES256, EdDSA)", a)
		}
	}
	if sc.Issuer == "" {
		return doc.Errorf("subject.issuer", "is required")
	}
	if err := validateJWKS(doc, "subject", sc.JWKSURL, sc.JWKSFile); err != nil {
		return err
	}
	if sc.MaxTokenBytes < 1024 || sc.MaxTokenBytes > 16<<20 {
		return doc.Errorf("subject.max_token_bytes", "must be between 1024 and 16777216")
	}
	if err := sc.Actor.validate(doc, sc.Issuer); err != nil {
		return err
	}
	return sc.validateDurations(doc)
}

func validateJWKS(doc *confload.Doc, p, jwksURL, jwksFile string) error {
	if jwksURL != "" && jwksFile != "" {
		return doc.Errorf(p+".jwks_url", "set jwks_url or jwks_file, not both")
	}
	if jwksURL != "" {
		u, err := url.Parse(jwksURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return doc.Errorf(p+".jwks_url", "must be an http(s) URL")
		}
	}
	return nil
}

// validate checks the actor issuer: none, or one of its own, apart from
// the subject issuer (a user's token must not pass for an agent's).
func (a ActorConfig) validate(doc *confload.Doc, subjectIssuer string) error {
	if a.Audience == "" {
		return doc.Errorf("subject.actor.audience", "is required: client_id, any or a literal audience")
	}
	if a.Issuer == "" {
		if a.JWKSURL != "" || a.JWKSFile != "" || a.CAFile != "" {
			return doc.Errorf("subject.actor.issuer", "is required with actor keys")
		}
		return nil
	}
	if a.Issuer == subjectIssuer {
		return doc.Errorf("subject.actor.issuer", "must differ from subject.issuer: actor tokens have keys of their own")
	}
	return validateJWKS(doc, "subject.actor", a.JWKSURL, a.JWKSFile)
}

func (d DelegationConfig) validate(doc *confload.Doc) error {
	if d.MaxDepth < 1 || d.MaxDepth > MaxMaxActDepth {
		return doc.Errorf("delegation.max_depth", "must be between 1 and %d", MaxMaxActDepth)
	}
	if d.MaxActBytes < 64 || d.MaxActBytes > 64<<10 {
		return doc.Errorf("delegation.max_act_bytes", "must be between 64 and 65536")
	}
	return nil
}

func (sc SubjectConfig) validateDurations(doc *confload.Doc) error {
	if sc.Leeway < 0 || sc.Leeway > 5*time.Minute {
		return doc.Errorf("subject.leeway", "must be between 0 and 5m")
	}
	if sc.MaxLifetime < time.Second || sc.MaxLifetime > MaxMaxSubjectLifetime {
		return doc.Errorf("subject.max_lifetime", "must be between 1s and 8760h")
	}
	if sc.UnknownKidInterval <= 0 || sc.UnknownKidInterval > 24*time.Hour {
		return doc.Errorf("subject.unknown_kid_interval", "must be positive and at most 24h")
	}
	if sc.Refresh < 0 || sc.Refresh > 24*time.Hour || (sc.Refresh > 0 && sc.Refresh < time.Second) {
		return doc.Errorf("subject.refresh", "must be 0 (off) or between 1s and 24h")
	}
	return nil
}

func (c *Config) validateTLS(doc *confload.Doc) error {
	if c.TLS.Enabled && !c.TLS.SelfSigned && (c.TLS.CertFile == "" || c.TLS.KeyFile == "") {
		return doc.Errorf("tls", "enabled needs cert_file and key_file, or self_signed: true")
	}
	if c.TLS.ClientCAFile != "" && !c.TLS.Enabled {
		return doc.Errorf("tls.client_ca_file", "client certificates need TLS: set tls.enabled")
	}
	return nil
}

func (c *Config) validateClients(doc *confload.Doc) error {
	for i, cl := range c.Clients {
		if err := cl.validate(doc, fmt.Sprintf("clients[%d]", i)); err != nil {
			return err
		}
	}
	if len(c.Clients) > MaxClients {
		return doc.Errorf("clients", "lists %d clients; at most %d", len(c.Clients), MaxClients)
	}
	if len(c.Clients) == 0 && (c.DefaultClients.Count < 1 || c.DefaultClients.Count > MaxClients) {
		return doc.Errorf("default_clients.count", "must be between 1 and %d when no clients are listed", MaxClients)
	}
	return validateGrants(doc, "default_clients.grant_types", c.DefaultClients.GrantTypes)
}

// validateGrants refuses a grant the server does not know.
func validateGrants(doc *confload.Doc, p string, grants []string) error {
	for i, g := range grants {
		if !slices.Contains(exchange.GrantTypes, g) {
			return doc.Errorf(fmt.Sprintf("%s[%d]", p, i), "unknown grant %q (%s, %s, %s)", g,
				exchange.GrantTypeTokenExchange, exchange.GrantTypeClientCredentials, exchange.GrantTypeJWTBearer)
		}
	}
	return nil
}

// methodNeeds names the credential each authentication method needs.
var methodNeeds = map[exchange.AuthMethod]string{
	exchange.AuthBasic: "secret or secret_env", exchange.AuthPost: "secret or secret_env",
	exchange.AuthPrivateKeyJWT: "jwks or jwks_file", exchange.AuthTLSClient: "a tls_client_auth_* binding",
}

// credentials are the methods the client's credentials allow.
func (cl ClientConfig) credentials() []exchange.AuthMethod {
	var out []exchange.AuthMethod
	if cl.Secret != "" || cl.SecretEnv != "" {
		out = append(out, exchange.AuthBasic, exchange.AuthPost)
	}
	if cl.JWKS != "" || cl.JWKSFile != "" {
		out = append(out, exchange.AuthPrivateKeyJWT)
	}
	if cl.TLSBinding.kind() != "" {
		out = append(out, exchange.AuthTLSClient)
	}
	return out
}

// validate checks one listed client; p is its path, clients[i].
func (cl ClientConfig) validate(doc *confload.Doc, p string) error {
	if cl.ID == "" {
		return doc.Errorf(p+".id", "is required")
	}
	if err := cl.TLSBinding.validate(doc, p); err != nil {
		return err
	}
	if cl.JWKS != "" && cl.JWKSFile != "" {
		return doc.Errorf(p+".jwks", "give jwks or jwks_file, not both")
	}
	if err := validateGrants(doc, p+".grant_types", cl.GrantTypes); err != nil {
		return err
	}
	has := cl.credentials()
	if len(has) == 0 {
		return doc.Errorf(p+".secret", "a credential is required: secret or secret_env, jwks or jwks_file, or a tls_client_auth_* binding")
	}
	for j, m := range cl.AuthMethods {
		need, known := methodNeeds[exchange.AuthMethod(m)]
		if !known {
			return doc.Errorf(fmt.Sprintf("%s.auth_methods[%d]", p, j), "unknown method %q (client_secret_basic, client_secret_post, private_key_jwt, tls_client_auth)", m)
		}
		if !slices.Contains(has, exchange.AuthMethod(m)) {
			return doc.Errorf(fmt.Sprintf("%s.auth_methods[%d]", p, j), "%s needs %s", m, need)
		}
	}
	return nil
}

func (f FaultConfig) validate(doc *confload.Doc) error {
	if !(f.ErrorRatio >= 0 && f.ErrorRatio <= 1) { // NaN too
		return doc.Errorf("faults.error_ratio", "must be between 0 and 1")
	}
	for _, d := range []struct {
		path string
		v    time.Duration
	}{{"faults.latency.fixed", f.Latency.Fixed}, {"faults.latency.mean", f.Latency.Mean}, {"faults.latency.stddev", f.Latency.StdDev},
		{"faults.latency.max", f.Latency.Max}, {"faults.stall.duration", f.Stall.Duration}} {
		if d.v < 0 || d.v > time.Minute {
			return doc.Errorf(d.path, "must be between 0 and 1m")
		}
	}
	if f.Stall.Every < 0 || f.Stall.Every > 24*time.Hour {
		return doc.Errorf("faults.stall.every", "must be between 0 and 24h")
	}
	if err := f.Latency.validate(doc); err != nil {
		return err
	}
	if f.Stall.Every > 0 && (f.Stall.Duration <= 0 || f.Stall.Duration >= f.Stall.Every) {
		return doc.Errorf("faults.stall.duration", "must be > 0 and shorter than every")
	}
	return nil
}

func (l LatencyFault) validate(doc *confload.Doc) error {
	switch l.Distribution {
	case "", "uniform", "exponential", "lognormal":
	default:
		return doc.Errorf("faults.latency.distribution", "unknown distribution %q (uniform, exponential, lognormal)", l.Distribution)
	}
	if l.Distribution == "uniform" && l.Max <= 0 {
		return doc.Errorf("faults.latency.max", "uniform needs max > 0")
	}
	if (l.Distribution == "exponential" || l.Distribution == "lognormal") && l.Mean <= 0 {
		return doc.Errorf("faults.latency.mean", "%s needs mean > 0", l.Distribution)
	}
	return nil
}
