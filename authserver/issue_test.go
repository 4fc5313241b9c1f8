package authserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
)

// issued is how the claims of an issued token were encoded before
// appendIssued: encoding/json on this struct. appendIssued must write the
// same bytes.
type issued struct {
	Issuer   string      `json:"iss"`
	Subject  string      `json:"sub"`
	Audience any         `json:"aud"`
	ClientID string      `json:"client_id"`
	Scope    string      `json:"scope,omitempty"`
	IssuedAt int64       `json:"iat"`
	Expiry   int64       `json:"exp"`
	ID       string      `json:"jti"`
	Act      *jose.Actor `json:"act,omitempty"`
}

// marshalIssued is the old encoding of c with the jti appendIssued chose.
func marshalIssued(t testing.TB, c accessClaims, jti string) []byte {
	t.Helper()
	var aud any = c.audience[0]
	if len(c.audience) > 1 {
		aud = c.audience
	}
	b, err := json.Marshal(issued{Issuer: c.issuer, Subject: c.subject, Audience: aud, ClientID: c.clientID,
		Scope: c.scope, IssuedAt: c.issuedAt, Expiry: c.expiry, ID: jti, Act: c.act})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkIssued compares appendIssued with encoding/json on c.
func checkIssued(t testing.TB, c accessClaims) {
	t.Helper()
	got := appendIssued([]byte("prefix"), c)
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatal("appendIssued dropped what was in the buffer")
	}
	got = got[len("prefix"):]
	var m struct{ Jti string }
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, got)
	}
	if id, err := base64.RawURLEncoding.DecodeString(m.Jti); err != nil || len(id) != 16 {
		t.Fatalf("jti %q is not 16 random bytes", m.Jti)
	}
	if want := marshalIssued(t, c, m.Jti); !bytes.Equal(got, want) {
		t.Fatalf("appendIssued:\n got %s\nwant %s", got, want)
	}
}

func TestAppendIssuedMatchesEncodingJSON(t *testing.T) {
	odd := []string{"", "plain", `q"uote`, `back\slash`, "<script>&amp;", "tab\there", "ctl\x01\x1f", "é ü 漢字",
		"bad\xffutf8", "line\u2028sep\u2029", "del\x7f"}
	for _, s := range odd {
		checkIssued(t, accessClaims{issuer: s, subject: s, audience: []string{s}, clientID: s, scope: s,
			issuedAt: 1, expiry: 2, act: &jose.Actor{Sub: s, Act: &jose.Actor{Sub: s}}})
		checkIssued(t, accessClaims{issuer: "i", subject: "s", audience: []string{"a", s}, clientID: "c",
			issuedAt: -5, expiry: 1 << 40})
	}
}

func FuzzAppendIssued(f *testing.F) {
	f.Add("https://tokex.test", "perf-user-001", "https://mcp.example.internal/mcp", "", "perf-agent-0", "mcp:tools:invoke", int64(1796054420), "")
	f.Add("<", "\xff", "a", "b", "&", "", int64(-1), "\u2028")
	f.Fuzz(func(t *testing.T, iss, sub, aud1, aud2, client, scope string, iat int64, prior string) {
		c := accessClaims{issuer: iss, subject: sub, audience: []string{aud1}, clientID: client, scope: scope,
			issuedAt: iat, expiry: iat + 300, act: &jose.Actor{Sub: client}}
		if aud2 != "" {
			c.audience = append(c.audience, aud2)
		}
		if prior != "" {
			c.act.Act = &jose.Actor{Sub: prior}
		}
		checkIssued(t, c)
	})
}

// TestIssuedTokenBytes checks a whole issued token against golang-jwt's
// encoding of the same header and claims, and the response against
// encoding/json's.
func TestIssuedTokenBytes(t *testing.T) {
	for _, alg := range jose.Algorithms {
		for _, rtt := range []string{exchange.TokenTypeAccessToken, exchange.TokenTypeJWT} {
			t.Run(alg+" "+rtt[strings.LastIndexByte(rtt, ':')+1:], func(t *testing.T) {
				f := newFixture(t, alg, nil)
				v := form(f.token(t, "perf-agent-1"))
				v.Set("requested_token_type", rtt)
				rec := f.do("POST", v.Encode(), basic("perf-agent-1"))
				if rec.Code != 200 {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				var r exchange.Response
				if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				if want, _ := json.Marshal(r); !bytes.Equal(rec.Body.Bytes(), want) {
					t.Errorf("response:\n got %s\nwant %s", rec.Body, want)
				}
				tok, err := jwt.NewParser(jwt.WithValidMethods([]string{alg})).Parse(r.AccessToken,
					func(*jwt.Token) (any, error) { return f.srv.Key().Signer.Public(), nil })
				if err != nil {
					t.Fatal(err)
				}
				// The header as golang-jwt wrote it (a map, so sorted), and
				// the claims as encoding/json wrote the issued struct.
				parts := strings.Split(r.AccessToken, ".")
				hdr, _ := json.Marshal(tok.Header)
				if got, _ := base64.RawURLEncoding.DecodeString(parts[0]); !bytes.Equal(got, hdr) {
					t.Errorf("header %s, want %s", got, hdr)
				}
				payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
				var c issued
				if err := json.Unmarshal(payload, &c); err != nil {
					t.Fatal(err)
				}
				if want, _ := json.Marshal(c); !bytes.Equal(payload, want) {
					t.Errorf("claims:\n got %s\nwant %s", payload, want)
				}
			})
		}
	}
}
