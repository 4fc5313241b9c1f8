// Package subject mints the load generator's subject tokens and publishes the
// matching JWKS, the role of the article's k6 script and perf-jwks-server.
// The keys, their JWKs and the signing are internal/jose's; subject keeps
// the key files, the token's shape and the issuer.
package subject

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/internal/jose"
)

// Claims are the subject token's registered claims, as in the article's k6
// script (for reading tokens back in tests).
type Claims struct {
	Issuer    string `json:"iss"`
	Subject   string `json:"sub"`
	Audience  string `json:"aud"`
	IssuedAt  int64  `json:"iat"`
	NotBefore int64  `json:"nbf,omitempty"`
	Expiry    int64  `json:"exp"`
	ID        string `json:"jti"`
}

// GetExpirationTime and the rest implement jwt.Claims.
func (c Claims) GetExpirationTime() (*jwt.NumericDate, error) { return numeric(c.Expiry), nil }
func (c Claims) GetIssuedAt() (*jwt.NumericDate, error)       { return numeric(c.IssuedAt), nil }
func (c Claims) GetNotBefore() (*jwt.NumericDate, error)      { return numeric(c.NotBefore), nil }
func (c Claims) GetIssuer() (string, error)                   { return c.Issuer, nil }
func (c Claims) GetSubject() (string, error)                  { return c.Subject, nil }
func (c Claims) GetAudience() (jwt.ClaimStrings, error)       { return jwt.ClaimStrings{c.Audience}, nil }

func numeric(v int64) *jwt.NumericDate {
	if v == 0 {
		return nil
	}
	return jwt.NewNumericDate(time.Unix(v, 0))
}

// Users returns the synthetic user pool perf-user-001 … perf-user-N.
func Users(n int) []string {
	width := len(strconv.Itoa(n))
	if width < 3 {
		width = 3
	}
	u := make([]string, n)
	for i := range u {
		u[i] = fmt.Sprintf("perf-user-%0*d", width, i+1)
	}
	return u
}

// Shape is what a subject token looks like beyond the article's claims.
type Shape struct {
	// Typ is the header's typ (default "JWT"; "at+jwt" for RFC 9068).
	Typ string
	// Audience is a fixed aud; "" makes it the presenting agent's client id,
	// as in the article.
	Audience string
	// Claims are added to every token. In strings, {{user}} becomes the
	// token's user, {{user_number}} its number in the pool (1…N) and
	// {{client_id}} the presenting agent's client id.
	Claims map[string]any
}

// MintedClaims are the claims tokex sets itself; Shape.Claims may not.
var MintedClaims = []string{"iss", "sub", "aud", "iat", "nbf", "exp", "jti"}

// MaxClaimsBytes bounds the extra claims, JSON-encoded.
const MaxClaimsBytes = 16 << 10

var placeholder = regexp.MustCompile(`\{\{\s*([a-z_]*)\s*\}\}`)

// Placeholders are the template variables of claim strings.
var Placeholders = []string{"user", "user_number", "client_id"}

// Check validates the shape: no claim tokex sets, only known
// placeholders, JSON-encodable (no NaN), and bounded.
func (s Shape) Check() error {
	_, err := s.compile()
	return err
}

// compiledShape is a Shape's JSON, ready to render.
type compiledShape struct {
	extra    string // `,"name":value…` in name order, with placeholders
	template bool
}

func (s Shape) compile() (*compiledShape, error) {
	names := make([]string, 0, len(s.Claims))
	for n := range s.Claims {
		if slices.Contains(MintedClaims, n) {
			return nil, fmt.Errorf("claim %q is set by tokex (iss, sub, aud, iat, exp, jti: subject.issuer, users, subject.audience, subject.lifetime)", n)
		}
		if n == "" {
			return nil, errors.New("a claim has an empty name")
		}
		names = append(names, n)
	}
	slices.Sort(names)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, n := range names {
		b.WriteByte(',')
		if err := enc.Encode(n); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		if err := enc.Encode(jsonable(s.Claims[n])); err != nil {
			return nil, fmt.Errorf("claim %q: %w", n, err)
		}
		b.Truncate(b.Len() - 1)
		if b.Len() > MaxClaimsBytes {
			return nil, fmt.Errorf("the claims are more than %d bytes of JSON", MaxClaimsBytes)
		}
	}
	c := &compiledShape{extra: b.String()}
	for _, m := range placeholder.FindAllStringSubmatch(c.extra, -1) {
		if !slices.Contains(Placeholders, m[1]) {
			return nil, fmt.Errorf("unknown placeholder %s in the claims (%s)", m[0], "{{"+strings.Join(Placeholders, "}}, {{")+"}}")
		}
		c.template = true
	}
	return c, nil
}

// jsonable turns YAML's map[any]any (which JSON cannot encode) into
// map[string]any, recursively.
func jsonable(v any) any {
	switch t := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = jsonable(x)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = jsonable(x)
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = jsonable(x)
		}
		return out
	}
	return v
}

// Minter signs fresh subject tokens: every call has a unique jti and the
// next user of the pool, round-robin.
type Minter struct {
	Key      *jose.Key
	Issuer   string
	Lifetime time.Duration
	Users    []string
	Prefix   string // jti prefix, unique per campaign and agent
	Shape    Shape
	Now      func() time.Time

	seq      atomic.Uint64
	once     sync.Once
	header   string // base64url of the header, with the dot
	shape    *compiledShape
	shapeErr error
}

func (m *Minter) init() {
	typ := m.Shape.Typ
	if typ == "" {
		typ = "JWT"
	}
	// alg, kid, typ: the order golang-jwt wrote, which the k6 script follows.
	m.header = jose.EncodeHeader(m.Key.Alg, m.Key.Kid, typ)
	m.shape, m.shapeErr = m.Shape.compile()
	if m.shapeErr == nil {
		m.shapeErr = m.Key.CanSign()
	}
}

// Mint signs a token for the agent whose client id is clientID: its
// audience unless the shape fixes one.
func (m *Minter) Mint(clientID string) (string, error) {
	m.once.Do(m.init)
	if m.shapeErr != nil {
		return "", m.shapeErr
	}
	n := m.seq.Add(1) - 1
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	t := now().Unix()
	ui := n % uint64(len(m.Users))
	user := m.Users[ui]
	aud := m.Shape.Audience
	if aud == "" {
		aud = clientID
	}
	bp, _ := bufs.Get().(*[2][]byte)
	if bp == nil {
		bp = &[2][]byte{make([]byte, 0, 512), make([]byte, 0, 512)}
	}
	b := appendRegistered(bp[1][:0], m.Issuer, user, aud, t, m.Lifetime)
	b = append(b, `,"jti":"`...)
	if p := jsonStringBody(m.Prefix); p == m.Prefix {
		b = append(b, p...)
		b = strconv.AppendUint(b, n, 36)
	} else {
		b = append(b, jsonStringBody(m.Prefix+strconv.FormatUint(n, 36))...)
	}
	b = append(b, '"')
	if m.shape.template {
		b = append(b, placeholder.ReplaceAllStringFunc(m.shape.extra, func(p string) string {
			switch strings.Trim(p, "{} ") {
			case "user":
				return jsonStringBody(user)
			case "user_number":
				return strconv.FormatUint(ui+1, 10)
			default: // client_id
				return jsonStringBody(clientID)
			}
		})...)
	} else {
		b = append(b, m.shape.extra...)
	}
	b = append(b, '}')
	out, err := signCompact(bp, m.header, b, m.Key)
	bufs.Put(bp)
	return out, err
}

// signCompact signs claims (in bp[1]) under the encoded header (with its
// dot) and returns the compact JWS; bp keeps the grown buffers: the token's
// in bp[0], the claims' and then the signature's in bp[1].
func signCompact(bp *[2][]byte, header string, claims []byte, k *jose.Key) (string, error) {
	tok, sig, err := k.AppendCompact(bp[0][:0], header, claims)
	var out string
	if err == nil {
		out = string(tok)
	}
	bp[0], bp[1] = tok[:0], sig
	return out, err
}

// bufs are Mint's scratch buffers: the token and the claims (then the
// signature).
var bufs sync.Pool

// appendJSONString appends s as a JSON string.
// appendRegistered appends a payload's opening registered claims, iss,
// sub, aud, iat and exp (iat + life), in the order every minted token has.
func appendRegistered(b []byte, iss, sub, aud string, iat int64, life time.Duration) []byte {
	b = append(b, `{"iss":`...)
	b = appendJSONString(b, iss)
	b = append(b, `,"sub":`...)
	b = appendJSONString(b, sub)
	b = append(b, `,"aud":`...)
	b = appendJSONString(b, aud)
	b = append(b, `,"iat":`...)
	b = strconv.AppendInt(b, iat, 10)
	b = append(b, `,"exp":`...)
	return strconv.AppendInt(b, iat+int64(life/time.Second), 10)
}

func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, jsonStringBody(s)...)
	return append(b, '"')
}

// jsonStringBody is s escaped for the inside of a JSON string; the common
// case (no quote, backslash, control byte or invalid UTF-8) costs a scan.
func jsonStringBody(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			q, _ := json.Marshal(s)
			return string(q[1 : len(q)-1])
		}
	}
	return s
}
