package subject

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/internal/jose"
)

// TestAsserterSignsRFC7523Assertions: every algorithm's assertion verifies
// with the client's public key and carries iss = sub = the client id, the
// audience, exp − iat = the lifetime and a jti never repeated.
func TestAsserterSignsRFC7523Assertions(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, alg := range jose.Algorithms {
		k, err := jose.GenerateKey(alg)
		if err != nil {
			t.Fatal(err)
		}
		a := &Asserter{Key: k, ClientID: `perf-agent-"0"`, Audience: "https://as.example/token", Lifetime: time.Minute,
			Prefix: "camp-c0-", Now: func() time.Time { return now }}
		seen := map[string]bool{}
		for range 50 {
			raw, err := a.Assert()
			if err != nil {
				t.Fatal(err)
			}
			var c jwt.RegisteredClaims
			tok, err := jwt.ParseWithClaims(raw, &c, func(*jwt.Token) (any, error) { return k.Signer.Public(), nil },
				jwt.WithValidMethods([]string{alg}), jwt.WithTimeFunc(func() time.Time { return now }), jwt.WithStrictDecoding())
			if err != nil {
				t.Fatalf("%s: %v", alg, err)
			}
			if tok.Header["kid"] != k.Kid || tok.Header["typ"] != "JWT" {
				t.Errorf("%s header %v", alg, tok.Header)
			}
			if c.Issuer != a.ClientID || c.Subject != a.ClientID || len(c.Audience) != 1 || c.Audience[0] != a.Audience ||
				c.ExpiresAt.Sub(c.IssuedAt.Time) != time.Minute || !strings.HasPrefix(c.ID, "camp-c0-") {
				t.Errorf("%s claims %+v", alg, c)
			}
			if seen[c.ID] {
				t.Fatalf("%s: jti %s repeated", alg, c.ID)
			}
			seen[c.ID] = true
		}
	}
}

// BenchmarkAssert is the CPU of one client assertion per algorithm, beside
// golang-jwt's for the same claims.
func BenchmarkAssert(b *testing.B) {
	for _, alg := range []string{jose.ES256, jose.EdDSA, jose.RS256} {
		k, err := jose.GenerateKey(alg)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(alg+"/tokex", func(b *testing.B) {
			a := &Asserter{Key: k, ClientID: "perf-agent-0", Audience: "https://127.0.0.1:9031/as/token.oauth2", Lifetime: time.Minute, Prefix: "c-"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Assert(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(alg+"/golang-jwt", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				now := time.Now()
				tok := jwt.NewWithClaims(k.Method(), jwt.RegisteredClaims{Issuer: "perf-agent-0", Subject: "perf-agent-0",
					Audience: jwt.ClaimStrings{"https://127.0.0.1:9031/as/token.oauth2"}, IssuedAt: jwt.NewNumericDate(now),
					ExpiresAt: jwt.NewNumericDate(now.Add(time.Minute)), ID: "c-1"})
				tok.Header["kid"] = k.Kid
				if _, err := tok.SignedString(k.Signer); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
