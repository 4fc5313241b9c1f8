package authserver

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// verifier validates inbound JWTs against the subject JWKS.
type verifier struct {
	keys        *keySet
	parser      *jwt.Parser
	audience    string
	leeway      time.Duration
	maxLifetime time.Duration
}

func newVerifier(ctx context.Context, sc SubjectConfig, given []byte, log *slog.Logger) (*verifier, error) {
	keys, err := newKeySet(ctx, sc, given, log)
	if err != nil {
		return nil, err
	}
	p := jwt.NewParser(
		jwt.WithValidMethods(sc.Algorithms),
		jwt.WithIssuer(sc.Issuer),
		jwt.WithLeeway(sc.Leeway),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithStrictDecoding(),
	)
	return &verifier{keys: keys, parser: p, audience: sc.Audience, leeway: sc.Leeway, maxLifetime: sc.MaxLifetime}, nil
}

// tokenError is why an inbound token was refused; the text is safe to send.
type tokenError struct{ desc string }

func (e *tokenError) Error() string { return e.desc }

// verify parses and validates one inbound token for the authenticated client.
func (v *verifier) verify(ctx context.Context, raw, what, clientID string) (*inbound, error) {
	if err := checkHeader(raw); err != nil {
		return nil, &tokenError{what + " header " + err.Error()}
	}
	var c inbound
	_, err := v.parser.ParseWithClaims(raw, &c, v.keys.keyfunc(ctx))
	if ce, ok := asClaimError(err); ok {
		return nil, &tokenError{what + " " + ce.desc}
	}
	if err != nil {
		return nil, &tokenError{what + " " + describe(err)}
	}
	if c.Subject == "" {
		return nil, &tokenError{what + " has no sub"}
	}
	// golang-jwt has required exp; iat is optional (RFC 7519 §4.1.6), so
	// the lifetime is bounded from now as well.
	exp := c.Expiry.Time
	if c.IssuedAt != nil && exp.Sub(c.IssuedAt.Time) > v.maxLifetime {
		return nil, &tokenError{what + " lifetime (exp − iat) exceeds the maximum"}
	}
	if time.Until(exp) > v.maxLifetime+v.leeway {
		return nil, &tokenError{what + " expires further ahead than the maximum lifetime"}
	}
	switch v.audience {
	case "any":
	case "client_id":
		if !slices.Contains(c.Audience, clientID) {
			return nil, &tokenError{what + " audience does not match the client"}
		}
	default:
		if !slices.Contains(c.Audience, v.audience) {
			return nil, &tokenError{what + " audience is not accepted"}
		}
	}
	return &c, nil
}

// describe maps a jwt error to a fixed phrase that never quotes the token.
func describe(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "is malformed"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return "is signed with an unknown key"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "signature is invalid or its algorithm is not allowed"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "is expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "is not valid yet"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "lacks a required claim"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "issuer is not trusted"
	default:
		return "is invalid"
	}
}
