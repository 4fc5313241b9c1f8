package authserver

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/jwks"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/subject"
)

// actorIssuer is the agents' workload-identity issuer of the tests.
var actorIssuer = subject.ActorIssuer(DefaultIssuerIn)

// agents is a server whose default clients perf-agent-0…5 may use every
// grant and every authentication method (a secret, their own ES256 key,
// a certificate CN=<client id> of ca), that trusts actor tokens of
// actorIssuer signed with an EdDSA key of their own, and lets a client ask
// for a token to another client (a delegation chain's next hop).
type agents struct {
	*fixture
	actorKey   *jose.Key
	actor      *subject.ActorMinter
	bearer     *subject.Minter // jwt-bearer assertions: aud the token endpoint
	clientKeys map[string]*jose.Key
	ca         *tlscert.ClientCA
}

func newAgents(t testing.TB, mutate func(*Config)) *agents {
	t.Helper()
	return newAgentsOf(t, jose.ES256, jose.EdDSA, mutate)
}

// newAgentsOf is agents whose subject tokens and issued tokens are signed
// with alg, its actor tokens with actorAlg.
func newAgentsOf(t testing.TB, alg, actorAlg string, mutate func(*Config)) *agents {
	t.Helper()
	a := &agents{clientKeys: map[string]*jose.Key{}}
	sets := map[string]json.RawMessage{}
	for i := range 6 {
		id := "perf-agent-" + string(rune('0'+i))
		k, err := jose.GenerateKey(jose.ES256)
		if err != nil {
			t.Fatal(err)
		}
		a.clientKeys[id] = k
		sets[id], _ = jose.JWKS(k)
	}
	b, _ := json.Marshal(sets)
	path := filepath.Join(t.TempDir(), "clients.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	if a.ca, err = tlscert.NewClientCA(time.Hour); err != nil {
		t.Fatal(err)
	}
	subjectKey, _ := jose.GenerateKey(alg)
	a.actorKey, _ = jose.GenerateKey(actorAlg)
	subjectJWKS, _ := jose.JWKS(subjectKey)
	actorJWKS, _ := jose.JWKS(a.actorKey)
	cfg := Default()
	cfg.Signing.Alg = alg
	cfg.DefaultClients.Count, cfg.DefaultClients.JWKSFile = 6, path
	cfg.DefaultClients.GrantTypes = exchange.GrantTypes
	cfg.DefaultClients.TLSClientAuthSubjectDN = "CN={{client_id}}"
	cfg.Subject.Actor = ActorConfig{Issuer: actorIssuer, Audience: "client_id"}
	cfg.Delegation.PeerAudiences = true
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := New(context.Background(), cfg, Options{ClientSecret: testSecret, SubjectJWKS: subjectJWKS, ActorJWKS: actorJWKS})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetBaseURL("https://tokex.test")
	a.fixture = &fixture{srv: srv, key: subjectKey, minter: &subject.Minter{
		Key: subjectKey, Issuer: DefaultIssuerIn, Lifetime: 5 * time.Minute, Users: subject.Users(100), Prefix: "t-",
	}}
	a.actor = &subject.ActorMinter{Key: a.actorKey, Issuer: actorIssuer, Lifetime: time.Minute, Prefix: "act-"}
	a.bearer = &subject.Minter{Key: subjectKey, Issuer: DefaultIssuerIn, Lifetime: time.Minute, Users: subject.Users(100),
		Prefix: "jb-", Shape: subject.Shape{Audience: tokenURL}}
	return a
}

// mint is a token of m for id, or the test fails.
func mint(t testing.TB, m interface{ Mint(string) (string, error) }, id string) string {
	t.Helper()
	tok, err := m.Mint(id)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// post sends the form v as client id, authenticated by method.
func (a *agents) post(t *testing.T, v url.Values, id string, method exchange.AuthMethod) *httptest.ResponseRecorder {
	t.Helper()
	v = cloneForm(v)
	req := httptest.NewRequest("POST", "/as/token.oauth2", nil)
	switch method {
	case exchange.AuthBasic:
		req.Header.Set("Authorization", exchange.BasicAuth(id, testSecret))
	case exchange.AuthPost:
		v.Set("client_id", id)
		v.Set("client_secret", testSecret)
	case exchange.AuthPrivateKeyJWT:
		asr := &subject.Asserter{Key: a.clientKeys[id], ClientID: id, Audience: tokenURL, Lifetime: time.Minute, Prefix: "ca-" + time.Now().String()}
		s, err := asr.Assert()
		if err != nil {
			t.Fatal(err)
		}
		v.Set("client_id", id)
		v.Set("client_assertion_type", exchange.ClientAssertionType)
		v.Set("client_assertion", s)
	case exchange.AuthTLSClient:
		cert, err := a.ca.Issue(id, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		v.Set("client_id", id)
		req.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert.Cert.Leaf}}}
	}
	body := v.Encode()
	r := httptest.NewRequest("POST", "/as/token.oauth2", strings.NewReader(body))
	r.Header = req.Header
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.TLS = req.TLS
	rec := httptest.NewRecorder()
	a.srv.Handler().ServeHTTP(rec, r)
	if rec.Code != 200 {
		assertNoLeak(t, rec.Body.String(), body)
	}
	return rec
}

func cloneForm(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// ccForm and bearerForm are the baseline grants' requests.
func ccForm() url.Values {
	return url.Values{"grant_type": {exchange.GrantTypeClientCredentials}, "resource": {DefaultResource}, "scope": {DefaultScope}}
}

func bearerForm(assertion string) url.Values {
	v := ccForm()
	v.Set("grant_type", exchange.GrantTypeJWTBearer)
	v.Set("assertion", assertion)
	return v
}

// issuedToken verifies an issued token with the server's published JWKS,
// as sampled verification does (exchange.IssuedVerifier), and returns its
// header and claims.
func (a *agents) issuedToken(t testing.TB, body []byte) (map[string]any, jwt.MapClaims) {
	t.Helper()
	set, err := jwks.Parse(a.srv.jwks, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := exchange.StringMember(body, "access_token")
	claims, err := jose.VerifyJWT(tok, set, a.srv.Issuer())
	if err != nil {
		t.Fatalf("issued token: %v", err)
	}
	parsed, _, _ := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
	return parsed.Header, claims
}

// TestBaselineGrants: client_credentials and jwt-bearer, with every client
// authentication method, issue the same RFC 9068 access tokens as an
// exchange — typ at+jwt, iss, aud, client_id, scope, a 5-minute life, a
// jti, cnf over a certificate — for the client itself and for the
// assertion's sub, without act, and answer RFC 6749 §5.1 (no
// issued_token_type).
func TestBaselineGrants(t *testing.T) {
	a := newAgents(t, nil)
	for _, m := range exchange.AuthMethods {
		for _, g := range []struct {
			name string
			form func() url.Values
			sub  string
		}{
			{"client_credentials", ccForm, "perf-agent-2"},
			{"jwt-bearer", func() url.Values { return bearerForm(mint(t, a.bearer, "perf-agent-2")) }, "perf-user-"},
		} {
			t.Run(g.name+"/"+string(m), func(t *testing.T) {
				rec := a.post(t, g.form(), "perf-agent-2", m)
				if rec.Code != 200 {
					t.Fatalf("%d %s", rec.Code, rec.Body)
				}
				var r map[string]any
				_ = json.Unmarshal(rec.Body.Bytes(), &r)
				if r["token_type"] != "Bearer" || r["expires_in"] != 300.0 || r["scope"] != DefaultScope || r["issued_token_type"] != nil {
					t.Errorf("response %s", rec.Body)
				}
				h, c := a.issuedToken(t, rec.Body.Bytes())
				sub, _ := c["sub"].(string)
				if h["typ"] != "at+jwt" || c["iss"] != "https://tokex.test" || !strings.HasPrefix(sub, g.sub) || c["aud"] != DefaultResource ||
					c["client_id"] != "perf-agent-2" || c["scope"] != DefaultScope || c["exp"].(float64)-c["iat"].(float64) != 300 || c["jti"] == nil {
					t.Errorf("header %v claims %v", h, c)
				}
				if _, has := c["act"]; has {
					t.Errorf("act in a %s token: %v", g.name, c["act"])
				}
				if _, has := c["cnf"]; has != (m == exchange.AuthTLSClient) {
					t.Errorf("cnf %v with %s", c["cnf"], m)
				}
			})
		}
	}
	var meta struct {
		Grants []string `json:"grant_types_supported"`
	}
	_ = json.Unmarshal(a.srv.meta, &meta)
	if strings.Join(meta.Grants, " ") != strings.Join(exchange.GrantTypes, " ") {
		t.Errorf("grant_types_supported %v", meta.Grants)
	}
}

// hop is one exchange of a delegation chain: client id exchanges subject
// (the user's token, or the previous hop's) for a token to next (another
// agent, or the resource at the end), with its own actor token unless
// actor is false.
func (a *agents) hop(t *testing.T, id, subjectToken, next string, actor bool, m exchange.AuthMethod) *httptest.ResponseRecorder {
	t.Helper()
	v := url.Values{"grant_type": {exchange.GrantTypeTokenExchange}, "subject_token": {subjectToken},
		"subject_token_type": {exchange.TokenTypeAccessToken}, "scope": {DefaultScope}}
	if strings.HasPrefix(next, "https://") {
		v.Set("resource", next)
	} else {
		v.Set("audience", next)
	}
	if actor {
		v.Set("actor_token", mint(t, a.actor, id))
		v.Set("actor_token_type", exchange.TokenTypeJWT)
	}
	return a.post(t, v, id, m)
}

// TestDelegationChain is issue 30 item 2: hop k exchanges hop k−1's
// issued token (the server's own RFC 9068 token, audience the agent of hop
// k) with agent k's actor token for a token to agent k+1, and the act of
// each hop nests every earlier agent under the current one; sampled
// verification (exchange.IssuedVerifier against the published JWKS)
// checks each hop's chain exactly. Five hops, the default maximum, pass;
// a sixth is refused, and passes once delegation.max_depth allows it.
func TestDelegationChain(t *testing.T) {
	for _, withActor := range []bool{true, false} {
		t.Run(map[bool]string{true: "actor tokens", false: "clients as actors"}[withActor], func(t *testing.T) {
			a := newAgents(t, nil)
			set, _ := jwks.Parse(a.srv.jwks, nil)
			v := &exchange.IssuedVerifier{Keys: set, Issuer: a.srv.Issuer(), Expect: exchange.Expect{Client: true, Lifetime: 5 * time.Minute}}
			tok := mint(t, a.minter, "perf-agent-1") // the user's token, for the first agent
			var chain []string
			size := 0
			for k := 1; k <= 5; k++ {
				id, next := "perf-agent-"+string(rune('0'+k)), "perf-agent-"+string(rune('1'+k))
				if k == 5 {
					next = DefaultResource
				}
				rec := a.hop(t, id, tok, next, withActor, exchange.AuthMethods[k%len(exchange.AuthMethods)])
				if rec.Code != 200 {
					t.Fatalf("hop %d: %d %s", k, rec.Code, rec.Body)
				}
				chain = append([]string{id}, chain...)
				v.Expect.Audience = next
				if err := v.VerifyActors(rec.Body.Bytes(), id, chain); err != nil {
					t.Fatalf("hop %d: %v", k, err)
				}
				_, c := a.issuedToken(t, rec.Body.Bytes())
				if c["sub"] != "perf-user-001" || c["client_id"] != id {
					t.Errorf("hop %d: sub %v client_id %v", k, c["sub"], c["client_id"])
				}
				tok, _ = exchange.StringMember(rec.Body.Bytes(), "access_token")
				act, _ := json.Marshal(c["act"])
				if len(act) <= size {
					t.Errorf("hop %d: act did not grow (%d bytes after %d)", k, len(act), size)
				}
				size = len(act)
			}
			// A sixth agent: the resource is no agent, so the chain's
			// last token goes to perf-agent-0 instead.
			rec := a.hop(t, "perf-agent-5", mint(t, a.minter, "perf-agent-5"), "perf-agent-0", withActor, exchange.AuthBasic)
			if rec.Code != 200 {
				t.Fatal(rec.Body)
			}
			first, _ := exchange.StringMember(rec.Body.Bytes(), "access_token")
			long := first
			for k := 0; k < 4; k++ {
				id, next := "perf-agent-"+string(rune('0'+k)), "perf-agent-"+string(rune('1'+k))
				rec = a.hop(t, id, long, next, withActor, exchange.AuthBasic)
				if rec.Code != 200 {
					t.Fatalf("second chain, hop %d: %s", k+2, rec.Body)
				}
				long, _ = exchange.StringMember(rec.Body.Bytes(), "access_token")
			}
			// long has 5 actors (5, 0, 1, 2, 3) and is for perf-agent-4.
			rec = a.hop(t, "perf-agent-4", long, DefaultResource, withActor, exchange.AuthBasic)
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), "deeper than delegation.max_depth") {
				t.Fatalf("a sixth hop: %d %s", rec.Code, rec.Body)
			}
		})
	}
	a := newAgents(t, func(c *Config) { c.Delegation.MaxDepth = 6 })
	tok := mint(t, a.minter, "perf-agent-0")
	for k := 0; k < 6; k++ {
		id, next := "perf-agent-"+string(rune('0'+k)), "perf-agent-"+string(rune('1'+k))
		if k == 5 {
			next = DefaultResource
		}
		rec := a.hop(t, id, tok, next, true, exchange.AuthBasic)
		if rec.Code != 200 {
			t.Fatalf("max_depth 6, hop %d: %s", k+1, rec.Body)
		}
		tok, _ = exchange.StringMember(rec.Body.Bytes(), "access_token")
	}
}

// signWith signs payload (literal JSON) with key under its alg and kid.
func signWith(t testing.TB, key *jose.Key, payload string) string {
	t.Helper()
	f := &fixture{key: key}
	return f.signRaw(t, f.header(), payload)
}

// nested is an act claim of actors, current first, as literal JSON.
func nested(actors ...string) string {
	out := ""
	for i := len(actors) - 1; i >= 0; i-- {
		if out == "" {
			out = `{"sub":` + quote(actors[i]) + `}`
		} else {
			out = `{"sub":` + quote(actors[i]) + `,"act":` + out + `}`
		}
	}
	return out
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestHostileChains: subject and actor tokens that try to break the act
// chain — depth bombs, loops, oversized actors, delegated or foreign actor
// tokens, the server's own tokens presented by the wrong client or forged
// — are refused with invalid_grant and a phrase that quotes none of them;
// the controls pass.
func TestHostileChains(t *testing.T) {
	a := newAgents(t, nil)
	now := time.Now().Unix()
	times := func(iss string, life int64) string {
		return `"iss":` + quote(iss) + `,"iat":` + itoa(now) + `,"exp":` + itoa(now+life)
	}
	user := func(aud, act string) string { // a subject token of the subject issuer
		p := `{` + times(DefaultIssuerIn, 300) + `,"sub":"perf-user-001","aud":` + quote(aud)
		if act != "" {
			p += `,"act":` + act
		}
		return signWith(t, a.key, p+`}`)
	}
	mayAct := func(m string) string { // the user's token for perf-agent-1 with may_act m
		return signWith(t, a.key, `{`+times(DefaultIssuerIn, 300)+`,"sub":"perf-user-001","aud":"perf-agent-1","may_act":`+m+`}`)
	}
	actorTok := func(key *jose.Key, iss, sub, aud, extra string) string {
		return signWith(t, key, `{`+times(iss, 60)+`,"sub":`+quote(sub)+`,"aud":`+quote(aud)+extra+`}`)
	}
	own := func(sub, aud, clientID, extra string, life int64) string { // as if this server issued it
		return signWith(t, a.srv.Key(), `{`+times("https://tokex.test", life)+`,"sub":`+quote(sub)+`,"aud":`+quote(aud)+
			`,"client_id":`+quote(clientID)+extra+`}`)
	}
	ccTok := func(id string) string {
		rec := a.post(t, ccForm(), id, exchange.AuthBasic)
		tok, _ := exchange.StringMember(rec.Body.Bytes(), "access_token")
		return tok
	}
	exchanged := func() string { // perf-agent-0's token for perf-agent-1: act [perf-agent-0]
		rec := a.hop(t, "perf-agent-0", mint(t, a.minter, "perf-agent-0"), "perf-agent-1", false, exchange.AuthBasic)
		tok, _ := exchange.StringMember(rec.Body.Bytes(), "access_token")
		return tok
	}()
	other, _ := jose.GenerateKey(jose.ES256)
	deep := make([]string, 40)
	for i := range deep {
		deep[i] = "agent-" + itoa(int64(i))
	}
	cases := []struct {
		name, subjectToken, actorToken string
		want                           string // "": 200
		actors                         []string
	}{
		{"depth bomb: five prior actors", user("perf-agent-1", nested(deep[:5]...)), "", "deeper than delegation.max_depth", nil},
		{"depth bomb: act nested 40 deep", user("perf-agent-1", nested(deep...)), "", "nests JSON deeper than 32 levels", nil},
		{"four prior actors: the fifth hop", user("perf-agent-1", nested(deep[:4]...)), "", "", append([]string{"perf-agent-1"}, deep[:4]...)},
		{"loop: the client is an earlier actor", user("perf-agent-1", nested("svc", "perf-agent-1")), "", "names an actor twice (a loop)", nil},
		{"loop inside the subject's chain", user("perf-agent-1", nested("a", "b", "a")), "", "names an actor twice", nil},
		{"the same actor again is no new hop", user("perf-agent-1", nested("perf-agent-1", "svc")), "", "", []string{"perf-agent-1", "svc"}},
		{"oversized actor", user("perf-agent-1", nested(strings.Repeat("x", 5000))), "", "longer than delegation.max_act_bytes", nil},
		{"oversized subject token", user("perf-agent-1", nested("a"+strings.Repeat("x", 40<<10))), "", "longer than subject.max_token_bytes", nil},
		{"actor token", user("perf-agent-1", ""), actorTok(a.actorKey, actorIssuer, "perf-agent-1", "perf-agent-1", ""), "", []string{"perf-agent-1"}},
		{"actor token of another sub", user("perf-agent-1", nested("svc")), actorTok(a.actorKey, actorIssuer, "orchestrator", "perf-agent-1", ""), "",
			[]string{"orchestrator", "svc"}},
		{"actor token carries act", user("perf-agent-1", ""), actorTok(a.actorKey, actorIssuer, "perf-agent-1", "perf-agent-1", `,"act":{"sub":"admin"}`),
			"actor token carries act", nil},
		{"actor token of another client", user("perf-agent-1", ""), actorTok(a.actorKey, actorIssuer, "perf-agent-3", "perf-agent-3", ""),
			"actor token audience does not match the client", nil},
		{"a user's token as actor token", user("perf-agent-1", ""), user("perf-agent-1", ""), "actor token is signed with an unknown key", nil},
		{"actor issuer, subject key", user("perf-agent-1", ""), actorTok(a.key, actorIssuer, "perf-agent-1", "perf-agent-1", ""),
			"actor token is signed with an unknown key", nil},
		{"subject issuer, actor key", user("perf-agent-1", ""), actorTok(a.actorKey, DefaultIssuerIn, "perf-agent-1", "perf-agent-1", ""),
			"actor token issuer is not trusted", nil},
		{"oversized actor token", user("perf-agent-1", ""), actorTok(a.actorKey, actorIssuer, "perf-agent-1", "perf-agent-1", `,"pad":"`+strings.Repeat("x", 40<<10)+`"`),
			"actor token is longer than subject.max_token_bytes", nil},
		{"an exchanged token, its audience", exchanged, "", "", []string{"perf-agent-1", "perf-agent-0"}},
		{"an exchanged token, another agent", exchanged, "", "subject token audience does not match the client", nil},
		{"own token forged with the subject key", signWith(t, a.key, `{`+times("https://tokex.test", 300)+`,"sub":"root","aud":"perf-agent-1"}`), "",
			"subject token is signed with an unknown key", nil},
		{"own issuer, another key", signWith(t, other.WithKid(a.srv.Key().Kid), `{`+times("https://tokex.test", 300)+`,"sub":"root","aud":"perf-agent-1"}`), "",
			"subject token signature is invalid", nil},
		{"own issuer, unknown kid", signWith(t, other, `{`+times("https://tokex.test", 300)+`,"sub":"root","aud":"perf-agent-1"}`), "",
			"subject token is signed with an unknown key", nil},
		{"own token living longer than signing.lifetime", own("perf-user-001", "perf-agent-1", "perf-agent-0", "", 3600), "", "lifetime (exp − iat) exceeds", nil},
		{"own token expired", own("perf-user-001", "perf-agent-1", "perf-agent-0", "", -60), "", "subject token is expired", nil},
		{"own exchanged token as actor token", user("perf-agent-1", ""), exchanged, "actor token carries act", nil},
		{"own client_credentials token as actor token", user("perf-agent-1", ""), ccTok("perf-agent-1"), "", []string{"perf-agent-1"}},
		{"another client's client_credentials token", user("perf-agent-1", ""), ccTok("perf-agent-2"),
			"actor token of this server must be the client's own client_credentials token", nil},
		// RFC 8693 §4.4 may_act: the subject allows one party to act for it.
		{"may_act names the client", mayAct(`{"sub":"perf-agent-1"}`), "", "", []string{"perf-agent-1"}},
		{"may_act names another party", mayAct(`{"sub":"perf-agent-2"}`), "", "the actor is not the party the subject token's may_act names", nil},
		{"may_act names the actor token's sub and iss", mayAct(`{"sub":"orchestrator","iss":` + quote(actorIssuer) + `}`),
			actorTok(a.actorKey, actorIssuer, "orchestrator", "perf-agent-1", ""), "", []string{"orchestrator"}},
		{"may_act names the client, the actor token another", mayAct(`{"sub":"perf-agent-1"}`),
			actorTok(a.actorKey, actorIssuer, "orchestrator", "perf-agent-1", ""), "the actor is not the party the subject token's may_act names", nil},
		{"may_act names the actor's sub at another issuer", mayAct(`{"sub":"orchestrator","iss":"https://elsewhere"}`),
			actorTok(a.actorKey, actorIssuer, "orchestrator", "perf-agent-1", ""), "the actor is not the party the subject token's may_act names", nil},
		{"may_act names the client at this server", mayAct(`{"sub":"perf-agent-1","iss":"https://tokex.test"}`), ccTok("perf-agent-1"), "", []string{"perf-agent-1"}},
		{"may_act without sub", mayAct(`{"iss":"x"}`), "", "claim may_act is not an object with a sub", nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := "perf-agent-1"
			if tc.name == "an exchanged token, another agent" {
				id = "perf-agent-2"
			}
			v := url.Values{"grant_type": {exchange.GrantTypeTokenExchange}, "subject_token": {tc.subjectToken},
				"subject_token_type": {exchange.TokenTypeAccessToken}, "resource": {DefaultResource}}
			if tc.actorToken != "" {
				v.Set("actor_token", tc.actorToken)
				v.Set("actor_token_type", exchange.TokenTypeAccessToken)
			}
			rec := a.post(t, v, id, exchange.AuthMethods[i%len(exchange.AuthMethods)])
			if tc.want != "" {
				if rec.Code != 400 || !strings.Contains(rec.Body.String(), exchange.ErrInvalidGrant) || !strings.Contains(rec.Body.String(), tc.want) {
					t.Fatalf("got %d %s, want invalid_grant %q", rec.Code, rec.Body, tc.want)
				}
				return
			}
			if rec.Code != 200 {
				t.Fatalf("got %d %s", rec.Code, rec.Body)
			}
			_, c := a.issuedToken(t, rec.Body.Bytes())
			if err := exchange.CheckActChain(c, tc.actors); err != nil {
				t.Errorf("%v: act %v", err, c["act"])
			}
		})
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestBaselineRefusals: the client_credentials and jwt-bearer grants hold
// the token endpoint's line — each client restricted to its grants, one
// authentication method, targets and scopes of the client — and a
// jwt-bearer assertion is checked as RFC 7523 §3 says (a trusted issuer
// and key, aud this server, exp, a bounded lifetime, a jti never accepted
// twice, from any client), each refusal a fixed phrase that never quotes
// the assertion.
func TestBaselineRefusals(t *testing.T) {
	a := newAgents(t, func(c *Config) {
		c.Clients = []ClientConfig{
			{ID: "perf-agent-0", Secret: testSecret, GrantTypes: exchange.GrantTypes, Resources: []string{DefaultResource}, Scopes: []string{DefaultScope}},
			{ID: "perf-agent-1", Secret: testSecret, GrantTypes: exchange.GrantTypes, Resources: []string{DefaultResource}, Scopes: []string{DefaultScope}},
			{ID: "exchange-only", Secret: testSecret, Resources: []string{DefaultResource}, Scopes: []string{DefaultScope}},
			{ID: "cc-only", Secret: testSecret, GrantTypes: []string{exchange.GrantTypeClientCredentials}, Resources: []string{DefaultResource}},
		}
	})
	now := time.Now().Unix()
	claims := func(edit string) string { // a jwt-bearer assertion's claims, edit appended
		return `{"iss":` + quote(DefaultIssuerIn) + `,"sub":"perf-user-001","aud":` + quote(tokenURL) + `,"iat":` + itoa(now) +
			`,"exp":` + itoa(now+60) + `,"jti":"j-` + rand16() + `"` + edit + `}`
	}
	assertion := func(payload string) string { return signWith(t, a.key, payload) }
	replayed := mint(t, a.bearer, "")
	if rec := a.post(t, bearerForm(replayed), "perf-agent-0", exchange.AuthBasic); rec.Code != 200 {
		t.Fatalf("first use: %s", rec.Body)
	}
	hmac := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": DefaultIssuerIn, "sub": "u", "aud": tokenURL, "exp": now + 60, "jti": "h"})
		tok.Header["kid"] = a.key.Kid
		pub, _ := json.Marshal(a.key.PublicJWK())
		s, _ := tok.SignedString(pub)
		return s
	}()
	form := func(grant string, edit func(url.Values)) url.Values {
		v := bearerForm(assertion(claims("")))
		v.Set("grant_type", grant)
		if edit != nil {
			edit(v)
		}
		return v
	}
	bearer := func(tok string) url.Values { return bearerForm(tok) }
	cases := []struct {
		name   string
		id     string
		v      url.Values
		status int
		code   string
		desc   string
	}{
		{"client_credentials not allowed", "exchange-only", form(exchange.GrantTypeClientCredentials, nil), 400, exchange.ErrUnauthorizedClient, "may not use this grant"},
		{"jwt-bearer not allowed", "cc-only", form(exchange.GrantTypeJWTBearer, nil), 400, exchange.ErrUnauthorizedClient, "may not use this grant"},
		{"exchange not allowed", "cc-only", form(exchange.GrantTypeTokenExchange, nil), 400, exchange.ErrUnauthorizedClient, "may not use this grant"},
		{"an unknown grant", "perf-agent-0", form("password", nil), 400, exchange.ErrUnsupportedGrantType, "not supported"},
		{"a grant in another case", "perf-agent-0", form("Client_Credentials", nil), 400, exchange.ErrUnsupportedGrantType, "not supported"},
		{"no target", "perf-agent-0", form(exchange.GrantTypeClientCredentials, func(v url.Values) { v.Del("resource") }), 400, exchange.ErrInvalidTarget, "required"},
		{"foreign resource", "perf-agent-0", form(exchange.GrantTypeClientCredentials, func(v url.Values) { v.Set("resource", "https://evil.example/") }), 400, exchange.ErrInvalidTarget, "not allowed"},
		{"an audience that is no client", "perf-agent-0", form(exchange.GrantTypeClientCredentials, func(v url.Values) { v.Set("audience", "nobody") }), 400, exchange.ErrInvalidTarget, "not allowed"},
		{"another client as audience (peer_audiences)", "perf-agent-0", form(exchange.GrantTypeClientCredentials, func(v url.Values) { v.Set("audience", "perf-agent-1") }), 200, "", ""},
		{"another client as resource", "perf-agent-0", form(exchange.GrantTypeClientCredentials, func(v url.Values) { v.Set("resource", "perf-agent-1") }), 400, exchange.ErrInvalidTarget, ""},
		{"bad scope", "perf-agent-0", form(exchange.GrantTypeClientCredentials, func(v url.Values) { v.Set("scope", "admin") }), 400, exchange.ErrInvalidScope, ""},
		{"repeated scope", "perf-agent-0", form(exchange.GrantTypeClientCredentials, func(v url.Values) { v.Add("scope", "x") }), 400, exchange.ErrInvalidRequest, "repeated"},
		{"no assertion", "perf-agent-0", form(exchange.GrantTypeJWTBearer, func(v url.Values) { v.Del("assertion") }), 400, exchange.ErrInvalidRequest, "assertion is required"},
		{"repeated assertion", "perf-agent-0", form(exchange.GrantTypeJWTBearer, func(v url.Values) { v.Add("assertion", "x") }), 400, exchange.ErrInvalidRequest, "repeated"},
		{"malformed", "perf-agent-0", bearer("a.b.c"), 400, exchange.ErrInvalidGrant, "assertion is malformed"},
		{"alg none", "perf-agent-0", bearer(base64url(`{"alg":"none"}`) + "." + base64url(claims("")) + "."), 400, exchange.ErrInvalidGrant, "algorithm is not allowed"},
		{"HMAC with the public key", "perf-agent-0", bearer(hmac), 400, exchange.ErrInvalidGrant, "algorithm is not allowed"},
		{"signed by the actor key", "perf-agent-0", bearer(signWith(t, a.actorKey, claims(""))), 400, exchange.ErrInvalidGrant, "unknown key"},
		{"signed by the server's own key", "perf-agent-0", bearer(signWith(t, a.srv.Key(), strings.Replace(claims(""), DefaultIssuerIn, "https://tokex.test", 1))), 400, exchange.ErrInvalidGrant, "unknown key"},
		{"another issuer", "perf-agent-0", bearer(assertion(strings.Replace(claims(""), DefaultIssuerIn, "https://evil", 1))), 400, exchange.ErrInvalidGrant, "issuer is not trusted"},
		{"expired", "perf-agent-0", bearer(assertion(strings.Replace(claims(""), itoa(now+60), itoa(now-60), 1))), 400, exchange.ErrInvalidGrant, "is expired"},
		{"aud the client, not this server", "perf-agent-0", bearer(assertion(strings.Replace(claims(""), quote(tokenURL), `"perf-agent-0"`, 1))), 400, exchange.ErrInvalidGrant, "audience is not this server's"},
		{"aud the issuer", "perf-agent-0", bearer(assertion(strings.Replace(claims(""), quote(tokenURL), `"https://tokex.test"`, 1))), 200, "", ""},
		{"no sub", "perf-agent-0", bearer(assertion(strings.Replace(claims(""), `"sub":"perf-user-001",`, "", 1))), 400, exchange.ErrInvalidGrant, "has no sub"},
		{"no jti", "perf-agent-0", bearer(assertion(claims("")[:strings.Index(claims(""), `,"jti"`)] + `}`)), 400, exchange.ErrInvalidGrant, "needs a jti"},
		{"a 300-byte jti", "perf-agent-0", bearer(assertion(strings.Replace(claims(""), `"jti":"j-`, `"jti":"`+strings.Repeat("j", 300), 1))), 400, exchange.ErrInvalidGrant, "needs a jti"},
		{"lives an hour", "perf-agent-0", bearer(assertion(strings.Replace(claims(""), itoa(now+60), itoa(now+3600), 1))), 400, exchange.ErrInvalidGrant, "longer than the maximum"},
		{"issued before the server started", "perf-agent-0", bearer(assertion(strings.Replace(claims(""), `"iat":`+itoa(now), `"iat":`+itoa(now-5), 1))), 400, exchange.ErrInvalidGrant, "before this server started"},
		{"replayed by its client", "perf-agent-0", bearer(replayed), 400, exchange.ErrInvalidGrant, "already used"},
		{"replayed by another client", "perf-agent-1", bearer(replayed), 400, exchange.ErrInvalidGrant, "already used"},
		{"sub twice", "perf-agent-0", bearer(assertion(claims(`,"sub":"root"`))), 400, exchange.ErrInvalidGrant, "carries a member name twice"},
		{"Sub beside sub", "perf-agent-0", bearer(assertion(claims(`,"Sub":"root"`))), 400, exchange.ErrInvalidGrant, "another case"},
		{"exp as a string", "perf-agent-0", bearer(assertion(strings.Replace(claims(""), `"exp":`+itoa(now+60), `"exp":"`+itoa(now+60)+`"`, 1))), 400, exchange.ErrInvalidGrant, "not a NumericDate"},
		{"crit header", "perf-agent-0", bearer(a.signRaw(t, `{"alg":"ES256","kid":`+quote(a.key.Kid)+`,"crit":["x"],"x":1}`, claims(""))), 400, exchange.ErrInvalidGrant, "crit"},
		{"oversized", "perf-agent-0", bearer(assertion(claims(`,"pad":"` + strings.Repeat("x", 40<<10) + `"`))), 400, exchange.ErrInvalidGrant, "longer than subject.max_token_bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := a.post(t, tc.v, tc.id, exchange.AuthBasic)
			var e exchange.ErrorResponse
			_ = json.Unmarshal(rec.Body.Bytes(), &e)
			if rec.Code != tc.status || e.Error != tc.code || !strings.Contains(e.ErrorDescription, tc.desc) {
				t.Fatalf("got %d %s, want %d %s %q", rec.Code, rec.Body, tc.status, tc.code, tc.desc)
			}
			if tok := tc.v.Get("assertion"); len(tok) > 8 && strings.Contains(rec.Body.String(), tok[:8]) && rec.Code != 200 {
				t.Errorf("the answer quotes the assertion: %s", rec.Body)
			}
		})
	}
	// Without client authentication, or with two methods, nothing is issued.
	v := form(exchange.GrantTypeClientCredentials, nil)
	if rec := a.do("POST", v.Encode(), nil); rec.Code != 401 || !strings.Contains(rec.Body.String(), exchange.ErrInvalidClient) {
		t.Errorf("no client authentication: %d %s", rec.Code, rec.Body)
	}
	v.Set("client_secret", testSecret)
	if rec := a.do("POST", v.Encode(), basic("perf-agent-0")); rec.Code != 400 || !strings.Contains(rec.Body.String(), "one client authentication method") {
		t.Errorf("two methods: %d %s", rec.Code, rec.Body)
	}
}

func base64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func rand16() string { return rand.Text()[:16] }

// TestAgenticConfig: grants, the actor issuer and the delegation bounds
// are checked with their field and line; a configured actor issuer needs
// keys of its own.
func TestAgenticConfig(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"default_clients:\n  grant_types: [password]\n", "serve.yaml:2: default_clients.grant_types[0]: unknown grant \"password\""},
		{"clients:\n  - id: a\n    secret: s\n    grant_types: [client_credentials, implicit]\n", "clients[0].grant_types[1]: unknown grant \"implicit\""},
		{"delegation:\n  max_depth: 0\n", "serve.yaml:2: delegation.max_depth: must be between 1 and 16"},
		{"delegation:\n  max_depth: 40\n", "delegation.max_depth"},
		{"delegation:\n  max_act_bytes: 10\n", "serve.yaml:2: delegation.max_act_bytes"},
		{"subject:\n  max_token_bytes: 100\n", "serve.yaml:2: subject.max_token_bytes"},
		{"subject:\n  actor:\n    issuer: https://pf-perf-subject\n", "serve.yaml:3: subject.actor.issuer: must differ from subject.issuer"},
		{"subject:\n  actor:\n    jwks_file: a.json\n", "subject.actor.issuer: is required with actor keys"},
		{"subject:\n  actor:\n    issuer: https://a\n    jwks_url: ftp://x\n", "serve.yaml:4: subject.actor.jwks_url: must be an http(s) URL"},
		{"subject:\n  actor:\n    issuer: https://a\n    jwks_url: https://a/k\n    jwks_file: k.json\n", "subject.actor.jwks_url: set jwks_url or jwks_file, not both"},
		{"subject:\n  actor:\n    audience: \"\"\n", "subject.actor.audience: is required"},
	} {
		p := filepath.Join(t.TempDir(), "serve.yaml")
		_ = os.WriteFile(p, []byte(tc.body), 0o600)
		cfg, doc, err := Load(p)
		if err == nil {
			err = cfg.Validate(doc)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.body, err, tc.want)
		}
	}
	cfg := Default()
	cfg.Subject.Actor.Issuer = actorIssuer
	key, _ := jose.GenerateKey(jose.ES256)
	set, _ := jose.JWKS(key)
	if _, err := New(context.Background(), cfg, Options{ClientSecret: testSecret, SubjectJWKS: set}); err == nil ||
		!strings.Contains(err.Error(), "subject.actor: set jwks_url or jwks_file") {
		t.Errorf("an actor issuer without keys: %v", err)
	}
	p := filepath.Join(t.TempDir(), "serve.yaml")
	_ = os.WriteFile(p, []byte("default_clients:\n  grant_types: [client_credentials, urn:ietf:params:oauth:grant-type:jwt-bearer]\n"+
		"delegation:\n  max_depth: 3\n  peer_audiences: true\nsubject:\n  actor:\n    issuer: https://a\n    jwks_file: a.json\n    audience: any\n"), 0o600)
	cfg, doc, err := Load(p)
	if err == nil {
		err = cfg.Validate(doc)
	}
	if err != nil || len(cfg.DefaultClients.GrantTypes) != 2 || cfg.Delegation != (DelegationConfig{3, DefaultMaxActBytes, true}) ||
		cfg.Subject.Actor != (ActorConfig{Issuer: "https://a", JWKSFile: "a.json", Audience: "any"}) {
		t.Errorf("%+v %+v %v", cfg.Delegation, cfg.Subject.Actor, err)
	}
}
