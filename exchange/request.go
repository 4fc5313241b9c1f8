package exchange

import (
	"net/http"
	"net/url"
)

// AuthMethod is how a client authenticates at the token endpoint.
type AuthMethod string

const (
	AuthBasic AuthMethod = "client_secret_basic"
	AuthPost  AuthMethod = "client_secret_post"
	// AuthPrivateKeyJWT is RFC 7523 §2.2: a JWT signed with the client's
	// key, fresh for every request.
	AuthPrivateKeyJWT AuthMethod = "private_key_jwt"
	// AuthTLSClient is RFC 8705 §2.1: the client's certificate, bound to
	// its registered subject DN or SAN; the form names the client.
	AuthTLSClient AuthMethod = "tls_client_auth"
)

// AuthMethods are the methods tokex authenticates with, on both ends.
var AuthMethods = []AuthMethod{AuthBasic, AuthPost, AuthPrivateKeyJWT, AuthTLSClient}

// ClientAssertionType is RFC 7523 §2.2's client_assertion_type.
const ClientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// TokenTypeNames are the short names a config may give a token type by.
var TokenTypeNames = []string{"access_token", "jwt", "id_token", "refresh_token"}

// TokenTypeURI maps a short name (access_token, jwt, id_token,
// refresh_token) to its RFC 8693 §3 URI; anything else is returned as is.
func TokenTypeURI(s string) string {
	switch s {
	case "access_token", "jwt", "id_token", "refresh_token":
		return "urn:ietf:params:oauth:token-type:" + s
	}
	return s
}

// SentFields are the form fields tokex sets itself; Template.Extra may not.
var SentFields = []string{"grant_type", "subject_token", "subject_token_type", "requested_token_type", "resource",
	"audience", "scope", "actor_token", "actor_token_type", "client_id", "client_secret", "client_assertion",
	"client_assertion_type"}

// Template holds the parts of an exchange request that do not change between
// requests; only the subject token (and client) do.
type Template struct {
	SubjectTokenType   string
	RequestedTokenType string
	Resources          []string
	Audiences          []string
	Scope              string
	ActorToken         string
	ActorTokenType     string
	Extra              map[string]string // e.g. connector_id for Dex
	Auth               AuthMethod
	// Grant is the request's kind: "" (a token exchange) or a plain grant,
	// whose form has no token-exchange fields (a jwt_bearer's assertion is
	// the user's token).
	Grant Grant
}

// Body builds the application/x-www-form-urlencoded body for one exchange.
// The fixed part is encoded once by Compile; this only appends the token.
type Body struct {
	prefix string // everything before subject_token
	auth   AuthMethod
	token  string // the field of the user's token: "&subject_token=", "&assertion=" or "" (none)
	actor  bool   // an actor_token follows the subject token
}

// Compile pre-encodes the constant part of the form. An ActorTokenType
// without an ActorToken makes room for an actor token per request
// (AppendFormActor), whose type is in the fixed part.
func (t Template) Compile() Body {
	v := url.Values{}
	gt, field := t.Grant.grantType()
	v.Set("grant_type", gt)
	if t.Grant.Or() == GrantExchange {
		stt := TokenTypeURI(t.SubjectTokenType)
		if stt == "" {
			stt = TokenTypeAccessToken
		}
		v.Set("subject_token_type", stt)
		if t.RequestedTokenType != "" {
			v.Set("requested_token_type", TokenTypeURI(t.RequestedTokenType))
		}
	}
	for _, r := range t.Resources {
		v.Add("resource", r)
	}
	for _, a := range t.Audiences {
		v.Add("audience", a)
	}
	if t.Scope != "" {
		v.Set("scope", t.Scope)
	}
	actor := false
	if t.Grant.Or() == GrantExchange && t.ActorTokenType != "" {
		v.Set("actor_token_type", TokenTypeURI(t.ActorTokenType))
		if t.ActorToken != "" {
			v.Set("actor_token", t.ActorToken)
		} else {
			actor = true
		}
	}
	for k, val := range t.Extra {
		v.Set(k, val)
	}
	auth := t.Auth
	if auth == "" {
		auth = AuthBasic
	}
	if field != "" {
		field = "&" + field + "="
	}
	return Body{prefix: v.Encode(), auth: auth, token: field, actor: actor}
}

// Actor reports a body that carries an actor token per request.
func (b Body) Actor() bool { return b.actor }

// Fixed is the form-encoded fixed part (everything but the subject token
// and client credentials), e.g. for the k6 agent script.
func (b Body) Fixed() string { return b.prefix }

// Auth is the client authentication method the body was compiled for.
func (b Body) Auth() AuthMethod { return b.auth }

// Form returns the full body for one subject token. cred is the client
// secret (client_secret_post) or the client assertion (private_key_jwt),
// which go in the body with the client id, as does the client id alone for
// tls_client_auth; for basic the caller sets the header.
func (b Body) Form(subjectToken, clientID, cred string) string {
	return string(b.AppendForm(make([]byte, 0, len(b.prefix)+len(subjectToken)+len(cred)+160), subjectToken, clientID, cred))
}

// AppendForm appends Form's bytes to dst without building a string.
func (b Body) AppendForm(dst []byte, subjectToken, clientID, cred string) []byte {
	return b.AppendFormActor(dst, subjectToken, "", clientID, cred)
}

// AppendFormActor is AppendForm with an actor token after the subject
// token, when the body was compiled for one (Actor).
func (b Body) AppendFormActor(dst []byte, subjectToken, actorToken, clientID, cred string) []byte {
	dst = append(dst, b.prefix...)
	if b.token != "" {
		dst = append(dst, b.token...)
		dst = append(dst, url.QueryEscape(subjectToken)...)
	}
	if b.actor {
		dst = append(dst, "&actor_token="...)
		dst = append(dst, url.QueryEscape(actorToken)...)
	}
	if b.auth == AuthBasic {
		return dst
	}
	dst = append(dst, "&client_id="...)
	dst = append(dst, url.QueryEscape(clientID)...)
	switch b.auth {
	case AuthPost:
		dst = append(dst, "&client_secret="...)
		dst = append(dst, url.QueryEscape(cred)...)
	case AuthPrivateKeyJWT:
		dst = append(dst, "&client_assertion_type="...)
		dst = append(dst, url.QueryEscape(ClientAssertionType)...)
		dst = append(dst, "&client_assertion="...)
		dst = append(dst, url.QueryEscape(cred)...)
	}
	return dst
}

// NoRedirect is the CheckRedirect of every client that sends an exchange:
// a 3xx comes back as the answer (an http_error with its status). Following
// it would re-send the client secret — the Basic header to another port of
// the same host, the form body of client_secret_post to any host — and a
// fresh subject token.
func NoRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
