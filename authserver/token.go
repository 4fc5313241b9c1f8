package authserver

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
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
	sc := getScratch()
	defer putScratch(sc)
	body, oe := s.exchange(w, r, sc)
	if oe != nil {
		s.writeError(w, oe)
		return
	}
	h := w.Header()
	h["Content-Type"] = headerJSON
	h["Cache-Control"] = headerNoStore
	h["Pragma"] = headerNoCache
	_, _ = w.Write(body)
}

// Shared header values of the success response: net/http only reads them,
// and Header.Set or Add would replace, not change, them.
var (
	headerJSON    = []string{"application/json"}
	headerNoStore = []string{"no-store"}
	headerNoCache = []string{"no-cache"}
)

const formType = "application/x-www-form-urlencoded"

// singleValued are the parameters RFC 6749 §3.2 forbids repeating.
var singleValued = []string{"grant_type", "subject_token", "subject_token_type", "requested_token_type",
	"scope", "actor_token", "actor_token_type", "client_id", "client_secret", "client_assertion", "client_assertion_type",
	"assertion"}

// exchange answers one token request: read the form, authenticate the
// client, check the request against the client's policy, validate what
// the grant presents (the subject and actor tokens, the assertion), issue.
func (s *Server) exchange(w http.ResponseWriter, r *http.Request, sc *scratch) ([]byte, *oauthError) {
	form, oe := s.readForm(w, r, sc)
	if oe != nil {
		return nil, oe
	}
	cl, oe := s.authenticate(r, form)
	if oe != nil {
		return nil, oe
	}
	req, oe := s.parseRequest(form, cl)
	if oe != nil {
		return nil, oe
	}
	req.cnf = certThumbprint(r)
	var sub string
	var act *jose.Actor
	switch req.grant {
	case exchange.GrantTypeTokenExchange:
		sub, act, oe = s.validateTokens(r.Context(), form, &req)
	case exchange.GrantTypeClientCredentials:
		sub = cl.id // RFC 9068 §2.2: no resource owner, the client
	default: // jwt-bearer
		sub, oe = s.bearerAssertion(r.Context(), form.Get("assertion"), cl)
	}
	if oe != nil {
		return nil, oe
	}
	return s.issue(&req, sub, act, sc)
}

// readForm reads the POSTed form body and refuses repeated parameters.
func (s *Server) readForm(w http.ResponseWriter, r *http.Request, sc *scratch) (url.Values, *oauthError) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return nil, fail(405, exchange.ErrInvalidRequest, "the token endpoint accepts POST only")
	}
	if ct := r.Header.Get("Content-Type"); ct != formType { // the usual value, without parsing
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != formType {
			return nil, fail(400, exchange.ErrInvalidRequest, "content type must be application/x-www-form-urlencoded")
		}
	}
	body, err := sc.readBody(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, fail(413, exchange.ErrInvalidRequest, "request body too large")
		}
		return nil, fail(400, exchange.ErrInvalidRequest, "could not read the request body")
	}
	form, err := s.form.parseForm(body)
	if err != nil {
		return nil, fail(400, exchange.ErrInvalidRequest, "malformed form body")
	}
	for _, p := range singleValued {
		if len(form[p]) > 1 {
			return nil, fail(400, exchange.ErrInvalidRequest, "parameter "+p+" is repeated")
		}
	}
	return form, nil
}

// tokenRequest is a token request that passed the client's policy.
type tokenRequest struct {
	client       *client
	grant        string // one of exchange.GrantTypes
	subjectToken string
	issuedType   string
	targets      []string // resources, then audiences; at least one
	scope        string   // normalised: single spaces
	cnf          string   // x5t#S256 of the client certificate, "" without one
}

// parseRequest checks grant, token types (an exchange) or the assertion
// (jwt-bearer), targets and scope, in that order. Grants other than an
// exchange issue access tokens: requested_token_type is an RFC 8693
// parameter they ignore (RFC 6749 §3.2).
func (s *Server) parseRequest(form url.Values, cl *client) (tokenRequest, *oauthError) {
	req := tokenRequest{client: cl, grant: form.Get("grant_type"), issuedType: exchange.TokenTypeAccessToken}
	oe := checkGrant(req.grant, cl)
	switch {
	case oe != nil:
	case req.grant == exchange.GrantTypeTokenExchange:
		req.subjectToken, req.issuedType, oe = tokenTypes(form)
	case req.grant == exchange.GrantTypeJWTBearer && form.Get("assertion") == "":
		oe = fail(400, exchange.ErrInvalidRequest, "assertion is required")
	}
	if oe == nil {
		req.targets, oe = s.checkTargets(form, cl)
	}
	if oe == nil {
		req.scope, oe = checkScope(form.Get("scope"), cl)
	}
	return req, oe
}

// tokenTypes returns the subject token and the token type to issue.
func tokenTypes(form url.Values) (subjectToken, issuedType string, oe *oauthError) {
	st, stt := form.Get("subject_token"), form.Get("subject_token_type")
	if st == "" || stt == "" {
		return "", "", fail(400, exchange.ErrInvalidRequest, "subject_token and subject_token_type are required")
	}
	if stt != exchange.TokenTypeAccessToken && stt != exchange.TokenTypeJWT {
		return "", "", fail(400, exchange.ErrInvalidRequest, "unsupported subject_token_type")
	}
	switch rtt := form.Get("requested_token_type"); rtt {
	case "", exchange.TokenTypeAccessToken:
		return st, exchange.TokenTypeAccessToken, nil
	case exchange.TokenTypeJWT:
		return st, exchange.TokenTypeJWT, nil
	default:
		return "", "", fail(400, exchange.ErrInvalidRequest, "unsupported requested_token_type")
	}
}

// checkTargets returns the requested resources and audiences, each allowed
// for the client: one of its resources, or with delegation.peer_audiences
// an audience that is another client of the server.
func (s *Server) checkTargets(form url.Values, cl *client) ([]string, *oauthError) {
	resources := form["resource"]
	targets := append(resources, form["audience"]...)
	if len(targets) == 0 {
		return nil, fail(400, exchange.ErrInvalidTarget, "a resource or audience is required")
	}
	for _, res := range form["resource"] {
		known, seen := s.form.absoluteURI[res]
		if seen && !known || !seen && !absoluteURI(res) {
			return nil, fail(400, exchange.ErrInvalidTarget, "resource must be an absolute URI without fragment")
		}
	}
	for i, t := range targets {
		if !cl.resources[t] && !(i >= len(resources) && s.cfg.Delegation.PeerAudiences && s.clients[t] != nil) {
			return nil, fail(400, exchange.ErrInvalidTarget, "the requested target is not allowed for this client")
		}
	}
	return targets, nil
}

// checkScope returns the requested scope, normalised, when the client may
// have every scope in it.
func checkScope(scope string, cl *client) (string, *oauthError) {
	if scope == "" {
		return "", nil
	}
	for sc := range strings.FieldsSeq(scope) {
		if !cl.scopes[sc] {
			return "", fail(400, exchange.ErrInvalidScope, "the requested scope is not allowed for this client")
		}
	}
	if normalScope(scope) {
		return scope, nil
	}
	return strings.Join(strings.Fields(scope), " "), nil
}

// normalScope reports whether scope is printable ASCII words joined by
// single spaces, which strings.Fields and Join would leave as it is.
func normalScope(scope string) bool {
	for i := 0; i < len(scope); i++ {
		c := scope[i]
		if c == ' ' && (i == 0 || i == len(scope)-1 || scope[i-1] == ' ') || c < ' ' || c > '~' {
			return false
		}
	}
	return true
}

// authenticate applies one client authentication method: a client
// assertion (private_key_jwt), else a client id alone with a certificate
// (tls_client_auth), else a secret.
func (s *Server) authenticate(r *http.Request, form url.Values) (*client, *oauthError) {
	_, hasAssertion := form["client_assertion"]
	_, hasSecret := form["client_secret"]
	hasAuthz := r.Header.Get("Authorization") != ""
	switch {
	case hasAssertion && (hasAuthz || hasSecret):
		return nil, fail(400, exchange.ErrInvalidRequest, "use one client authentication method")
	case hasAssertion:
		return s.assertionClient(form)
	case !hasAuthz && !hasSecret && form.Has("client_id"):
		return s.certificateClient(r, form.Get("client_id"))
	}
	return s.secretClient(r, form)
}

// secretClient applies client_secret_basic or client_secret_post (one only).
func (s *Server) secretClient(r *http.Request, form url.Values) (*client, *oauthError) {
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
