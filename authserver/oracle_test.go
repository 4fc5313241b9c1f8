package authserver

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/subject"
)

// The verifier before the direct parser, on golang-jwt, kept as the oracle:
// the direct parser must give every token the same verdict and phrase.

func (c *inbound) GetExpirationTime() (*jwt.NumericDate, error) { return c.Expiry.numeric(), nil }
func (c *inbound) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt.numeric(), nil }
func (c *inbound) GetNotBefore() (*jwt.NumericDate, error)      { return c.NotBefore.numeric(), nil }

func (d date) numeric() *jwt.NumericDate {
	if !d.set {
		return nil
	}
	return &jwt.NumericDate{Time: d.Time}
}
func (c *inbound) GetIssuer() (string, error)             { return c.Issuer, nil }
func (c *inbound) GetSubject() (string, error)            { return c.Subject, nil }
func (c *inbound) GetAudience() (jwt.ClaimStrings, error) { return c.Audience, nil }

func oracleVerify(ctx context.Context, v *verifier, raw, what, clientID string) (*inbound, error) {
	if err := checkHeader(raw); err != nil {
		return nil, &tokenError{what + " header " + err.Error()}
	}
	p := jwt.NewParser(jwt.WithValidMethods(v.algorithms), jwt.WithIssuer(v.issuer), jwt.WithLeeway(v.leeway),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithStrictDecoding())
	var c inbound
	_, err := p.ParseWithClaims(raw, &c, oracleKeyfunc(ctx, v.keys))
	var ce *claimError
	if errors.As(err, &ce) {
		return nil, &tokenError{what + " " + ce.desc}
	}
	if err != nil {
		return nil, &tokenError{what + " " + oracleDescribe(err)}
	}
	if desc := v.policy(&c, clientID); desc != "" {
		return nil, &tokenError{what + " " + desc}
	}
	return &c, nil
}

// oracleKeyfunc reads alg and kid from golang-jwt's header map; the key
// selection itself is the server's.
func oracleKeyfunc(ctx context.Context, s *keySet) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		var h jwsHeader
		h.alg, h.algOK = t.Header["alg"].(string)
		if kv, has := t.Header["kid"]; has {
			h.kidKind = kidOther
			if kid, ok := kv.(string); ok {
				h.kid, h.kidKind = kid, kidString
			}
		}
		return s.selectKey(ctx, h)
	}
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

// agree fails when the direct verifier and the oracle disagree on raw. Each
// runs twice so that the header cache is both cold and warm.
func agree(t testing.TB, f *fixture, raw string) {
	t.Helper()
	ctx := context.Background()
	want, werr := oracleVerify(ctx, f.srv.verify, raw, "subject token", "perf-agent-0")
	for pass := range 2 {
		got, gerr := f.srv.verify.verify(ctx, raw, "subject token", "perf-agent-0")
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("pass %d, token %q:\n got %+v, %v\nwant %+v, %v", pass, raw, got, gerr, want, werr)
		}
	}
}

func oracleSeeds(f *fixture) (headers, payloads []string) {
	now := time.Now().Unix()
	hdr := f.header()
	headers = []string{hdr, fmt.Sprintf(`{"alg":%q}`, f.key.Alg), fmt.Sprintf(`{"alg":%q,"kid":1}`, f.key.Alg),
		fmt.Sprintf(`{"alg":%q,"kid":"nope"}`, f.key.Alg), `{"alg":"none"}`, `{"alg":"HS256"}`, `{"alg":"XX1"}`, `{"alg":1}`,
		`{"kid":"x"}`, strings.Replace(hdr, `"kid"`, `"KID"`, 1), hdr[:len(hdr)-1] + `,"x":1e400}`, hdr[:len(hdr)-1] + `,"crit":["b64"],"b64":false}`,
		`null`, `[]`, hdr + ` `, hdr + `x`}
	good := fmt.Sprintf(`{"iss":%q,"sub":"perf-user-001","aud":"perf-agent-0","iat":%d,"exp":%d,"jti":"j"}`, DefaultIssuerIn, now, now+300)
	payloads = []string{good,
		fmt.Sprintf(`{"iss":%q,"sub":"u","aud":["x","perf-agent-0"],"exp":%d,"act":{"sub":"a","act":{"sub":"b"}}}`, DefaultIssuerIn, now+60),
		fmt.Sprintf(`{"iss":"https://evil","sub":"u","aud":"perf-agent-0","exp":%d}`, now-100),
		fmt.Sprintf(`{"sub":"u","aud":"perf-agent-0","nbf":%d}`, now+100),
		fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"perf-agent-0","iat":%d,"exp":%d}`, DefaultIssuerIn, now+100, now+200),
		fmt.Sprintf(`{"iss":%q,"aud":"perf-agent-0","exp":%d}`, DefaultIssuerIn, now+60),
		fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"perf-agent-9","exp":%d}`, DefaultIssuerIn, now+60),
		fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"perf-agent-0","exp":%d}`, DefaultIssuerIn, now+7200),
		`{"sub":"a","sub":"b"}`, `{"Sub":"a"}`, `{"exp":"1"}`, `null`, `[1]`, `"x"`, ` {} `, `{}x`, `{"aud":1e400}`,
		`{"x":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}`}
	return headers, payloads
}

// TestDirectVerifierMatchesGolangJWT runs the seeds through both verifiers:
// signed, with a broken signature, and cut or padded at the dots.
func TestDirectVerifierMatchesGolangJWT(t *testing.T) {
	for _, alg := range subject.Algorithms {
		t.Run(alg, func(t *testing.T) {
			f := newFixture(t, alg, nil)
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
	fx := newFixture(f, subject.ES256, nil)
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
	f := newFixture(t, subject.ES256, nil)
	rsa := newFixture(t, subject.RS256, nil)
	now := time.Now().Unix()
	payload := fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"perf-agent-0","iat":%d,"exp":%d}`, DefaultIssuerIn, now, now+300)
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
			_, err := f.srv.verify.verify(context.Background(), tc.token, "subject token", "perf-agent-0")
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
