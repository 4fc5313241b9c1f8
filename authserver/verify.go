package authserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/tokex-dev/tokex/internal/tlscert"
)

// verifier validates inbound JWTs against the subject JWKS.
type verifier struct {
	kf       keyfunc.Keyfunc
	parser   *jwt.Parser
	audience string
}

func newVerifier(ctx context.Context, sc SubjectConfig, given []byte, log *slog.Logger) (*verifier, error) {
	kf, err := newKeyfunc(ctx, sc, given, log)
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
	return &verifier{kf: kf, parser: p, audience: sc.Audience}, nil
}

func newKeyfunc(ctx context.Context, sc SubjectConfig, given []byte, log *slog.Logger) (keyfunc.Keyfunc, error) {
	if sc.JWKSFile == "" && sc.JWKSURL == "" && given != nil {
		return keyfunc.NewJWKSetJSON(given)
	}
	if sc.JWKSFile != "" {
		raw, err := os.ReadFile(sc.JWKSFile)
		if err != nil {
			return nil, fmt.Errorf("subject.jwks_file: %w", err)
		}
		kf, err := keyfunc.NewJWKSetJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("subject.jwks_file %s: %w", sc.JWKSFile, err)
		}
		return kf, nil
	}
	if sc.JWKSURL == "" {
		return nil, errors.New("subject: set jwks_url or jwks_file")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if sc.CAFile != "" {
		pem, err := os.ReadFile(sc.CAFile)
		if err != nil {
			return nil, fmt.Errorf("subject.ca_file: %w", err)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: tlscert.Pool(pem), MinVersion: tls.VersionTLS12}
	}
	store, err := jwkset.NewStorageFromHTTP(sc.JWKSURL, jwkset.HTTPClientStorageOptions{
		Client:          &http.Client{Transport: tr, Timeout: 10 * time.Second},
		Ctx:             ctx,
		HTTPTimeout:     10 * time.Second,
		RefreshInterval: sc.Refresh,
		// Start even when the JWKS host is not up yet; unknown kids refresh.
		NoErrorReturnFirstHTTPReq: true,
		RefreshErrorHandler: func(ctx context.Context, err error) {
			log.Warn("subject JWKS refresh failed", "url", sc.JWKSURL, "error", err)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("subject.jwks_url: %w", err)
	}
	client, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		Given:    jwkset.NewMemoryStorage(),
		HTTPURLs: map[string]jwkset.Storage{sc.JWKSURL: store},
		// Fail fast instead of queueing requests behind the limiter.
		RateLimitWaitMax:  time.Millisecond,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(sc.UnknownKidInterval), 1),
	})
	if err != nil {
		return nil, err
	}
	return keyfunc.New(keyfunc.Options{Ctx: ctx, Storage: client})
}

// tokenError is why an inbound token was refused; the text is safe to send.
type tokenError struct{ desc string }

func (e *tokenError) Error() string { return e.desc }

// verify parses and validates one inbound token for the authenticated client.
func (v *verifier) verify(raw, what, clientID string) (*inbound, error) {
	if err := checkHeader(raw); err != nil {
		return nil, &tokenError{what + " header " + err.Error()}
	}
	var c inbound
	_, err := v.parser.ParseWithClaims(raw, &c, v.kf.Keyfunc)
	if ce, ok := asClaimError(err); ok {
		return nil, &tokenError{what + " " + ce.desc}
	}
	if err != nil {
		return nil, &tokenError{what + " " + describe(err)}
	}
	if c.Subject == "" {
		return nil, &tokenError{what + " has no sub"}
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
