package authserver

import (
	"context"
	"log/slog"
	"slices"
	"time"
)

// verifier validates inbound JWTs against the subject JWKS.
type verifier struct {
	keys        *keySet
	headers     headerCache
	algorithms  []string
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
	return &verifier{keys: keys, algorithms: sc.Algorithms, issuer: sc.Issuer, audience: sc.Audience,
		leeway: sc.Leeway, maxLifetime: sc.MaxLifetime}, nil
}

// tokenError is why an inbound token was refused; the text is safe to send.
type tokenError struct{ desc string }

func (e *tokenError) Error() string { return e.desc }

// verify parses and validates one inbound token for the authenticated client.
func (v *verifier) verify(ctx context.Context, raw, what, clientID string) (*inbound, error) {
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
// claims and issuer are good.
func (v *verifier) verified(ctx context.Context, raw string) (*inbound, error) {
	t, err := v.parseJWS(raw)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(v.algorithms, t.header.alg) {
		return nil, &tokenError{phraseBadSig}
	}
	key, err := v.keys.selectKey(ctx, t.header)
	if err != nil {
		return nil, err
	}
	if !t.verifySignature(key) {
		return nil, &tokenError{phraseBadSig}
	}
	if !t.cached {
		v.headers.add(t.headerSeg, t.header)
	}
	if desc := v.validTimes(&t.claims, time.Now()); desc != "" {
		return nil, &tokenError{desc}
	}
	return &t.claims, nil
}

// validTimes checks exp (required), nbf, iat and iss, and names the first
// failure in golang-jwt's precedence.
func (v *verifier) validTimes(c *inbound, now time.Time) string {
	var expired, early, missing, badIssuer bool
	if !c.Expiry.set {
		missing = true
	} else {
		expired = !now.Before(c.Expiry.Add(v.leeway))
	}
	early = c.NotBefore.set && now.Before(c.NotBefore.Add(-v.leeway)) ||
		c.IssuedAt.set && now.Before(c.IssuedAt.Add(-v.leeway))
	if c.Issuer == "" {
		missing = true
	} else {
		badIssuer = c.Issuer != v.issuer
	}
	switch {
	case expired:
		return phraseExpired
	case early:
		return phraseNotYet
	case missing:
		return phraseMissing
	case badIssuer:
		return phraseIssuer
	}
	return ""
}

// policy checks sub, the lifetime bounds and the audience.
func (v *verifier) policy(c *inbound, clientID string) string {
	if c.Subject == "" {
		return "has no sub"
	}
	// exp is required; iat is optional (RFC 7519 §4.1.6), so the lifetime
	// is bounded from now as well.
	exp := c.Expiry.Time
	if c.IssuedAt.set && exp.Sub(c.IssuedAt.Time) > v.maxLifetime {
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
