package jwks

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

func set(t testing.TB, keys ...jose.JSONWebKey) []byte {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFitsAndSelect(t *testing.T) {
	t.Parallel()
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	ed, _, _ := ed25519.GenerateKey(rand.Reader)
	raw := set(t,
		jose.JSONWebKey{Key: &rs.PublicKey, KeyID: "rs", Use: "sig"},
		jose.JSONWebKey{Key: &p256.PublicKey, KeyID: "p256", Algorithm: "ES256"},
		jose.JSONWebKey{Key: &p384.PublicKey, KeyID: "p384"},
		jose.JSONWebKey{Key: ed, KeyID: "ed"},
		jose.JSONWebKey{Key: &small.PublicKey, KeyID: "small"},
		jose.JSONWebKey{Key: &rs.PublicKey, KeyID: "enc", Use: "enc"},
		jose.JSONWebKey{Key: []byte("symmetric-key-material"), KeyID: "hmac"},
		jose.JSONWebKey{Key: &p256.PublicKey, KeyID: "twice"},
		jose.JSONWebKey{Key: &p384.PublicKey, KeyID: "twice"},
	)
	var skipped []string
	s, err := Parse(raw, func(_ int, kid, _ string) { skipped = append(skipped, kid) })
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 4 || len(skipped) != 4 || s.Has("small") || s.Has("twice") || !s.Has("ed") {
		t.Errorf("kept %d keys, skipped %v", s.Len(), skipped)
	}
	for _, tc := range []struct {
		alg, kid string
		hasKid   bool
		want     string
		err      error
	}{
		{"RS256", "rs", true, "rs", nil},
		{"PS512", "rs", true, "rs", nil},
		{"ES256", "p256", true, "p256", nil},
		{"ES384", "p256", true, "", ErrMismatch}, // the JWK says ES256
		{"ES384", "p384", true, "p384", nil},
		{"ES256", "p384", true, "", ErrMismatch},
		{"EdDSA", "ed", true, "ed", nil},
		{"HS256", "rs", true, "", ErrMismatch},
		{"RS256", "nope", true, "", ErrUnknown},
		{"RS256", "", false, "rs", nil},   // one RSA key
		{"ES384", "", false, "p384", nil}, // one P-384 key
		{"ES512", "", false, "", ErrUnknown},
	} {
		k, err := s.Select(tc.alg, tc.kid, tc.hasKid)
		if !errors.Is(err, tc.err) || (err == nil && k.Kid != tc.want) {
			t.Errorf("Select(%s, %q): %v %v", tc.alg, tc.kid, k, err)
		}
	}
	two, _ := Parse(set(t, jose.JSONWebKey{Key: &p256.PublicKey}, jose.JSONWebKey{Key: &p256.PublicKey, KeyID: "x"}), nil)
	if _, err := two.Select("ES256", "", false); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("kid-less token against two keys: %v", err)
	}
	if _, err := Parse([]byte(`{"keys":`), nil); err == nil {
		t.Error("parsed a truncated set")
	}
	if _, err := Parse(make([]byte, MaxBytes+1), nil); err == nil {
		t.Error("parsed more than 1 MiB")
	}
}

// FuzzParse: any input gives a set or an error, never a panic, and every
// key kept fits at least one algorithm or none (no key of another type).
func FuzzParse(f *testing.F) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	f.Add(set(f, jose.JSONWebKey{Key: &p256.PublicKey, KeyID: "a"}))
	f.Add([]byte(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"","y":""}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := Parse(raw, nil)
		if err != nil {
			return
		}
		for _, k := range s.all {
			switch k.Public.(type) {
			case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
			default:
				t.Fatalf("kept a %T", k.Public)
			}
			_, _ = s.Select("ES256", k.Kid, k.Kid != "")
		}
	})
}
