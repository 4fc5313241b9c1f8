package subject

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/internal/jose"
)

// decode verifies tok with k and returns its header and claims.
func decode(t *testing.T, k *jose.Key, tok string, now time.Time) (map[string]any, map[string]any) {
	t.Helper()
	claims := jwt.MapClaims{}
	parsed, err := jwt.NewParser(jwt.WithTimeFunc(func() time.Time { return now }), jwt.WithValidMethods([]string{k.Alg})).
		ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return k.Signer.Public(), nil })
	if err != nil {
		t.Fatalf("%s: %v", tok, err)
	}
	return parsed.Header, claims
}

// Issue 12: extra claims (static and per user), a fixed audience, typ and
// kid — on every algorithm, with the registered claims in the article's
// order first.
func TestMinterShape(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, alg := range jose.Algorithms {
		t.Run(alg, func(t *testing.T) {
			k, _ := jose.GenerateKey(alg)
			k = k.WithKid("registered-kid")
			m := &Minter{Key: k, Issuer: "http://127.0.0.1:5551", Lifetime: time.Minute, Users: []string{"perf-user-001", `we"ird\user`},
				Prefix: "c-", Now: func() time.Time { return now }, Shape: Shape{Typ: "at+jwt", Audience: "https://as.example",
					Claims: map[string]any{"email": "{{user}}@example.com", "groups": []any{"perf", "n{{ user_number }}"},
						"email_verified": true, "tenant": map[string]any{"by": "{{client_id}}"}, "level": 3}}}
			tok1, err := m.Mint("perf-agent-4")
			if err != nil {
				t.Fatal(err)
			}
			tok2, _ := m.Mint("perf-agent-4")
			h, c := decode(t, k, tok1, now)
			if h["kid"] != "registered-kid" || h["typ"] != "at+jwt" || h["alg"] != alg {
				t.Errorf("header %v", h)
			}
			if c["aud"] != "https://as.example" || c["email"] != "perf-user-001@example.com" || c["email_verified"] != true ||
				c["level"] != 3.0 || c["tenant"].(map[string]any)["by"] != "perf-agent-4" || c["groups"].([]any)[1] != "n1" {
				t.Errorf("claims %v", c)
			}
			_, c2 := decode(t, k, tok2, now)
			if c2["email"] != `we"ird\user@example.com` || c2["sub"] != `we"ird\user` || c2["groups"].([]any)[1] != "n2" {
				t.Errorf("second user's claims %v", c2)
			}
			payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok1, ".")[1])
			if !strings.HasPrefix(string(payload), `{"iss":"http://127.0.0.1:5551","sub":"perf-user-001","aud":"https://as.example","iat":1800000000,"exp":1800000060,"jti":"c-0","email":`) {
				t.Errorf("payload order %s", payload)
			}
		})
	}
}

// The default shape is the article's token: typ JWT, aud the client id,
// no other claim.
func TestMinterDefaultShape(t *testing.T) {
	k, _ := jose.GenerateKey(jose.ES256)
	now := time.Unix(1_800_000_000, 0)
	m := &Minter{Key: k, Issuer: "iss", Lifetime: time.Minute, Users: Users(1), Prefix: "p-", Now: func() time.Time { return now }}
	tok, err := m.Mint("perf-agent-0")
	if err != nil {
		t.Fatal(err)
	}
	h, c := decode(t, k, tok, now)
	hb, _ := json.Marshal(h)
	if string(hb) != `{"alg":"ES256","kid":"`+k.Kid+`","typ":"JWT"}` || len(c) != 6 || c["aud"] != "perf-agent-0" {
		t.Errorf("header %s claims %v", hb, c)
	}
}

func TestShapeRefusals(t *testing.T) {
	for _, tc := range []struct {
		claims map[string]any
		want   string
	}{
		{map[string]any{"sub": "x"}, `claim "sub" is set by tokex`},
		{map[string]any{"exp": 1}, `claim "exp" is set by tokex`},
		{map[string]any{"": 1}, "empty name"},
		{map[string]any{"email": "{{username}}"}, "unknown placeholder {{username}}"},
		{map[string]any{"big": strings.Repeat("x", MaxClaimsBytes)}, "more than 16384 bytes"},
		{map[string]any{"f": func() {}}, `claim "f"`},
	} {
		if err := (Shape{Claims: tc.claims}).Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.claims, err, tc.want)
		}
		k, _ := jose.GenerateKey(jose.ES256)
		if _, err := (&Minter{Key: k, Users: Users(1), Shape: Shape{Claims: tc.claims}}).Mint("a"); err == nil {
			t.Errorf("%v: minted", tc.claims)
		}
	}
	// YAML decodes nested mappings as map[any]any, which JSON cannot encode.
	if err := (Shape{Claims: map[string]any{"nested": map[any]any{"a": []any{1, map[any]any{2: "{{user}}"}}}}}).Check(); err != nil {
		t.Errorf("nested YAML claims: %v", err)
	}
}
