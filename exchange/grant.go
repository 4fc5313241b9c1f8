package exchange

import (
	"fmt"
	"slices"
	"strings"
)

// Grant is the kind of token request an arrival makes: a token exchange
// (the default, and the subject of every figure), or one of the plain
// grants an exchange is compared with (workload.baseline, workload.mix).
type Grant string

const (
	// GrantExchange is RFC 8693's token exchange. requests.csv.gz writes
	// it as an empty kind, which every row written before kinds existed is.
	GrantExchange Grant = "exchange"
	// GrantClientCredentials is RFC 6749 §4.4: the client asks for a token
	// of its own, with nothing but its credentials.
	GrantClientCredentials Grant = "client_credentials"
	// GrantJWTBearer is RFC 7523 §2.1: a signed JWT (the user's subject
	// token) presented as an authorization grant.
	GrantJWTBearer Grant = "jwt_bearer"
)

// Grants are the kinds tokex sends; Baselines those an exchange is
// compared with.
var (
	Grants    = []Grant{GrantExchange, GrantClientCredentials, GrantJWTBearer}
	Baselines = []Grant{GrantClientCredentials, GrantJWTBearer}
)

// Or is g, or the exchange when g is empty (a row without a kind).
func (g Grant) Or() Grant {
	if g == "" {
		return GrantExchange
	}
	return g
}

// Known reports a kind tokex sends ("" is the exchange).
func (g Grant) Known() bool { return g == "" || slices.Contains(Grants, g) }

// Short is the kind's name in run IDs and narrow columns: cc, jwt, or
// exchange.
func (g Grant) Short() string {
	switch g {
	case GrantClientCredentials:
		return "cc"
	case GrantJWTBearer:
		return "jwtb"
	}
	return "exchange"
}

// ParseGrant reads a kind from a config: exchange, client_credentials or
// jwt_bearer (jwt-bearer too).
func ParseGrant(s string) (Grant, error) {
	g := Grant(strings.ReplaceAll(s, "-", "_"))
	if slices.Contains(Grants, g) {
		return g, nil
	}
	return "", fmt.Errorf("unknown grant %q (exchange, client_credentials, jwt_bearer)", s)
}

// grantType is the form's grant_type of a kind, and the field that carries
// the user's token ("" none).
func (g Grant) grantType() (grantType, tokenField string) {
	switch g {
	case GrantClientCredentials:
		return GrantTypeClientCredentials, ""
	case GrantJWTBearer:
		return GrantTypeJWTBearer, "assertion"
	}
	return GrantTypeTokenExchange, "subject_token"
}
