package authserver

import (
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/confload"
	"github.com/tokex-dev/tokex/internal/jose"
)

// ClientAuthConfig is how client assertions (private_key_jwt, RFC 7523)
// are checked.
type ClientAuthConfig struct {
	// Algorithms a client may sign with (never none, never an HMAC: a
	// public key is not a shared secret).
	Algorithms []string `yaml:"algorithms"`
	// MaxLifetime bounds exp − iat and exp − now; the replay cache keeps
	// each jti that long at most.
	MaxLifetime time.Duration `yaml:"max_lifetime"`
	Leeway      time.Duration `yaml:"leeway"` // clock skew allowed on exp, nbf and iat
	// ReplayCache is how many jtis may be remembered at once; a full
	// cache refuses new assertions (503) rather than forget one.
	ReplayCache int `yaml:"replay_cache"`
	// Audiences are accepted besides the token endpoint URL and the issuer.
	Audiences []string `yaml:"audiences"`
}

// Client assertion limits.
const (
	DefaultAssertionLifetime = 10 * time.Minute
	DefaultReplayCache       = 1_000_000 // about 40 MB when full
	MaxReplayCache           = 10_000_000
	maxAssertionBytes        = 16 << 10
	maxJTIBytes              = 256
)

func defaultClientAuth() ClientAuthConfig {
	return ClientAuthConfig{Algorithms: slices.Clone(jose.Algorithms), MaxLifetime: DefaultAssertionLifetime,
		Leeway: 10 * time.Second, ReplayCache: DefaultReplayCache}
}

func (a ClientAuthConfig) validate(doc *confload.Doc) error {
	if len(a.Algorithms) == 0 {
		return doc.Errorf("client_auth.algorithms", "must list at least one algorithm")
	}
	for i, alg := range a.Algorithms {
		if !slices.Contains(jose.Algorithms, alg) {
			return doc.Errorf(fmt.Sprintf("client_auth.algorithms[%d]", i), "unsupported algorithm %q (RS256, ES256, EdDSA: no none, no HMAC)", alg)
		}
	}
	if a.MaxLifetime < time.Second || a.MaxLifetime > 24*time.Hour {
		return doc.Errorf("client_auth.max_lifetime", "must be between 1s and 24h")
	}
	if a.Leeway < 0 || a.Leeway > 5*time.Minute {
		return doc.Errorf("client_auth.leeway", "must be between 0 and 5m")
	}
	if a.ReplayCache < 1000 || a.ReplayCache > MaxReplayCache {
		return doc.Errorf("client_auth.replay_cache", "must be between 1000 and %d", MaxReplayCache)
	}
	if len(a.Audiences) > 16 {
		return doc.Errorf("client_auth.audiences", "at most 16")
	}
	return nil
}

// TLSBinding is how a tls_client_auth client's certificate is recognised
// (RFC 8705 §2.1.2): its subject DN, as Go renders it in RFC 4514 form
// (most specific first: CN=perf-agent-0,O=tokex), or one of its SANs of
// the given type, compared exactly (DNS names without regard to case).
type TLSBinding struct {
	SubjectDN string `yaml:"tls_client_auth_subject_dn"`
	SANDNS    string `yaml:"tls_client_auth_san_dns"`
	SANURI    string `yaml:"tls_client_auth_san_uri"`
	SANIP     string `yaml:"tls_client_auth_san_ip"`
	SANEmail  string `yaml:"tls_client_auth_san_email"`
}

// kind is the one binding set ("" none, "many" more than one).
func (b TLSBinding) kind() string {
	k := ""
	for _, f := range []struct{ name, v string }{{"subject_dn", b.SubjectDN}, {"san_dns", b.SANDNS}, {"san_uri", b.SANURI},
		{"san_ip", b.SANIP}, {"san_email", b.SANEmail}} {
		switch {
		case f.v == "":
		case k != "":
			return "many"
		default:
			k = f.name
		}
	}
	return k
}

func (b TLSBinding) validate(doc *confload.Doc, p string) error {
	if b.kind() == "many" {
		return doc.Errorf(p+".tls_client_auth_subject_dn", "give exactly one tls_client_auth_* binding (RFC 8705 §2.1.2)")
	}
	if b.SANIP != "" && net.ParseIP(b.SANIP) == nil {
		return doc.Errorf(p+".tls_client_auth_san_ip", "is not an IP address")
	}
	return nil
}

// matches reports whether the certificate is the one bound.
func (b TLSBinding) matches(c *x509.Certificate) bool {
	switch b.kind() {
	case "subject_dn":
		return c.Subject.String() == b.SubjectDN
	case "san_dns":
		return slices.ContainsFunc(c.DNSNames, func(n string) bool { return strings.EqualFold(n, b.SANDNS) })
	case "san_uri":
		return slices.ContainsFunc(c.URIs, func(u *url.URL) bool { return u.String() == b.SANURI })
	case "san_ip":
		ip := net.ParseIP(b.SANIP)
		return slices.ContainsFunc(c.IPAddresses, func(a net.IP) bool { return a.Equal(ip) })
	case "san_email":
		return slices.Contains(c.EmailAddresses, b.SANEmail)
	}
	return false
}

// certificateClient authenticates tls_client_auth: the client named in the
// form, with a certificate the TLS handshake verified against
// tls.client_ca_file and that matches the client's binding.
func (s *Server) certificateClient(r *http.Request, id string) (*client, *oauthError) {
	cl := s.clients[id]
	if cl == nil || !cl.methods[exchange.AuthTLSClient] {
		return nil, fail(401, exchange.ErrInvalidClient, "client authentication failed")
	}
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		return nil, fail(401, exchange.ErrInvalidClient, "no verified client certificate (tls_client_auth)")
	}
	if !cl.tls.matches(r.TLS.VerifiedChains[0][0]) {
		return nil, fail(401, exchange.ErrInvalidClient, "the client certificate is not the one registered for the client")
	}
	return cl, nil
}

// certThumbprint is RFC 8705 §3.1's x5t#S256 of the request's verified
// client certificate, "" without one.
func certThumbprint(r *http.Request) string {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		return ""
	}
	h := sha256.Sum256(r.TLS.VerifiedChains[0][0].Raw)
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// assertionVerifier checks client assertions with the subject tokens'
// reader (jose.Verifier): the same strict header and claims, the same
// signature check, its own header cache.
type assertionVerifier struct {
	jws         jose.Verifier
	audiences   []string // the token endpoint URL, the issuer, the configured ones
	maxLifetime time.Duration
	leeway      time.Duration
	replay      *replayCache
	// since is when this server began to accept assertions: the whole
	// second after it started (New waits for it). The replay cache lives
	// in memory, so an assertion issued before then may have been used
	// with a server that ran before this one; it is refused (freshSince).
	since time.Time
	full  fullLog
	// bearer remembers the jtis of jwt-bearer grant assertions (by issuer
	// and jti, charged to the client that presented them), beside replay.
	bearer     *replayCache
	bearerFull fullLog
}

// newAssertionVerifier checks assertions from since on: client assertions
// of clients clients and jwt-bearer assertions of bearers clients (the
// ones that may send them).
func newAssertionVerifier(a ClientAuthConfig, clients, bearers int, since time.Time) *assertionVerifier {
	width := int64((a.MaxLifetime+a.Leeway)/time.Second) / 16
	leeway := int64(a.Leeway / time.Second)
	return &assertionVerifier{jws: jose.Verifier{Algorithms: a.Algorithms}, audiences: slices.Clone(a.Audiences), maxLifetime: a.MaxLifetime,
		leeway: a.Leeway, replay: newReplayCache(a.ReplayCache, width, leeway, clients), since: since,
		full: fullLog{what: "client assertions"}, bearer: newReplayCache(a.ReplayCache, width, leeway, bearers),
		bearerFull: fullLog{what: "jwt-bearer assertions"}}
}

// freshSince refuses an assertion that may have been issued before the
// server started, and so used with the server that ran before it (the
// replay cache does not outlive a restart; nothing of it is stored):
// iat before since, or, without iat, an exp that a server running before
// since could have accepted (exp − now ≤ max_lifetime + leeway then).
// Assertions issued after the start are unaffected; one without iat is
// accepted once the server has run max_lifetime + 2 × leeway.
// what names the assertion: "client assertion", "assertion".
func (v *assertionVerifier) freshSince(c *jose.Claims, what string) string {
	if c.IssuedAt.Set {
		if c.IssuedAt.Before(v.since) {
			return what + " was issued (iat) before this server started: it may have been used before a restart"
		}
		return ""
	}
	if c.Expiry.Before(v.since.Add(v.maxLifetime + v.leeway)) {
		return what + " without iat may have been issued before this server started: send iat"
	}
	return ""
}

// errNoAssertionClient: the assertion names no client that may send one.
var errNoAssertionClient = errors.New("no such client")

// assertionClient authenticates private_key_jwt: the assertion's signature
// against the client's registered JWKS, iss = sub = the client (and
// client_id when sent), aud this server, exp, nbf, iat with the leeway, a
// bounded lifetime, and a jti not seen before.
func (s *Server) assertionClient(form url.Values) (*client, *oauthError) {
	bad := func(desc string) (*client, *oauthError) { return nil, fail(401, exchange.ErrInvalidClient, desc) }
	if form.Get("client_assertion_type") != exchange.ClientAssertionType {
		return bad("client_assertion_type must be " + exchange.ClientAssertionType)
	}
	raw := form.Get("client_assertion")
	if len(raw) > maxAssertionBytes {
		return bad("client assertion is longer than 16 KiB")
	}
	v := s.assert
	var cl *client
	c, err := v.jws.Verify(raw, func(h jose.Header, c *jose.Claims) (crypto.PublicKey, error) {
		if cl = s.clients[c.Subject]; cl == nil || cl.keys == nil || !cl.methods[exchange.AuthPrivateKeyJWT] {
			return nil, errNoAssertionClient
		}
		return jose.KeyFor(cl.keys, h)
	})
	switch {
	case errors.Is(err, errNoAssertionClient):
		return bad("client authentication failed")
	case err != nil:
		return bad("client assertion " + err.Error())
	}
	// iss must be the client
	if err := c.CheckTimes(time.Now(), v.leeway, c.Subject); errors.Is(err, jose.ErrIssuer) {
		return bad("client assertion iss and sub must both be the client_id")
	} else if err != nil {
		return bad("client assertion " + err.Error())
	}
	if desc := v.check(c, form); desc != "" {
		return bad(desc)
	}
	if desc := v.freshSince(c, "client assertion"); desc != "" {
		return bad(desc)
	}
	switch v.replay.add(c.Subject, c.ID, c.Expiry.Unix(), time.Now().Unix()) {
	case replaySeen:
		return bad("client assertion was already used (its jti is replayed)")
	case replayFull:
		v.full.refused(s.log, c.Subject, v.replay)
		return nil, fail(503, exchange.ErrTemporarilyUnavail, "too many client assertions of this client within their lifetime (client_auth.replay_cache)")
	}
	return cl, nil
}

// check applies the rest: who it names, for whom it is, its jti and its
// lifetime. It returns why the assertion is refused, "" if not.
func (v *assertionVerifier) check(c *jose.Claims, form url.Values) string {
	if id, sent := form["client_id"]; c.Issuer != c.Subject || sent && id[0] != c.Subject {
		return "client assertion iss and sub must both be the client_id"
	}
	if !slices.ContainsFunc(c.Audience, func(a string) bool { return slices.Contains(v.audiences, a) }) {
		return "client assertion audience is not this server's token endpoint or issuer"
	}
	return v.checkJTIAndLifetime(c, "client assertion")
}

// checkJTIAndLifetime refuses an assertion (what names it) without a jti
// the replay cache can hold, or living longer than client_auth.max_lifetime.
func (v *assertionVerifier) checkJTIAndLifetime(c *jose.Claims, what string) string {
	if c.ID == "" || len(c.ID) > maxJTIBytes {
		return what + " needs a jti of at most 256 bytes"
	}
	exp := c.Expiry.Time
	if c.IssuedAt.Set && exp.Sub(c.IssuedAt.Time) > v.maxLifetime || time.Until(exp) > v.maxLifetime+v.leeway {
		return what + " lives longer than the maximum (client_auth.max_lifetime)"
	}
	return ""
}
