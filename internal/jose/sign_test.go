package jose

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// TestCompactWritesWhatGolangJWTWrites: EncodeHeader and AppendCompact
// write golang-jwt's token for the same header and claims (RS256 and EdDSA
// signatures are deterministic, so the whole token; ES256's signing input,
// and its signature verifies), with dst's prefix kept and the claims'
// storage handed back for reuse.
func TestCompactWritesWhatGolangJWTWrites(t *testing.T) {
	t.Parallel()
	for _, alg := range Algorithms {
		k, err := GenerateKey(alg)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []jwt.MapClaims{
			{"iss": "https://pf-perf-subject", "sub": "perf-user-001", "aud": "perf-agent-0", "exp": 1_800_000_123},
			{"iss": `https://x/<&>"\`, "sub": "ü\u2028\x01", "aud": []any{"a", "b"}, "act": map[string]any{"sub": "c"}},
		} {
			for _, typ := range []string{"JWT", "at+jwt"} {
				ref := jwt.NewWithClaims(k.Method(), c)
				ref.Header["kid"], ref.Header["typ"] = k.Kid, typ
				want, err := ref.SignedString(k.Signer)
				if err != nil {
					t.Fatal(err)
				}
				claims, _ := json.Marshal(c)
				out, sig, err := k.AppendCompact([]byte("prefix:"), EncodeHeader(k.Alg, k.Kid, typ), claims)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := strings.CutPrefix(string(out), "prefix:")
				if !ok || len(sig) != 0 || cap(sig) < cap(claims) {
					t.Fatalf("%s: prefix kept %v, sig buffer len %d cap %d (claims cap %d)", alg, ok, len(sig), cap(sig), cap(claims))
				}
				if alg == ES256 {
					if _, err := jwt.Parse(got, func(*jwt.Token) (any, error) { return k.Signer.Public(), nil }); err != nil {
						t.Fatalf("ES256 token does not verify: %v", err)
					}
					got, want = got[:strings.LastIndexByte(got, '.')], want[:strings.LastIndexByte(want, '.')]
				}
				if got != want {
					t.Errorf("%s %s:\n got %s\nwant %s", alg, typ, got, want)
				}
			}
		}
	}
}

func TestCanSign(t *testing.T) {
	t.Parallel()
	for _, alg := range Algorithms {
		k, _ := GenerateKey(alg)
		if err := k.CanSign(); err != nil {
			t.Errorf("%s: %v", alg, err)
		}
	}
	bad := &Key{Alg: ES256, Signer: fakeSigner{}}
	if bad.CanSign() == nil {
		t.Error("an unsupported signer passed CanSign")
	}
	if _, _, err := bad.AppendCompact(nil, "e30.", []byte("{}")); err == nil {
		t.Error("an unsupported signer signed")
	}
}

type fakeSigner struct{ crypto.Signer }

func TestAppendRawES256RefusesMalformed(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
//	go test ./internal/jose -run '^$' -bench SignES256 -count 5
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

// TestES256DER checks the r‖s to DER conversion against encoding/asn1 for
// values with and without high bits and leading zeros.
func TestES256DER(t *testing.T) {
	t.Parallel()
	key, _ := GenerateKey(ES256)
	pub := key.Signer.Public().(*ecdsa.PublicKey)
	d := sha256.Sum256([]byte("x"))
	cases := [][2]*big.Int{{big.NewInt(1), big.NewInt(0x80)}, {big.NewInt(0), big.NewInt(0x7f)},
		{new(big.Int).Lsh(big.NewInt(1), 255), new(big.Int).Lsh(big.NewInt(1), 247)}}
	for range 200 {
		der, err := ecdsa.SignASN1(rand.Reader, key.Signer.(*ecdsa.PrivateKey), d[:])
		if err != nil {
			t.Fatal(err)
		}
		var rs struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(der, &rs); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, [2]*big.Int{rs.R, rs.S})
		raw := append(rs.R.FillBytes(make([]byte, 32)), rs.S.FillBytes(make([]byte, 32))...)
		if !ecdsa.VerifyASN1(pub, d[:], appendES256DER(nil, raw)) {
			t.Fatal("a good signature does not verify")
		}
	}
	for _, c := range cases {
		raw := append(c[0].FillBytes(make([]byte, 32)), c[1].FillBytes(make([]byte, 32))...)
		want, _ := asn1.Marshal(struct{ R, S *big.Int }{c[0], c[1]})
		if got := appendES256DER(nil, raw); !bytes.Equal(got, want) {
			t.Errorf("r=%x s=%x: got %x, want %x", c[0], c[1], got, want)
		}
	}
}
