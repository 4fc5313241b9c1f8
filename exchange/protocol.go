// Package exchange is the RFC 8693 token-exchange wire protocol shared by the
// load generators and the reference server: form fields, client
// authentication, the success response and the error classes.
package exchange

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
)

// Grant and token type URNs (RFC 8693 §2.1, §3).
const (
	GrantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"
	TokenTypeJWT           = "urn:ietf:params:oauth:token-type:jwt"
	TokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	// GrantTypeClientCredentials is RFC 6749 §4.4's grant: the client's own
	// token, no resource owner.
	GrantTypeClientCredentials = "client_credentials"
	// GrantTypeJWTBearer is RFC 7523 §2.1's grant: a JWT assertion of a
	// trusted issuer (form parameter assertion) for a token for its sub.
	GrantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
)

// GrantTypes are the grants tokex's reference server knows.
var GrantTypes = []string{GrantTypeTokenExchange, GrantTypeClientCredentials, GrantTypeJWTBearer}

// OAuth error codes (RFC 6749 §5.2, RFC 8693 §2.2.2).
const (
	ErrInvalidRequest       = "invalid_request"
	ErrInvalidClient        = "invalid_client"
	ErrInvalidGrant         = "invalid_grant"
	ErrUnauthorizedClient   = "unauthorized_client"
	ErrUnsupportedGrantType = "unsupported_grant_type"
	ErrInvalidScope         = "invalid_scope"
	ErrInvalidTarget        = "invalid_target"
	ErrServerError          = "server_error"
	ErrTemporarilyUnavail   = "temporarily_unavailable"
)

// BasicAuth encodes client credentials for client_secret_basic: RFC 6749
// §2.3.1 form-encodes id and secret before joining them.
func BasicAuth(clientID, secret string) string {
	raw := url.QueryEscape(clientID) + ":" + url.QueryEscape(secret)
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(raw))
}

// ParseBasicAuth is the inverse of BasicAuth. ok is false when the header is
// not Basic; err is set when it is Basic but malformed.
func ParseBasicAuth(header string) (clientID, secret string, ok bool, err error) {
	const prefix = "basic "
	if len(header) < len(prefix) || !strings.EqualFold(header[:len(prefix)], prefix) {
		return "", "", false, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(header[len(prefix):]))
	if err != nil {
		return "", "", true, errors.New("malformed basic credentials")
	}
	id, sec, found := strings.Cut(string(raw), ":")
	if !found {
		return "", "", true, errors.New("malformed basic credentials")
	}
	if clientID, err = url.QueryUnescape(id); err != nil {
		return "", "", true, errors.New("malformed basic credentials")
	}
	if secret, err = url.QueryUnescape(sec); err != nil {
		return "", "", true, errors.New("malformed basic credentials")
	}
	return clientID, secret, true, nil
}

// Response is the success body of RFC 8693 §2.2.1.
type Response struct {
	AccessToken     string `json:"access_token"`
	IssuedTokenType string `json:"issued_token_type"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in,omitempty"`
	Scope           string `json:"scope,omitempty"`
	RefreshToken    string `json:"refresh_token,omitempty"`
}

// ErrorResponse is the error body of RFC 6749 §5.2.
type ErrorResponse struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description,omitempty"`
}
