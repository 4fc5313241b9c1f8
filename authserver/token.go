package authserver

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/exchange"
)

// oauthError is a refusal; desc is a fixed phrase that never quotes input.
type oauthError struct {
	status int
	code   string
	desc   string
	basic  bool // add WWW-Authenticate: Basic
}

func fail(status int, code, desc string) *oauthError {
	return &oauthError{status: status, code: code, desc: desc}
}

func (s *Server) writeError(w http.ResponseWriter, e *oauthError) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if e.basic {
		h.Set("WWW-Authenticate", `Basic realm="tokex", charset="UTF-8"`)
	}
	w.WriteHeader(e.status)
	b, _ := json.Marshal(exchange.ErrorResponse{Error: e.code, ErrorDescription: e.desc})
	_, _ = w.Write(b)
}

func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("token endpoint panic", "panic", v)
			s.writeError(w, fail(500, exchange.ErrServerError, "internal error"))
		}
	}()
	if s.faults != nil {
		if d := s.faults.delay(time.Now()); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		if s.faults.fail() {
			s.writeError(w, fail(503, exchange.ErrTemporarilyUnavail, "injected fault"))
			return
		}
	}
	resp, oe := s.exchange(w, r)
	if oe != nil {
		s.writeError(w, oe)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	b, _ := json.Marshal(resp)
	_, _ = w.Write(b)
}

// singleValued are the parameters RFC 6749 §3.2 forbids repeating.
var singleValued = []string{"grant_type", "subject_token", "subject_token_type", "requested_token_type",
	"scope", "actor_token", "actor_token_type", "client_id", "client_secret"}

func (s *Server) exchange(w http.ResponseWriter, r *http.Request) (*exchange.Response, *oauthError) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return nil, fail(405, exchange.ErrInvalidRequest, "the token endpoint accepts POST only")
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, fail(400, exchange.ErrInvalidRequest, "content type must be application/x-www-form-urlencoded")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, fail(413, exchange.ErrInvalidRequest, "request body too large")
		}
		return nil, fail(400, exchange.ErrInvalidRequest, "could not read the request body")
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fail(400, exchange.ErrInvalidRequest, "malformed form body")
	}
	for _, p := range singleValued {
		if len(form[p]) > 1 {
			return nil, fail(400, exchange.ErrInvalidRequest, "parameter "+p+" is repeated")
		}
	}

	cl, oe := s.authenticate(r, form)
	if oe != nil {
		return nil, oe
	}

	gt := form.Get("grant_type")
	switch {
	case gt == "":
		return nil, fail(400, exchange.ErrInvalidRequest, "grant_type is required")
	case gt != exchange.GrantTypeTokenExchange:
		return nil, fail(400, exchange.ErrUnsupportedGrantType, "only token exchange is supported")
	case !cl.grants[gt]:
		return nil, fail(400, exchange.ErrUnauthorizedClient, "the client may not use token exchange")
	}

	st, stt := form.Get("subject_token"), form.Get("subject_token_type")
	if st == "" || stt == "" {
		return nil, fail(400, exchange.ErrInvalidRequest, "subject_token and subject_token_type are required")
	}
	if stt != exchange.TokenTypeAccessToken && stt != exchange.TokenTypeJWT {
		return nil, fail(400, exchange.ErrInvalidRequest, "unsupported subject_token_type")
	}
	issuedType := exchange.TokenTypeAccessToken
	switch rtt := form.Get("requested_token_type"); rtt {
	case "", exchange.TokenTypeAccessToken:
	case exchange.TokenTypeJWT:
		issuedType = exchange.TokenTypeJWT
	default:
		return nil, fail(400, exchange.ErrInvalidRequest, "unsupported requested_token_type")
	}

	targets := append(form["resource"], form["audience"]...)
	if len(targets) == 0 {
		return nil, fail(400, exchange.ErrInvalidTarget, "a resource or audience is required")
	}
	for _, res := range form["resource"] {
		// RFC 8707 §2: an absolute URI without a fragment.
		u, err := url.Parse(res)
		if err != nil || !u.IsAbs() || u.Fragment != "" {
			return nil, fail(400, exchange.ErrInvalidTarget, "resource must be an absolute URI without fragment")
		}
	}
	for _, t := range targets {
		if !cl.resources[t] {
			return nil, fail(400, exchange.ErrInvalidTarget, "the requested target is not allowed for this client")
		}
	}
	scope := form.Get("scope")
	if scope != "" {
		for _, sc := range strings.Fields(scope) {
			if !cl.scopes[sc] {
				return nil, fail(400, exchange.ErrInvalidScope, "the requested scope is not allowed for this client")
			}
		}
		scope = strings.Join(strings.Fields(scope), " ")
	}

	sub, err := s.verify.verify(r.Context(), st, "subject token", cl.id)
	if err != nil {
		return nil, fail(400, exchange.ErrInvalidGrant, err.Error())
	}
	prior := sub.Act
	if at := form.Get("actor_token"); at != "" {
		att := form.Get("actor_token_type")
		if att != exchange.TokenTypeAccessToken && att != exchange.TokenTypeJWT {
			return nil, fail(400, exchange.ErrInvalidRequest, "actor_token_type is missing or unsupported")
		}
		act, err := s.verify.verify(r.Context(), at, "actor token", cl.id)
		if err != nil {
			return nil, fail(400, exchange.ErrInvalidGrant, err.Error())
		}
		prior = &actor{Sub: act.Subject, Act: act.Act}
	} else if form.Get("actor_token_type") != "" {
		return nil, fail(400, exchange.ErrInvalidRequest, "actor_token_type without actor_token")
	}

	now := time.Now().Unix()
	lifetime := int64(s.cfg.Signing.Lifetime / time.Second)
	var aud any = targets[0]
	if len(targets) > 1 {
		aud = targets
	}
	claims := issued{
		Issuer: s.cfg.Issuer, Subject: sub.Subject, Audience: aud, ClientID: cl.id, Scope: scope,
		IssuedAt: now, Expiry: now + lifetime, ID: newJTI(),
		Act: &actor{Sub: cl.id, Act: prior},
	}
	tok := jwt.NewWithClaims(s.key.Method(), claims)
	tok.Header["kid"] = s.key.Kid
	tokenType := "N_A"
	if issuedType == exchange.TokenTypeAccessToken {
		tok.Header["typ"] = "at+jwt"
		tokenType = "Bearer"
	}
	signed, err := tok.SignedString(s.key.Signer)
	if err != nil {
		return nil, fail(500, exchange.ErrServerError, "could not sign the token")
	}
	return &exchange.Response{
		AccessToken: signed, IssuedTokenType: issuedType, TokenType: tokenType,
		ExpiresIn: lifetime, Scope: scope,
	}, nil
}

// authenticate applies client_secret_basic or client_secret_post (one only).
func (s *Server) authenticate(r *http.Request, form url.Values) (*client, *oauthError) {
	authz := r.Header.Get("Authorization")
	id, secret, isBasic, err := exchange.ParseBasicAuth(authz)
	_, hasPostID := form["client_id"]
	_, hasPostSecret := form["client_secret"]
	bad := &oauthError{status: 401, code: exchange.ErrInvalidClient, desc: "client authentication failed", basic: true}
	switch {
	case isBasic && (hasPostSecret || hasPostID && form.Get("client_id") != id):
		return nil, fail(400, exchange.ErrInvalidRequest, "use one client authentication method")
	case isBasic && err != nil:
		return nil, bad
	case isBasic:
		cl := s.clients[id]
		if !cl.checkSecret(secret) || !cl.methods[exchange.AuthBasic] {
			return nil, bad
		}
		return cl, nil
	case authz != "":
		return nil, bad // an unsupported scheme
	case hasPostID && hasPostSecret:
		cl := s.clients[form.Get("client_id")]
		if !cl.checkSecret(form.Get("client_secret")) || !cl.methods[exchange.AuthPost] {
			bad.basic = false
			return nil, bad
		}
		return cl, nil
	default:
		return nil, bad
	}
}

func newJTI() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
