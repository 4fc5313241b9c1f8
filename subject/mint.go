package subject

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Claims are the subject token's claims, as in the article's k6 script.
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

// Minter signs fresh subject tokens: every call has a unique jti and the
// next user of the pool, round-robin.
type Minter struct {
	Key      *Key
	Issuer   string
	Lifetime time.Duration
	Users    []string
	Prefix   string // jti prefix, unique per campaign and agent
	Now      func() time.Time

	seq atomic.Uint64
}

// Mint signs a token whose audience is the calling agent's client id.
func (m *Minter) Mint(audience string) (string, error) {
	n := m.seq.Add(1) - 1
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	t := now().Unix()
	c := Claims{
		Issuer:   m.Issuer,
		Subject:  m.Users[n%uint64(len(m.Users))],
		Audience: audience,
		IssuedAt: t,
		Expiry:   t + int64(m.Lifetime/time.Second),
		ID:       m.Prefix + strconv.FormatUint(n, 36),
	}
	tok := jwt.NewWithClaims(m.Key.method, c)
	tok.Header["kid"] = m.Key.Kid
	return tok.SignedString(m.Key.Signer)
}
