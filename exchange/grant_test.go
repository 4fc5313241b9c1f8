package exchange

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"testing"
)

// TestGrantForms: a plain grant's form has none of the exchange's fields,
// a jwt_bearer carries the user's token as its assertion, and an actor
// token rides after the subject token with its type in the fixed part.
func TestGrantForms(t *testing.T) {
	base := Template{SubjectTokenType: "access_token", RequestedTokenType: "jwt", Resources: []string{"https://r"}, Scope: "s", Auth: AuthPost}
	for _, tc := range []struct {
		name  string
		t     func(Template) Template
		actor string
		want  map[string]string // "" must be absent
	}{
		{"exchange with an actor", func(t Template) Template { t.ActorTokenType = "jwt"; return t }, "a.c.t",
			map[string]string{"grant_type": GrantTypeTokenExchange, "subject_token": "h.p.s", "actor_token": "a.c.t",
				"actor_token_type": TokenTypeJWT, "requested_token_type": TokenTypeJWT, "assertion": ""}},
		{"client_credentials", func(t Template) Template { t.Grant = GrantClientCredentials; t.ActorTokenType = "jwt"; return t }, "",
			map[string]string{"grant_type": "client_credentials", "subject_token": "", "subject_token_type": "", "actor_token": "",
				"actor_token_type": "", "requested_token_type": "", "resource": "https://r", "scope": "s", "client_secret": "c&r=d"}},
		{"jwt_bearer", func(t Template) Template { t.Grant = GrantJWTBearer; return t }, "",
			map[string]string{"grant_type": GrantTypeJWTBearer, "assertion": "h.p.s", "subject_token": "", "subject_token_type": ""}},
	} {
		b := tc.t(base).Compile()
		form := string(b.AppendFormActor(nil, "h.p.s", tc.actor, "perf-agent-0", "c&r=d"))
		v, err := url.ParseQuery(form)
		if err != nil {
			t.Fatal(err)
		}
		for k, want := range tc.want {
			if _, has := v[k]; (want == "") == has || v.Get(k) != want {
				t.Errorf("%s: %s = %q (present %v), want %q: %s", tc.name, k, v.Get(k), has, want, form)
			}
		}
		if b.Actor() != (tc.actor != "") {
			t.Errorf("%s: Actor() %v", tc.name, b.Actor())
		}
	}
}

// TestMixDrawsTheWeights: the draw is a function of the arrival, spreads
// as the weights say, and its hash is the agent script's (fixed values
// computed with node's Math.imul).
func TestMixDrawsTheWeights(t *testing.T) {
	m := Mix{Seed: 12345, Weights: []Weight{{GrantExchange, 70}, {GrantClientCredentials, 30}}}
	th := m.Thresholds()
	if len(th) != 2 || th[1] != 1<<32 || th[0] != uint64(math.Floor(0.7*(1<<32))) {
		t.Errorf("thresholds %v", th)
	}
	n := map[Grant]int{}
	draw := m.Drawer()
	for agent := range 10 {
		for seq := range int64(2000) {
			g := draw(agent, seq)
			if g != m.Draw(agent, seq) {
				t.Fatal("Drawer and Draw disagree")
			}
			n[g]++
		}
	}
	if share := float64(n[GrantClientCredentials]) / 20000; math.Abs(share-0.3) > 0.02 {
		t.Errorf("client_credentials drawn %.3f of the time, want 0.3", share)
	}
	for _, c := range []struct {
		seed  uint32
		agent int
		seq   int64
		want  uint32
	}{{0, 0, 0, mixHashRef(0, 0, 0)}, {12345, 3, 1 << 33, mixHashRef(12345, 3, 1<<33)}} {
		if got := MixHash(c.seed, c.agent, c.seq); got != c.want {
			t.Errorf("MixHash(%d, %d, %d) = %d, want %d", c.seed, c.agent, c.seq, got, c.want)
		}
	}
	if env := m.MixEnv(); env != "exchange:3006477107,client_credentials:4294967296" {
		t.Errorf("MixEnv %q", env)
	}
}

// mixHashRef is MixHash written out with 64-bit arithmetic masked to 32
// bits, as JavaScript's Math.imul computes it.
func mixHashRef(seed uint32, agent int, seq int64) uint32 {
	f := func(h uint64) uint64 {
		h ^= h >> 16
		h = (h * 0x85ebca6b) & 0xffffffff
		h ^= h >> 13
		h = (h * 0xc2b2ae35) & 0xffffffff
		return h ^ h>>16
	}
	h := f(uint64(seed ^ 0x9e3779b9))
	h = f(h ^ uint64(uint32(agent)))
	h = f(h ^ uint64(seq)&0xffffffff)
	return uint32(f(h ^ uint64(seq)>>32))
}

// TestAccessToken reads the top-level access_token only, escapes decoded,
// as StringMember does.
func TestAccessToken(t *testing.T) {
	for _, tc := range []struct {
		body, want string
		ok         bool
	}{
		{`{"access_token":"a.b.c","token_type":"Bearer"}`, "a.b.c", true},
		{`{"x":{"access_token":"inner"},"access_token" : "outer"}`, "outer", true},
		{`{"access_token":"a\/b"}`, "a/b", true},
		{`{"access_token":7}`, "", false},
		{`{"nested":{"access_token":"x"}}`, "", false},
		{`["access_token","x"]`, "", false},
		{`{"x":"access_token","access_token":"tok"}`, "tok", true}, // the key's text as a value first
	} {
		got, ok := AccessToken([]byte(tc.body))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q %v", tc.body, got, ok)
		}
		if want, wok := StringMember([]byte(tc.body), "access_token"); tc.ok && (want != got || !wok) {
			t.Errorf("%s: StringMember says %q", tc.body, want)
		}
	}
}

// FuzzAccessToken: on any valid JSON object, AccessToken finds what
// StringMember finds (the top-level access_token string), never a panic.
func FuzzAccessToken(f *testing.F) {
	for _, s := range []string{`{"access_token":"a.b.c"}`, `{"x":{"access_token":"i"},"access_token":"o"}`, `{"access_token":"a\/b\u0041"}`,
		`{"access_token":1}`, `["access_token","x"]`, `{"access_token" : "x" , "access_token":"y"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := AccessToken(b)
		if !validJSON(b) || len(b) == 0 || b[0] != '{' {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil || bytes.Count(b, []byte(`"access_token"`)) != 1 || len(m) != bytes.Count(b, []byte(`":`)) {
			return // a duplicate or escaped key (encoding/json decodes it, the check's scan does not), or nesting
		}
		want, wok := StringMember(b, "access_token")
		if ok != wok || got != want {
			t.Fatalf("%s: AccessToken %q %v, StringMember %q %v", b, got, ok, want, wok)
		}
	})
}
