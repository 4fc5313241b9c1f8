package authserver

import (
	"context"
	"crypto"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/tokex-dev/tokex/internal/jose"
)

// verifier validates inbound JWTs of one issuer against its JWKS: subject
// tokens and jwt-bearer assertions (subject.issuer), or actor tokens
// (subject.actor.issuer). The server's own issued tokens are read by the
// same reader with the server's key (ownIssuer).
type verifier struct {
	keys *keySet
	// jws allows every algorithm tokex signs with; algorithms are this
	// issuer's, checked before its keys are looked at.
	jws         jose.Verifier
	algorithms  []string
	issuer      string
	audience    string
	leeway      time.Duration
	maxLifetime time.Duration
}

func newVerifier(ctx context.Context, sc SubjectConfig, src keySource, issuer, audience string, given []byte, log *slog.Logger) (*verifier, error) {
	keys, err := newKeySet(ctx, src, given, log)
	if err != nil {
		return nil, err
	}
	return &verifier{keys: keys, jws: jose.Verifier{Algorithms: jose.Algorithms}, algorithms: sc.Algorithms, issuer: issuer,
		audience: audience, leeway: sc.Leeway, maxLifetime: sc.MaxLifetime}, nil
}

// subjectSource and actorSource are where the subject and actor keys come
// from.
func subjectSource(sc SubjectConfig) keySource {
	return keySource{name: "subject", jwksURL: sc.JWKSURL, jwksFile: sc.JWKSFile, caFile: sc.CAFile, refresh: sc.Refresh,
		unknownKidInterval: sc.UnknownKidInterval}
}

func actorSource(sc SubjectConfig) keySource {
	a := sc.Actor
	return keySource{name: "subject.actor", jwksURL: a.JWKSURL, jwksFile: a.JWKSFile, caFile: a.CAFile, refresh: sc.Refresh,
		unknownKidInterval: sc.UnknownKidInterval}
}

// tokenError is why an inbound token was refused; the text is safe to send.
type tokenError struct{ desc string }

func (e *tokenError) Error() string { return e.desc }

// Phrases of the key choice, as internal/jose words them.
var (
	errAlgorithm  = errors.New("signature is invalid or its algorithm is not allowed")
	errUnknownKey = errors.New("is signed with an unknown key")
)

// ownIssuer is the server as the issuer of an inbound token: a token
// whose iss is the server's is verified with the server's signing key
// only, never with a JWKS. The zero ownIssuer accepts none.
type ownIssuer struct {
	issuer   string
	key      *jose.Key
	lifetime time.Duration // signing.lifetime: no token of its own lives longer
}

// publicKey is the server's key when h may name it: its alg, its kid or
// none.
func (o ownIssuer) publicKey(h jose.Header) (crypto.PublicKey, error) {
	if h.Alg != o.key.Alg {
		return nil, errAlgorithm
	}
	if h.KidKind == jose.KidOther || h.KidKind == jose.KidString && h.Kid != o.key.Kid {
		return nil, errUnknownKey
	}
	return o.key.Signer.Public(), nil
}

// verify parses and validates one inbound token of this verifier's issuer
// for the authenticated client (the subject-token policy).
func (v *verifier) verify(ctx context.Context, raw, what, clientID string) (*jose.Claims, error) {
	c, _, err := v.read(ctx, raw, ownIssuer{})
	if err != nil {
		return nil, &tokenError{what + " " + err.Error()}
	}
	if desc := v.policy(c, clientID); desc != "" {
		return nil, &tokenError{what + " " + desc}
	}
	return c, nil
}

// read returns the claims of a token whose signature, alg, key, time
// claims and issuer are good; the error is a jose phrase. A token whose iss
// is own's (when own is set and not this verifier's issuer) is read with
// own's key, and own reports it.
func (v *verifier) read(ctx context.Context, raw string, own ownIssuer) (c *jose.Claims, isOwn bool, err error) {
	c, err = v.jws.Verify(raw, func(h jose.Header, c *jose.Claims) (crypto.PublicKey, error) {
		if own.key != nil && own.issuer != "" && c.Issuer == own.issuer && own.issuer != v.issuer {
			isOwn = true
			return own.publicKey(h)
		}
		if !slices.Contains(v.algorithms, h.Alg) {
			return nil, errAlgorithm
		}
		return v.keys.selectKey(ctx, h)
	})
	if err != nil {
		return nil, false, err
	}
	iss := v.issuer
	if isOwn {
		iss = own.issuer
	}
	if err := c.CheckTimes(time.Now(), v.leeway, iss); err != nil {
		return nil, false, err
	}
	return c, isOwn, nil
}

// lifetime refuses a token that lives longer than max: exp − iat when it
// has an iat (optional, RFC 7519 §4.1.6), and exp − now always.
func lifetime(c *jose.Claims, max, leeway time.Duration) string {
	exp := c.Expiry.Time
	if c.IssuedAt.Set && exp.Sub(c.IssuedAt.Time) > max {
		return "lifetime (exp − iat) exceeds the maximum"
	}
	if time.Until(exp) > max+leeway {
		return "expires further ahead than the maximum lifetime"
	}
	return ""
}

// policy checks sub, the lifetime bounds and the audience.
func (v *verifier) policy(c *jose.Claims, clientID string) string {
	if c.Subject == "" {
		return "has no sub"
	}
	if desc := lifetime(c, v.maxLifetime, v.leeway); desc != "" {
		return desc
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
