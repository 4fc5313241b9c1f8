package authserver

import (
	"context"
	"crypto"
	"log/slog"
	"slices"
	"time"

	"github.com/tokex-dev/tokex/internal/jose"
)

// verifier validates inbound JWTs against the subject JWKS.
type verifier struct {
	keys        *keySet
	jws         jose.Verifier // the strict reader and its header cache
	issuer      string
	audience    string
	leeway      time.Duration
	maxLifetime time.Duration
}

func newVerifier(ctx context.Context, sc SubjectConfig, given []byte, log *slog.Logger) (*verifier, error) {
	keys, err := newKeySet(ctx, sc, given, log)
	if err != nil {
		return nil, err
	}
	return &verifier{keys: keys, jws: jose.Verifier{Algorithms: sc.Algorithms}, issuer: sc.Issuer, audience: sc.Audience,
		leeway: sc.Leeway, maxLifetime: sc.MaxLifetime}, nil
}

// tokenError is why an inbound token was refused; the text is safe to send.
type tokenError struct{ desc string }

func (e *tokenError) Error() string { return e.desc }

// verify parses and validates one inbound token for the authenticated client.
func (v *verifier) verify(ctx context.Context, raw, what, clientID string) (*jose.Claims, error) {
	c, err := v.verified(ctx, raw)
	if err != nil {
		return nil, &tokenError{what + " " + err.Error()}
	}
	if desc := v.policy(c, clientID); desc != "" {
		return nil, &tokenError{what + " " + desc}
	}
	return c, nil
}

// verified returns the claims of a token whose signature, alg, key, time
// claims and issuer are good; the error is a jose phrase.
func (v *verifier) verified(ctx context.Context, raw string) (*jose.Claims, error) {
	c, err := v.jws.Verify(raw, func(h jose.Header, _ *jose.Claims) (crypto.PublicKey, error) {
		return v.keys.selectKey(ctx, h)
	})
	if err != nil {
		return nil, err
	}
	if err := c.CheckTimes(time.Now(), v.leeway, v.issuer); err != nil {
		return nil, err
	}
	return c, nil
}

// policy checks sub, the lifetime bounds and the audience.
func (v *verifier) policy(c *jose.Claims, clientID string) string {
	if c.Subject == "" {
		return "has no sub"
	}
	// exp is required; iat is optional (RFC 7519 §4.1.6), so the lifetime
	// is bounded from now as well.
	exp := c.Expiry.Time
	if c.IssuedAt.Set && exp.Sub(c.IssuedAt.Time) > v.maxLifetime {
		return "lifetime (exp − iat) exceeds the maximum"
	}
	if time.Until(exp) > v.maxLifetime+v.leeway {
		return "expires further ahead than the maximum lifetime"
	}
	switch v.audience {
	case "any":
	case "client_id":
		if !slices.Contains(c.Audience, clientID) {
			return "audience does not match the client"
		}
	default:
		if !slices.Contains(c.Audience, v.audience) {
			return "audience is not accepted"
		}
	}
	return ""
}
