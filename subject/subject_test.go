package subject

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/internal/jose"
)

func TestKeysRoundTripAndThumbprint(t *testing.T) {
	for _, alg := range jose.Algorithms {
		t.Run(alg, func(t *testing.T) {
			k, err := jose.GenerateKey(alg)
			if err != nil {
				t.Fatal(err)
			}
			pemBytes, err := k.MarshalPEM()
			if err != nil {
				t.Fatal(err)
			}
			back, err := jose.ParsePEM(pemBytes)
			if err != nil {
				t.Fatal(err)
			}
			if back.Kid != k.Kid || back.Alg != alg || len(k.Kid) != 43 {
				t.Errorf("kid %q/%q alg %s", k.Kid, back.Kid, back.Alg)
			}
			var set struct{ Keys []map[string]any }
			b, _ := jose.JWKS(k)
			_ = json.Unmarshal(b, &set)
			if len(set.Keys) != 1 || set.Keys[0]["kid"] != k.Kid || set.Keys[0]["d"] != nil {
				t.Errorf("jwks %s", b)
			}
		})
	}
	if _, err := jose.GenerateKey("HS256"); err == nil {
		t.Error("generated an HS256 key")
	}
	if _, err := jose.ParsePEM([]byte("not pem")); err == nil {
		t.Error("parsed garbage")
	}
}

func TestLoadOrCreateIsStable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dir", "key.pem")
	a, err := LoadOrCreate(p, jose.RS256)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadOrCreate(p, jose.ES256) // the existing key wins
	if err != nil {
		t.Fatal(err)
	}
	if a.Kid != b.Kid || b.Alg != jose.RS256 {
		t.Errorf("key changed: %s %s", a.Kid, b.Kid)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}

func TestMinterFreshTokensRoundRobin(t *testing.T) {
	k, _ := jose.GenerateKey(jose.ES256)
	now := time.Unix(1_800_000_000, 0)
	m := &Minter{Key: k, Issuer: "https://pf-perf-subject", Lifetime: 5 * time.Minute, Users: Users(3), Prefix: "c-a0-", Now: func() time.Time { return now }}
	seen := map[string]bool{}
	var subs []string
	for i := 0; i < 7; i++ {
		tok, err := m.Mint("perf-agent-3")
		if err != nil {
			t.Fatal(err)
		}
		var c Claims
		parsed, err := jwt.NewParser(jwt.WithTimeFunc(func() time.Time { return now })).ParseWithClaims(tok, &c, func(*jwt.Token) (any, error) { return k.Signer.Public(), nil })
		if err != nil {
			t.Fatal(err)
		}
		if parsed.Header["kid"] != k.Kid || c.Audience != "perf-agent-3" || c.Expiry-c.IssuedAt != 300 || seen[c.ID] || seen[tok] {
			t.Errorf("token %d: %+v", i, c)
		}
		seen[c.ID], seen[tok] = true, true
		subs = append(subs, c.Subject)
	}
	if got := strings.Join(subs, ","); got != "perf-user-001,perf-user-002,perf-user-003,perf-user-001,perf-user-002,perf-user-003,perf-user-001" {
		t.Errorf("users %s", got)
	}
	if u := Users(1000); u[0] != "perf-user-0001" || u[999] != "perf-user-1000" {
		t.Errorf("wide pool %s %s", u[0], u[999])
	}
}
