package jose

import (
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/internal/jwks"
)

// The tokens a target issues are checked on a sample, not on every
// exchange, and may use any asymmetric algorithm: golang-jwt reads them.

// issuedAlgs are the algorithms an issued token may be signed with (never
// none or HMAC).
var issuedAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// VerifyJWT checks a compact JWS JWT that a target issued: an asymmetric
// algorithm, signed by the one key of keys that fits it (jwks.Set.Select),
// exp required, iss equal to issuer unless issuer is "", 5 s leeway. The
// claims are golang-jwt's map; the error is an *Error phrase that quotes
// nothing of the token ("is expired").
func VerifyJWT(tok string, keys *jwks.Set, issuer string) (jwt.MapClaims, error) {
	opts := []jwt.ParserOption{jwt.WithValidMethods(issuedAlgs), jwt.WithExpirationRequired(), jwt.WithLeeway(5 * time.Second)}
	if issuer != "" {
		opts = append(opts, jwt.WithIssuer(issuer))
	}
	claims := jwt.MapClaims{}
	_, err := jwt.NewParser(opts...).ParseWithClaims(tok, claims, func(t *jwt.Token) (any, error) {
		kid, hasKid := t.Header["kid"].(string)
		k, err := keys.Select(t.Method.Alg(), kid, hasKid)
		if err != nil {
			return nil, err
		}
		return k.Public, nil
	})
	if err != nil {
		return nil, &Error{jwtWhy(err)}
	}
	return claims, nil
}

// jwtWhy maps a golang-jwt error to a fixed phrase.
func jwtWhy(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "is not a JWT"
	case errors.Is(err, jwks.ErrUnknown), errors.Is(err, jwks.ErrAmbiguous), errors.Is(err, jwks.ErrMismatch):
		return "is signed with a key the target does not publish"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return phraseBadSig
	case errors.Is(err, jwt.ErrTokenExpired):
		return phraseExpired
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "has no exp"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "iss is not the target's issuer"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return phraseNotYet
	}
	return "is invalid"
}
