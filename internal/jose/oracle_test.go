package jose

import (
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/internal/jwks"
)

// The verifier before the direct reader, on golang-jwt, kept as the oracle:
// the direct reader must give every token the same verdict and phrase.

const testIssuer = "https://pf-perf-subject"

// fixture is a signing key, the JWKS that publishes it and a verifier of
// the three algorithms with the reference server's defaults (issuer,
// 10 s leeway).
type fixture struct {
	key    *Key
	set    *jwks.Set
	v      *Verifier
	leeway time.Duration
}

func newFixture(t testing.TB, alg string) *fixture {
	t.Helper()
	key, err := GenerateKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := JWKS(key)
	if err != nil {
		t.Fatal(err)
	}
	set, err := jwks.Parse(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{key: key, set: set, v: &Verifier{Algorithms: Algorithms}, leeway: 10 * time.Second}
}

// signRaw signs a header and payload given as literal JSON, so that tests can
// write what encoding/json would never produce: duplicate or case-variant
// member names.
func (f *fixture) signRaw(t testing.TB, header, payload string) string {
	t.Helper()
	in := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString([]byte(payload))
	sig, err := f.key.Method().Sign(in, f.key.Signer)
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func (f *fixture) header() string {
	return fmt.Sprintf(`{"alg":%q,"typ":"JWT","kid":%q}`, f.key.Alg, f.key.Kid)
}

// direct is the reference server's reading of a token: Verify with the key
// KeyFor picks, then the times and the issuer.
func (f *fixture) direct(raw string) (*Claims, error) {
	c, err := f.v.Verify(raw, func(h Header, _ *Claims) (crypto.PublicKey, error) { return KeyFor(f.set, h) })
	if err != nil {
		return nil, err
	}
	if err := c.CheckTimes(time.Now(), f.leeway, testIssuer); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Claims) GetExpirationTime() (*jwt.NumericDate, error) { return c.Expiry.numeric(), nil }
func (c *Claims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt.numeric(), nil }
func (c *Claims) GetNotBefore() (*jwt.NumericDate, error)      { return c.NotBefore.numeric(), nil }

func (d Date) numeric() *jwt.NumericDate {
	if !d.Set {
		return nil
	}
	return &jwt.NumericDate{Time: d.Time}
}
func (c *Claims) GetIssuer() (string, error)             { return c.Issuer, nil }
func (c *Claims) GetSubject() (string, error)            { return c.Subject, nil }
func (c *Claims) GetAudience() (jwt.ClaimStrings, error) { return c.Audience, nil }

// oracle is the same reading on golang-jwt: the header check, then its
// parser with the same options, reading alg and kid from its header map.
func (f *fixture) oracle(raw string) (*Claims, error) {
	if err := checkHeader(raw); err != nil {
		return nil, &Error{"header " + err.Error()}
	}
	p := jwt.NewParser(jwt.WithValidMethods(f.v.Algorithms), jwt.WithIssuer(testIssuer), jwt.WithLeeway(f.leeway),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithStrictDecoding())
	var c Claims
	_, err := p.ParseWithClaims(raw, &c, func(t *jwt.Token) (any, error) {
		var h Header
		h.Alg, h.AlgOK = t.Header["alg"].(string)
		if kv, has := t.Header["kid"]; has {
			h.KidKind = KidOther
			if kid, ok := kv.(string); ok {
				h.Kid, h.KidKind = kid, KidString
			}
		}
		return KeyFor(f.set, h)
	})
	var je *Error
	if errors.As(err, &je) {
		return nil, je
	}
	if err != nil {
		return nil, &Error{oracleDescribe(err)}
	}
	return &c, nil
}

func oracleDescribe(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return phraseMalformed
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return phraseUnknownKey
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return phraseBadSig
	case errors.Is(err, jwt.ErrTokenExpired):
		return phraseExpired
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return phraseNotYet
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return phraseMissing
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return phraseIssuer
	default:
		return "is invalid"
	}
}

// agree fails when the direct reader and the oracle disagree on raw. The
// direct one runs twice so that the header cache is both cold and warm.
func agree(t testing.TB, f *fixture, raw string) {
	t.Helper()
	want, werr := f.oracle(raw)
	for pass := range 2 {
		got, gerr := f.direct(raw)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("pass %d, token %q:\n got %+v, %v\nwant %+v, %v", pass, raw, got, gerr, want, werr)
		}
	}
}

// rsaHMACConfusion is HS256 signed with the RSA public key's PEM bytes: the
// classic confusion attack.
func rsaHMACConfusion(t *testing.T, f *fixture) string {
	der, _ := x509.MarshalPKIXPublicKey(f.key.Signer.Public())
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	now := time.Now().Unix()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": testIssuer, "sub": "x", "aud": "perf-agent-0", "iat": now, "exp": now + 60})
	tok.Header["kid"] = f.key.Kid
	s, err := tok.SignedString(pemKey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func oracleSeeds(f *fixture) (headers, payloads []string) {
	now := time.Now().Unix()
	hdr := f.header()
	headers = []string{hdr, fmt.Sprintf(`{"alg":%q}`, f.key.Alg), fmt.Sprintf(`{"alg":%q,"kid":1}`, f.key.Alg),
		fmt.Sprintf(`{"alg":%q,"kid":"nope"}`, f.key.Alg), `{"alg":"none"}`, `{"alg":"HS256"}`, `{"alg":"XX1"}`, `{"alg":1}`,
		`{"kid":"x"}`, strings.Replace(hdr, `"kid"`, `"KID"`, 1), hdr[:len(hdr)-1] + `,"x":1e400}`, hdr[:len(hdr)-1] + `,"crit":["b64"],"b64":false}`,
		`null`, `[]`, hdr + ` `, hdr + `x`}
	good := fmt.Sprintf(`{"iss":%q,"sub":"perf-user-001","aud":"perf-agent-0","iat":%d,"exp":%d,"jti":"j"}`, testIssuer, now, now+300)
	payloads = []string{good,
		fmt.Sprintf(`{"iss":%q,"sub":"u","aud":["x","perf-agent-0"],"exp":%d,"act":{"sub":"a","act":{"sub":"b"}}}`, testIssuer, now+60),
		fmt.Sprintf(`{"iss":"https://evil","sub":"u","aud":"perf-agent-0","exp":%d}`, now-100),
		fmt.Sprintf(`{"sub":"u","aud":"perf-agent-0","nbf":%d}`, now+100),
		fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"perf-agent-0","iat":%d,"exp":%d}`, testIssuer, now+100, now+200),
		fmt.Sprintf(`{"iss":%q,"aud":"perf-agent-0","exp":%d}`, testIssuer, now+60),
		fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"perf-agent-9","exp":%d}`, testIssuer, now+60),
		fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"perf-agent-0","exp":%d}`, testIssuer, now+7200),
		`{"sub":"a","sub":"b"}`, `{"Sub":"a"}`, `{"exp":"1"}`, `null`, `[1]`, `"x"`, ` {} `, `{}x`, `{"aud":1e400}`,
		`{"x":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}`}
	return headers, payloads
}

// TestDirectVerifierMatchesGolangJWT runs the seeds through both verifiers:
// signed, with a broken signature, and cut or padded at the dots.
func TestDirectVerifierMatchesGolangJWT(t *testing.T) {
	t.Parallel()
	for _, alg := range Algorithms {
		t.Run(alg, func(t *testing.T) {
			f := newFixture(t, alg)
			headers, payloads := oracleSeeds(f)
			for _, h := range headers {
				for _, p := range payloads {
					tok := f.signRaw(t, h, p)
					agree(t, f, tok)
					agree(t, f, tok[:len(tok)-2]+"AA")
					agree(t, f, tok+".")
					agree(t, f, tok[:strings.LastIndexByte(tok, '.')])
				}
			}
		})
	}
}

// FuzzDirectVerifier signs any header and payload with the subject key
// (ES256, so that the signature is never the only difference) and checks
// that the direct verifier agrees with golang-jwt's, signed and as given.
func FuzzDirectVerifier(f *testing.F) {
	fx := newFixture(f, ES256)
	headers, payloads := oracleSeeds(fx)
	for i, h := range headers {
		f.Add(h, payloads[i%len(payloads)], "")
	}
	for i, p := range payloads {
		f.Add(headers[i%len(headers)], p, "")
	}
	f.Add("", "", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
	f.Add("", "", "a.b.c")
	f.Add("", "", "e30.e30.e30.")
	f.Fuzz(func(t *testing.T, header, payload, raw string) {
		agree(t, fx, fx.signRaw(t, header, payload))
		agree(t, fx, raw)
	})
}

// TestHostileTokens: each token is refused with its phrase by the direct
// verifier, and golang-jwt's verdict is the same.
func TestHostileTokens(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ES256)
	rsa := newFixture(t, RS256)
	now := time.Now().Unix()
	payload := fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"perf-agent-0","iat":%d,"exp":%d}`, testIssuer, now, now+300)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	good := f.signRaw(t, f.header(), payload)
	parts := strings.Split(good, ".")
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	order, _ := hex.DecodeString("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551") // P-256 n
	cases := []struct{ name, token, phrase string }{
		{"alg none", enc(`{"alg":"none"}`) + "." + parts[1] + ".", phraseBadSig},
		{"alg none with kid", enc(fmt.Sprintf(`{"alg":"none","kid":%q}`, f.key.Kid)) + "." + parts[1] + ".", phraseBadSig},
		{"HS256 over the public key", rsaHMACConfusion(t, rsa), phraseBadSig},
		{"unknown alg", enc(`{"alg":"ES257"}`) + "." + parts[1] + "." + parts[2], phraseUnknownKey},
		{"alg not a string", enc(`{"alg":["ES256"]}`) + "." + parts[1] + "." + parts[2], phraseUnknownKey},
		{"padded header", base64.URLEncoding.EncodeToString([]byte(f.header())) + "." + parts[1] + "." + parts[2], phraseMalformed},
		{"standard base64 signature", parts[0] + "." + parts[1] + "." + base64.StdEncoding.EncodeToString(sig), phraseMalformed},
		{"stray bits in the payload", parts[0] + "." + parts[1][:len(parts[1])-1] + "_" + "." + parts[2], phraseMalformed},
		{"two segments", parts[0] + "." + parts[1], phraseMalformed},
		{"four segments", good + "." + parts[2], phraseMalformed},
		{"empty", "", phraseMalformed},
		{"signature one byte short", parts[0] + "." + parts[1] + "." + enc(string(sig[:63])), phraseBadSig},
		{"signature one byte long", parts[0] + "." + parts[1] + "." + enc(string(sig)+"\x00"), phraseBadSig},
		{"r zero", parts[0] + "." + parts[1] + "." + enc(string(make([]byte, 32))+string(sig[32:])), phraseBadSig},
		{"s the group order", parts[0] + "." + parts[1] + "." + enc(string(sig[:32])+string(order)), phraseBadSig},
		{"RS256 header naming the ES256 key", rsa.signRaw(t, fmt.Sprintf(`{"alg":"RS256","kid":%q}`, f.key.Kid), payload), "names a key that does not fit its alg"},
		{"kid a number", f.signRaw(t, `{"alg":"ES256","kid":7}`, payload), "header kid is not a string"},
		{"alg twice", f.signRaw(t, `{"alg":"none","alg":"ES256"}`, payload), "header carries a member name twice"},
		{"payload not JSON", f.signRaw(t, f.header(), `{"sub":`), phraseMalformed},
		{"claim twice", f.signRaw(t, f.header(), `{"sub":"a","sub":"b"}`), "carries a member name twice"},
		{"huge", f.signRaw(t, f.header(), payload[:len(payload)-1]+`,"pad":"`+strings.Repeat("x", 60<<10)+`"}`), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.direct(tc.token)
			if tc.phrase == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			} else if err == nil || !strings.HasSuffix(err.Error(), tc.phrase) {
				t.Fatalf("err = %v, want … %s", err, tc.phrase)
			}
			agree(t, f, tc.token)
		})
	}
}
