package authserver

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
)

// Issued tokens are written directly: the header is encoded once per key
// and type, the claims are appended, jose.Key.AppendCompact signs them
// into the response body. The bytes are those golang-jwt and encoding/json
// wrote (issue_test.go compares them).

// scratch holds one request's buffers, reused through scratchPool.
type scratch struct {
	body   []byte // the request body, then the response
	claims []byte // the issued claims, then the signature
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{body: make([]byte, 0, 2048), claims: make([]byte, 0, 512)}
}}

// maxPooledBuffer keeps one oversized request from pinning its buffer.
const maxPooledBuffer = 64 << 10

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(sc *scratch) {
	if cap(sc.body) <= maxPooledBuffer {
		scratchPool.Put(sc)
	}
}

// readBody reads r whole into the scratch buffer and returns it as a string
// (the one copy url.ParseQuery needs).
func (sc *scratch) readBody(r io.Reader) (string, error) {
	b := sc.body[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			sc.body = b[:0]
			if errors.Is(err, io.EOF) {
				return string(b), nil
			}
			return "", err
		}
	}
}

// jwsHeaders returns the encoded headers of issued tokens, each with its
// trailing dot: typ at+jwt (RFC 9068) and typ JWT.
func jwsHeaders(key *jose.Key) (accessToken, jwt string) {
	return jose.EncodeHeader(key.Alg, key.Kid, "at+jwt"), jose.EncodeHeader(key.Alg, key.Kid, "JWT")
}

// issue signs the RFC 9068 access token for subject, with the act chain
// act (nil: none), and appends the success response to sc.body: RFC 8693
// §2.2.1's for an exchange, RFC 6749 §5.1's (no issued_token_type) for the
// other grants.
func (s *Server) issue(req *tokenRequest, subject string, act *jose.Actor, sc *scratch) ([]byte, *oauthError) {
	now := time.Now().Unix()
	lifetime := int64(s.cfg.Signing.Lifetime / time.Second)
	header, tokenType := s.headerJWT, "N_A"
	if req.issuedType == exchange.TokenTypeAccessToken {
		header, tokenType = s.headerAT, "Bearer"
	}
	claims := appendIssued(sc.claims[:0], accessClaims{
		issuer: s.cfg.Issuer, subject: subject, audience: req.targets, clientID: req.client.id,
		scope: req.scope, issuedAt: now, expiry: now + lifetime, act: act, cnf: req.cnf,
	})
	b := append(sc.body[:0], `{"access_token":"`...)
	b, sig, err := s.key.AppendCompact(b, header, claims)
	if err != nil {
		return nil, fail(500, exchange.ErrServerError, "could not sign the token")
	}
	sc.claims = sig
	b = append(b, '"')
	if req.grant == exchange.GrantTypeTokenExchange {
		b = append(b, `,"issued_token_type":`...)
		b = appendJSONString(b, req.issuedType)
	}
	b = append(b, `,"token_type":`...)
	b = appendJSONString(b, tokenType)
	if lifetime != 0 {
		b = append(b, `,"expires_in":`...)
		b = strconv.AppendInt(b, lifetime, 10)
	}
	if req.scope != "" {
		b = append(b, `,"scope":`...)
		b = appendJSONString(b, req.scope)
	}
	b = append(b, '}')
	sc.body = b[:0]
	return b, nil
}

// accessClaims are the claims of an issued access token (RFC 9068 §2.2).
type accessClaims struct {
	issuer, subject  string
	audience         []string // one: a string; more: an array
	clientID, scope  string
	issuedAt, expiry int64
	act              *jose.Actor
	// cnf is the x5t#S256 of the client certificate the token is bound to
	// (RFC 8705 §3.1), "" for none.
	cnf string
}

// appendIssued appends the claims as encoding/json writes them (member
// order, omitempty scope and act, HTML-safe escaping) with a fresh jti.
func appendIssued(b []byte, c accessClaims) []byte {
	b = append(b, `{"iss":`...)
	b = appendJSONString(b, c.issuer)
	b = append(b, `,"sub":`...)
	b = appendJSONString(b, c.subject)
	b = append(b, `,"aud":`...)
	if len(c.audience) == 1 {
		b = appendJSONString(b, c.audience[0])
	} else {
		b = appendJSONStrings(b, c.audience)
	}
	b = append(b, `,"client_id":`...)
	b = appendJSONString(b, c.clientID)
	if c.scope != "" {
		b = append(b, `,"scope":`...)
		b = appendJSONString(b, c.scope)
	}
	b = append(b, `,"iat":`...)
	b = strconv.AppendInt(b, c.issuedAt, 10)
	b = append(b, `,"exp":`...)
	b = strconv.AppendInt(b, c.expiry, 10)
	b = append(b, `,"jti":"`...)
	var id [16]byte
	_, _ = rand.Read(id[:])
	b = base64.RawURLEncoding.AppendEncode(b, id[:])
	b = append(b, '"')
	if c.act != nil {
		b = append(b, `,"act":`...)
		b = appendActor(b, c.act)
	}
	if c.cnf != "" {
		b = append(b, `,"cnf":{"x5t#S256":`...)
		b = appendJSONString(b, c.cnf)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendActor appends an act claim (sub, then the prior actor).
func appendActor(b []byte, a *jose.Actor) []byte {
	b = append(b, `{"sub":`...)
	b = appendJSONString(b, a.Sub)
	if a.Act != nil {
		b = append(b, `,"act":`...)
		b = appendActor(b, a.Act)
	}
	return append(b, '}')
}

func appendJSONStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONString appends s quoted as json.Marshal quotes it: printable
// ASCII other than " \ < > & as is; anything else through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
