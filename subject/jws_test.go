package subject

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// reference is the token golang-jwt builds for the same claims: the
// encoder must write the same bytes (RS256 and EdDSA signatures are
// deterministic, so the whole token; ES256's signing input).
func reference(t *testing.T, k *Key, c Claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(k.method, c)
	tok.Header["kid"] = k.Kid
	s, err := tok.SignedString(k.Signer)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEncoderWritesWhatGolangJWTWrites(t *testing.T) {
	now := time.Unix(1_800_000_123, 0)
	for _, alg := range Algorithms {
		k, err := GenerateKey(alg)
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
			if alg == ES256 {
				got, want = got[:strings.LastIndexByte(got, '.')], want[:strings.LastIndexByte(want, '.')]
			}
			if got != want {
				t.Errorf("%s %q:\n got %s\nwant %s", alg, c.iss, got, want)
			}
		}
	}
}

func TestEncoderSignaturesVerify(t *testing.T) {
	for _, alg := range Algorithms {
		k, _ := GenerateKey(alg)
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

func TestAppendRawES256RefusesMalformed(t *testing.T) {
	for _, der := range [][]byte{nil, {0x30, 0}, {0x30, 6, 2, 1, 1, 2, 9, 1}, {0x31, 6, 2, 1, 1, 2, 1, 1},
		append([]byte{0x30, 38, 2, 34}, make([]byte, 36)...)} {
		if _, err := appendRawES256(nil, der); err == nil {
			t.Errorf("accepted % x", der)
		}
	}
	got, err := appendRawES256(nil, []byte{0x30, 7, 2, 2, 0, 0x80, 2, 1, 5})
	if err != nil || len(got) != 64 || got[31] != 0x80 || got[63] != 5 {
		t.Errorf("% x %v", got, err)
	}
}

// ES256 signs with RFC 6979's deterministic nonce: the same input gives the
// same signature, which verifies, and another input another one.
func TestES256IsDeterministic(t *testing.T) {
	k, err := GenerateKey(ES256)
	if err != nil {
		t.Fatal(err)
	}
	pub := k.Signer.Public().(*ecdsa.PublicKey)
	sign := func(in string) []byte {
		sig, err := k.AppendSignature(nil, []byte(in))
		if err != nil || len(sig) != 64 {
			t.Fatalf("%q: %d bytes, %v", in, len(sig), err)
		}
		d := sha256.Sum256([]byte(in))
		if !ecdsa.Verify(pub, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Fatalf("%q: signature does not verify", in)
		}
		return sig
	}
	a, b, c := sign("h.p1"), sign("h.p1"), sign("h.p2")
	if !bytes.Equal(a, b) {
		t.Error("the same input signed twice gave two signatures")
	}
	if bytes.Equal(a, c) {
		t.Error("two inputs gave one signature")
	}
}

// BenchmarkSignES256 is one ES256 signature with the standard library's
// hedged nonce (SHA-512 DRBG over fresh randomness) and with RFC 6979's
// deterministic one (HMAC-SHA-256), which AppendSignature uses.
//
//	go test ./subject -run '^$' -bench SignES256 -count 5
func BenchmarkSignES256(b *testing.B) {
	k, err := GenerateKey(ES256)
	if err != nil {
		b.Fatal(err)
	}
	p := k.Signer.(*ecdsa.PrivateKey)
	d := sha256.Sum256([]byte("header.payload"))
	b.Run("hedged", func(b *testing.B) {
		for b.Loop() {
			if _, err := ecdsa.SignASN1(rand.Reader, p, d[:]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("deterministic", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.Sign(nil, d[:], crypto.SHA256); err != nil {
				b.Fatal(err)
			}
		}
	})
}
