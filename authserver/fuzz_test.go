package authserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
)

// FuzzTokenEndpoint throws arbitrary bodies and Authorization headers at the
// handler: it must never panic, always answer JSON, and never echo a secret.
func FuzzTokenEndpoint(f *testing.F) {
	fx := newFixture(f, jose.ES256, nil)
	good := form(fx.token(f, "perf-agent-0")).Encode()
	f.Add(good, exchange.BasicAuth("perf-agent-0", testSecret))
	f.Add(good+"&client_id=perf-agent-0&client_secret=x", "")
	f.Add("grant_type=%zz&&&==", "Basic Og==")
	f.Add("subject_token=a.b.c&subject_token_type=x", "Basic "+strings.Repeat("A", 300))
	f.Fuzz(func(t *testing.T, body, authz string) {
		rec := fx.do("POST", body, map[string]string{"Authorization": authz})
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("status %d, body not JSON: %q", rec.Code, rec.Body)
		}
		if rec.Code != 200 {
			var e exchange.ErrorResponse
			_ = json.Unmarshal(rec.Body.Bytes(), &e)
			if e.Error == "" {
				t.Fatalf("status %d without an OAuth error: %q", rec.Code, rec.Body)
			}
		}
		if strings.Contains(rec.Body.String(), testSecret) {
			t.Fatal("secret echoed")
		}
	})
}

// FuzzVerify feeds arbitrary strings to subject-token validation.
func FuzzVerify(f *testing.F) {
	fx := newFixture(f, jose.RS256, nil)
	f.Add(fx.token(f, "perf-agent-0"))
	f.Add(fx.signRaw(f, fx.header(), `{"iss":"https://pf-perf-subject","sub":"a","Sub":"b","aud":"perf-agent-0","exp":9999999999}`))
	f.Add(fx.signRaw(f, `{"alg":"none","alg":"RS256","crit":["x"],"x":1}`, `{"sub":"a","sub":"b"}`))
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
	f.Add("a.b.c")
	f.Add("....")
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := fx.srv.verify.verify(context.Background(), raw, "subject token", "perf-agent-0")
		if err == nil && c.Subject == "" {
			t.Fatal("accepted a token without sub")
		}
		if err != nil && len(raw) > 12 && strings.Contains(err.Error(), raw) {
			t.Fatal("error quotes the token")
		}
	})
}

// FuzzParseBasicAuth checks the parser never panics and round-trips.
func FuzzParseBasicAuth(f *testing.F) {
	f.Add("perf-agent-0", "secret")
	f.Add("a:b", "%zz+ ")
	f.Fuzz(func(t *testing.T, id, secret string) {
		gotID, gotSecret, ok, err := exchange.ParseBasicAuth(exchange.BasicAuth(id, secret))
		if !ok || err != nil || gotID != id || gotSecret != secret {
			// QueryEscape/QueryUnescape round-trip every string except invalid UTF-8 stays bytes-equal.
			t.Fatalf("round trip of %q/%q gave %q/%q (ok=%v, err=%v)", id, secret, gotID, gotSecret, ok, err)
		}
		_, _, _, _ = exchange.ParseBasicAuth("Basic " + id)
	})
}
