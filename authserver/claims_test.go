package authserver

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
)

// The strict reader itself is tested in internal/jose; these tests send its
// hostile cases through the token endpoint.

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

// issuedClaims decodes the payload of an issued token.
func issuedClaims(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var r exchange.Response
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(r.AccessToken, claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// TestClaimNamesAreExact is issue 9 item 1: encoding/json matched claim
// names case-insensitively (even "ſ" for "s") and kept the last duplicate, so
// a validly signed token could carry a second aud, exp, iss, sub or act that
// won. Every such token must be refused, as subject and as actor token.
func TestClaimNamesAreExact(t *testing.T) {
	f := newFixture(t, jose.ES256, func(c *Config) { c.DefaultClients.GrantTypes = exchange.GrantTypes })
	now := time.Now().Unix()
	base := fmt.Sprintf(`"iss":%q,"iat":%d,"jti":"j1"`, DefaultIssuerIn, now)
	exp := fmt.Sprintf(`"exp":%d`, now+300)
	cases := []struct {
		name    string
		payload string
	}{
		{"aud twice, other case", `{` + base + `,` + exp + `,"sub":"u","aud":"perf-agent-9","AUD":"perf-agent-3"}`},
		{"EXP extends an expired token", fmt.Sprintf(`{`+base+`,"sub":"u","aud":"perf-agent-3","exp":%d,"EXP":%d}`, now-3600, now+300)},
		{"Iss replaces an untrusted issuer", fmt.Sprintf(`{"iss":"https://evil","Iss":%q,"iat":%d,`+exp+`,"sub":"u","aud":"perf-agent-3"}`, DefaultIssuerIn, now)},
		{"Sub replaces the subject", `{` + base + `,` + exp + `,"sub":"alice","Sub":"root","aud":"perf-agent-3"}`},
		{"long s replaces the subject", `{` + base + `,` + exp + `,"sub":"alice","ſub":"root","aud":"perf-agent-3"}`},
		{"escaped name", `{` + base + `,` + exp + `,"sub":"alice","\u0053UB":"root","aud":"perf-agent-3"}`},
		{"ACT spoofs the prior actor", `{` + base + `,` + exp + `,"sub":"u","aud":"perf-agent-3","act":{"sub":"svc"},"ACT":{"sub":"admin"}}`},
		{"exact duplicate sub", `{` + base + `,` + exp + `,"sub":"alice","sub":"root","aud":"perf-agent-3"}`},
		{"exact duplicate aud", `{` + base + `,` + exp + `,"sub":"u","aud":"perf-agent-9","aud":"perf-agent-3"}`},
		{"duplicate inside act", `{` + base + `,` + exp + `,"sub":"u","aud":"perf-agent-3","act":{"sub":"svc","sub":"admin"}}`},
		{"case variant inside act", `{` + base + `,` + exp + `,"sub":"u","aud":"perf-agent-3","act":{"sub":"svc","SUB":"admin"}}`},
		{"duplicate in a custom claim", `{` + base + `,` + exp + `,"sub":"u","aud":"perf-agent-3","ext":{"a":1,"a":2}}`},
		{"lone case variant of a registered claim", `{` + base + `,` + exp + `,"sub":"u","aud":"perf-agent-3","Scope":"admin"}`},
		{"acr twice", `{` + base + `,` + exp + `,"sub":"u","aud":"perf-agent-3","acr":"1","ACR":"2"}`},
	}
	for _, tc := range cases {
		if !json.Valid([]byte(tc.payload)) {
			t.Fatalf("%s: test payload is not JSON", tc.name)
		}
		tok := f.signRaw(t, f.header(), tc.payload)
		t.Run("subject/"+tc.name, func(t *testing.T) {
			rec := f.do("POST", form(tok).Encode(), basic("perf-agent-3"))
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), exchange.ErrInvalidGrant) {
				t.Fatalf("got %d %s", rec.Code, rec.Body)
			}
			assertNoLeak(t, rec.Body.String(), form(tok).Encode())
		})
		t.Run("jwt-bearer/"+tc.name, func(t *testing.T) {
			rec := f.do("POST", bearerForm(f.signRaw(t, f.header(), asAssertion(tc.payload))).Encode(), basic("perf-agent-3"))
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), exchange.ErrInvalidGrant) || !strings.Contains(rec.Body.String(), "assertion") {
				t.Fatalf("got %d %s", rec.Code, rec.Body)
			}
		})
		t.Run("actor/"+tc.name, func(t *testing.T) {
			v := form(f.token(t, "perf-agent-3"))
			v.Set("actor_token", tok)
			v.Set("actor_token_type", exchange.TokenTypeJWT)
			rec := f.do("POST", v.Encode(), basic("perf-agent-3"))
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), "actor token") {
				t.Fatalf("got %d %s", rec.Code, rec.Body)
			}
		})
	}

	// The controls: the same shapes without the second spelling pass, and
	// the issued token carries the exact-name values.
	ok := f.signRaw(t, f.header(), `{`+base+`,`+exp+`,"sub":"alice","aud":["perf-agent-3","x"],"act":{"sub":"svc","act":{"sub":"up"}},"ext":{"a":1,"A":2},"Subject":"not-a-claim","\u212a":1}`)
	rec := f.do("POST", form(ok).Encode(), basic("perf-agent-3"))
	if rec.Code != 200 {
		t.Fatalf("control: %d %s", rec.Code, rec.Body)
	}
	c := issuedClaims(t, rec.Body.Bytes())
	if c["sub"] != "alice" {
		t.Errorf("issued sub = %v", c["sub"])
	}
	if rec := f.do("POST", bearerForm(f.signRaw(t, f.header(), asAssertion(`{`+base+`,`+exp+`,"sub":"alice","aud":["perf-agent-3","x"],"ext":{"a":1,"A":2}}`))).Encode(),
		basic("perf-agent-3")); rec.Code != 200 || issuedClaims(t, rec.Body.Bytes())["sub"] != "alice" {
		t.Fatalf("jwt-bearer control: %d %s", rec.Code, rec.Body)
	}
	act, _ := c["act"].(map[string]any)
	prior, _ := act["act"].(map[string]any)
	if act["sub"] != "perf-agent-3" || prior["sub"] != "svc" {
		t.Errorf("issued act = %v", c["act"])
	}
}

// TestHeaderParametersAreExact: the JOSE header is read into a map by
// golang-jwt, where the last duplicate wins; a duplicate alg or kid, or a
// case variant, is refused before that.
func TestHeaderParametersAreExact(t *testing.T) {
	f := newFixture(t, jose.ES256, nil)
	now := time.Now().Unix()
	payload := fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"perf-agent-0","iat":%d,"exp":%d}`, DefaultIssuerIn, now, now+300)
	cases := []struct{ name, header string }{
		{"duplicate alg", fmt.Sprintf(`{"alg":"none","alg":%q,"kid":%q}`, f.key.Alg, f.key.Kid)},
		{"duplicate kid", fmt.Sprintf(`{"alg":%q,"kid":"other","kid":%q}`, f.key.Alg, f.key.Kid)},
		{"case variant of kid", fmt.Sprintf(`{"alg":%q,"kid":%q,"KID":"other"}`, f.key.Alg, f.key.Kid)},
		{"Kelvin sign kid", fmt.Sprintf(`{"alg":%q,"kid":%q,"\u212aid":"other"}`, f.key.Alg, f.key.Kid)},
		{"duplicate inside jwk", fmt.Sprintf(`{"alg":%q,"kid":%q,"jwk":{"kty":"EC","kty":"RSA"}}`, f.key.Alg, f.key.Kid)},
		{"header is an array", `[1]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok := f.signRaw(t, tc.header, payload)
			rec := f.do("POST", form(tok).Encode(), basic("perf-agent-0"))
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), exchange.ErrInvalidGrant) {
				t.Fatalf("got %d %s", rec.Code, rec.Body)
			}
		})
	}
	if rec := f.do("POST", form(f.signRaw(t, f.header(), payload)).Encode(), basic("perf-agent-0")); rec.Code != 200 {
		t.Fatalf("control: %d %s", rec.Code, rec.Body)
	}
}

// TestCritHeader is issue 9 item 4: RFC 7515 §4.1.11 says a recipient must
// refuse a JWS whose crit lists an extension it does not understand; tokex
// understands none. An empty list, a registered name, a name absent from
// the header or a non-list is malformed.
func TestCritHeader(t *testing.T) {
	f := newFixture(t, jose.RS256, func(c *Config) { c.DefaultClients.GrantTypes = exchange.GrantTypes })
	now := time.Now().Unix()
	payload := fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"perf-agent-0","iat":%d,"exp":%d,"jti":"j1"}`, DefaultIssuerIn, now, now+60)
	hdr := func(extra string) string {
		return fmt.Sprintf(`{"alg":%q,"kid":%q%s}`, f.key.Alg, f.key.Kid, extra)
	}
	cases := []struct {
		name, header, desc string
	}{
		{"unknown extension", hdr(`,"crit":["urn:x:must-check"],"urn:x:must-check":true`), "does not understand"},
		{"b64 extension (RFC 7797)", hdr(`,"crit":["b64"],"b64":false`), "does not understand"},
		{"empty list", hdr(`,"crit":[]`), "malformed"},
		{"registered claim name", hdr(`,"crit":["exp"]`), "malformed"},
		{"name not in header", hdr(`,"crit":["x"]`), "malformed"},
		{"repeated name", hdr(`,"crit":["x","x"],"x":1`), "malformed"},
		{"not a list", hdr(`,"crit":"x","x":1`), "malformed"},
		{"null", hdr(`,"crit":null`), "malformed"},
		{"case variant", hdr(`,"CRIT":["x"],"x":1`), "another case"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, body := range []string{form(f.signRaw(t, tc.header, payload)).Encode(), bearerForm(f.signRaw(t, tc.header, asAssertion(payload))).Encode()} {
				rec := f.do("POST", body, basic("perf-agent-0"))
				if rec.Code != 400 || !strings.Contains(rec.Body.String(), exchange.ErrInvalidGrant) || !strings.Contains(rec.Body.String(), tc.desc) {
					t.Fatalf("got %d %s, want 400 invalid_grant %q", rec.Code, rec.Body, tc.desc)
				}
			}
		})
	}
	if rec := f.do("POST", bearerForm(f.signRaw(t, hdrNoCrit(f), asAssertion(payload))).Encode(), basic("perf-agent-0")); rec.Code != 200 {
		t.Fatalf("jwt-bearer control: %d %s", rec.Code, rec.Body)
	}
}

func hdrNoCrit(f *fixture) string { return fmt.Sprintf(`{"alg":%q,"kid":%q}`, f.key.Alg, f.key.Kid) }

// asAssertion makes a subject-token payload of these tests a jwt-bearer
// assertion: aud the token endpoint where it named the client, and a jti
// of its own, so that only what the case is about can refuse it.
func asAssertion(payload string) string {
	payload = strings.ReplaceAll(payload, `"perf-agent-3"`, `"`+tokenURL+`"`)
	payload = strings.ReplaceAll(payload, `"perf-agent-0"`, `"`+tokenURL+`"`)
	return strings.Replace(payload, `"jti":"j1"`, `"jti":"`+rand.Text()+`"`, 1)
}
