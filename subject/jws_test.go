package subject

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/internal/jose"
)

// reference is the token golang-jwt builds for the same claims: the
// encoder must write the same bytes (RS256 and EdDSA signatures are
// deterministic, so the whole token; ES256's signing input).
func reference(t *testing.T, k *jose.Key, c Claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(k.Method(), c)
	tok.Header["kid"] = k.Kid
	s, err := tok.SignedString(k.Signer)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEncoderWritesWhatGolangJWTWrites(t *testing.T) {
	now := time.Unix(1_800_000_123, 0)
	for _, alg := range jose.Algorithms {
		k, err := jose.GenerateKey(alg)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ iss, user, aud, prefix string }{
			{"https://pf-perf-subject", "perf-user-001", "perf-agent-0", "c1-a0-"},
			{`https://x/<&>"\`, "ü\u2028\x01", "a\"b", "j<\"é"}, // escaped as encoding/json does
		} {
			m := &Minter{Key: k, Issuer: c.iss, Lifetime: 90 * time.Second, Users: []string{c.user}, Prefix: c.prefix,
				Now: func() time.Time { return now }}
			m.seq.Store(1295) // jti "…zz"
			got, err := m.Mint(c.aud)
			if err != nil {
				t.Fatal(err)
			}
			want := reference(t, k, Claims{Issuer: c.iss, Subject: c.user, Audience: c.aud, IssuedAt: now.Unix(),
				Expiry: now.Unix() + 90, ID: c.prefix + "zz"})
			if alg == jose.ES256 {
				got, want = got[:strings.LastIndexByte(got, '.')], want[:strings.LastIndexByte(want, '.')]
			}
			if got != want {
				t.Errorf("%s %q:\n got %s\nwant %s", alg, c.iss, got, want)
			}
		}
	}
}

func TestEncoderSignaturesVerify(t *testing.T) {
	for _, alg := range jose.Algorithms {
		k, _ := jose.GenerateKey(alg)
		m := &Minter{Key: k, Issuer: "https://pf-perf-subject", Lifetime: time.Minute, Users: Users(2), Prefix: "v-"}
		for i := 0; i < 20; i++ {
			tok, err := m.Mint("perf-agent-1")
			if err != nil {
				t.Fatal(err)
			}
			var c Claims
			if _, err := jwt.ParseWithClaims(tok, &c, func(*jwt.Token) (any, error) { return k.Signer.Public(), nil },
				jwt.WithValidMethods([]string{alg})); err != nil {
				t.Fatalf("%s token %d: %v", alg, i, err)
			}
		}
	}
}
