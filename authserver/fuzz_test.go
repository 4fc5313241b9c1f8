package authserver

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/subject"
)

// FuzzTokenEndpoint throws arbitrary bodies and Authorization headers at the
// handler: it must never panic, always answer JSON, and never echo a secret.
func FuzzTokenEndpoint(f *testing.F) {
	fx := newFixture(f, jose.ES256, func(c *Config) {
		c.DefaultClients.GrantTypes = exchange.GrantTypes // issue 30: every grant
		c.Delegation.PeerAudiences = true
	})
	good := form(fx.token(f, "perf-agent-0")).Encode()
	f.Add(good, exchange.BasicAuth("perf-agent-0", testSecret))
	cc := url.Values{"grant_type": {exchange.GrantTypeClientCredentials}, "resource": {DefaultResource}, "audience": {"perf-agent-1"}}
	f.Add(cc.Encode(), exchange.BasicAuth("perf-agent-0", testSecret))
	m := &subject.Minter{Key: fx.key, Issuer: DefaultIssuerIn, Lifetime: time.Minute, Users: []string{"u"}, Shape: subject.Shape{Audience: tokenURL}}
	assertion, _ := m.Mint("")
	f.Add(url.Values{"grant_type": {exchange.GrantTypeJWTBearer}, "assertion": {assertion}, "resource": {DefaultResource}}.Encode(),
		exchange.BasicAuth("perf-agent-0", testSecret))
	f.Add("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=a.b.c&assertion=x", "Basic Og==")
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

// FuzzAgentTokens feeds arbitrary strings to issue 30's readers: subject
// tokens (the subject issuer's or the server's own), actor tokens (the
// actor issuer's or the client's own) with the act chain they make, and
// jwt-bearer assertions. No panic; whatever passes has a sub and a chain
// within delegation's bounds, without a loop; no refusal quotes its input.
func FuzzAgentTokens(f *testing.F) {
	a := newAgents(f, nil)
	now := time.Now().Unix()
	user := a.signRaw(f, a.header(), `{"iss":"https://pf-perf-subject","sub":"u","aud":"perf-agent-1","exp":`+itoa(now+300)+`,"act":{"sub":"x","act":{"sub":"y"}}}`)
	actor, _ := a.actor.Mint("perf-agent-1")
	assertion, _ := a.bearer.Mint("")
	own := signWith(f, a.srv.Key(), `{"iss":"https://tokex.test","sub":"u","aud":"perf-agent-1","client_id":"perf-agent-0","iat":`+itoa(now)+
		`,"exp":`+itoa(now+60)+`,"act":{"sub":"perf-agent-0"}}`)
	f.Add(user, actor, assertion)
	f.Add(own, "", "")
	f.Add(a.token(f, "perf-agent-1"), own, own)
	f.Add("a.b.c", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "....")
	f.Fuzz(func(t *testing.T, subjectToken, actorToken, assertion string) {
		ctx := context.Background()
		quoted := func(desc, in string) bool { return len(in) > 12 && strings.Contains(desc, in) }
		if c, oe := a.srv.subjectToken(ctx, subjectToken, "perf-agent-1"); oe != nil {
			if quoted(oe.desc, subjectToken) {
				t.Fatal("quotes the subject token")
			}
		} else if c.Subject == "" {
			t.Fatal("a subject token without sub passed")
		} else if act, desc := a.srv.cfg.Delegation.chain("perf-agent-1", c.Act); desc == "" {
			n, seen := 0, map[string]bool{}
			for x := act; x != nil; x = x.Act {
				if n++; seen[x.Sub] || n > a.srv.cfg.Delegation.MaxDepth {
					t.Fatalf("chain %+v", act)
				}
				seen[x.Sub] = true
			}
		}
		if sub, _, oe := a.srv.actorToken(ctx, actorToken, "perf-agent-1"); oe != nil {
			if quoted(oe.desc, actorToken) {
				t.Fatal("quotes the actor token")
			}
		} else if sub == "" {
			t.Fatal("an actor without sub")
		}
		if sub, oe := a.srv.bearerAssertion(ctx, assertion, a.srv.clients["perf-agent-1"]); oe != nil {
			if quoted(oe.desc, assertion) {
				t.Fatal("quotes the assertion")
			}
		} else if sub == "" {
			t.Fatal("an assertion without sub passed")
		}
	})
}
