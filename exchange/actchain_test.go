package exchange

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// nestAct builds an act claim of the given actors, current actor first.
func nestAct(actors ...string) map[string]any {
	var act map[string]any
	for i := len(actors) - 1; i >= 0; i-- {
		a := map[string]any{"sub": actors[i]}
		if act != nil {
			a["act"] = act
		}
		act = a
	}
	return act
}

// TestActChain: the chain is read current actor first; an act that is not
// an object with a string sub, at any depth, or one nested past
// MaxActChain, is refused with a phrase that quotes nothing of it.
func TestActChain(t *testing.T) {
	deep := make([]string, MaxActChain+1)
	for i := range deep {
		deep[i] = "a"
	}
	for _, tc := range []struct {
		name   string
		claims jwt.MapClaims
		want   []string
		err    string
	}{
		{"none", jwt.MapClaims{"sub": "u"}, nil, ""},
		{"one", jwt.MapClaims{"act": nestAct("agent-1")}, []string{"agent-1"}, ""},
		{"five", jwt.MapClaims{"act": nestAct("agent-5", "agent-4", "agent-3", "agent-2", "agent-1")},
			[]string{"agent-5", "agent-4", "agent-3", "agent-2", "agent-1"}, ""},
		{"zitadel's iss beside sub", jwt.MapClaims{"act": map[string]any{"iss": "https://z", "sub": "a", "act": map[string]any{"sub": "b"}}},
			[]string{"a", "b"}, ""},
		{"string", jwt.MapClaims{"act": "agent-1"}, nil, "not an object"},
		{"null", jwt.MapClaims{"act": nil}, nil, "not an object"},
		{"sub a number", jwt.MapClaims{"act": map[string]any{"sub": 7.0}}, nil, "not an object"},
		{"empty sub", jwt.MapClaims{"act": map[string]any{"sub": ""}}, nil, "not an object"},
		{"nested not an object", jwt.MapClaims{"act": map[string]any{"sub": "a", "act": []any{"b"}}}, nil, "not an object"},
		{"nested without sub", jwt.MapClaims{"act": map[string]any{"sub": "a", "act": map[string]any{}}}, nil, "not an object"},
		{"deepest allowed", jwt.MapClaims{"act": nestAct(deep[:MaxActChain]...)}, deep[:MaxActChain], ""},
		{"too deep", jwt.MapClaims{"act": nestAct(deep...)}, nil, "more than 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ActChain(tc.claims)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
}

// TestVerifyActors: sampled verification checks the nested act of a hop
// exactly: the same actors in the same order, no more, no fewer.
func TestVerifyActors(t *testing.T) {
	is := newIssuer(t, func(base string) string { return base + "/dex/keys" })
	v, _, err := Discover(context.Background(), http.DefaultClient, is.srv.URL+"/dex/token", "")
	if err != nil {
		t.Fatal(err)
	}
	chain := []string{"perf-agent-0", "perf-agent-1", "perf-agent-2"}
	withAct := func(act map[string]any) func(jwt.MapClaims) {
		return func(c jwt.MapClaims) {
			if act == nil {
				delete(c, "act")
			} else {
				c["act"] = act
			}
		}
	}
	for _, tc := range []struct {
		name string
		act  map[string]any
		want []string
		err  string
	}{
		{"the chain", nestAct(chain...), chain, ""},
		{"a hop missing", nestAct("perf-agent-0", "perf-agent-2"), chain, "differs at depth 2"},
		{"a hop more", nestAct(append(chain, "perf-agent-3")...), chain, "holds 4 actors, want 3"},
		{"swapped", nestAct("perf-agent-0", "perf-agent-2", "perf-agent-1"), chain, "differs at depth 2"},
		{"no act where one is expected", nil, chain, "holds 0 actors"},
		{"no act expected", nil, nil, ""},
		{"act where none is expected", nestAct("perf-agent-0"), nil, "holds 1 actors, want 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := is.token(t, is.key, withAct(tc.act))
			err := v.VerifyActors(body, "perf-agent-0", tc.want)
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("got %v, want %q", err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "perf-agent") {
				t.Fatalf("the error quotes the token: %v", err)
			}
		})
	}
}

// FuzzActChain reads arbitrary claims JSON: no panic, and a chain it
// returns has no empty sub and is at most MaxActChain long.
func FuzzActChain(f *testing.F) {
	for _, s := range []string{`{}`, `{"act":{"sub":"a"}}`, `{"act":{"sub":"a","act":{"sub":"b","act":{"sub":"c"}}}}`,
		`{"act":null}`, `{"act":{"sub":1}}`, `{"act":{"sub":"a","act":"b"}}`, `{"act":{"sub":"a","sub":"b"}}`,
		`{"act":{"act":{"sub":"b"}}}`, `{"act":[{"sub":"a"}]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var c jwt.MapClaims
		if json.Unmarshal([]byte(raw), &c) != nil {
			return
		}
		chain, err := ActChain(c)
		if err != nil {
			return
		}
		if len(chain) > MaxActChain {
			t.Fatalf("%d actors", len(chain))
		}
		for _, s := range chain {
			if s == "" {
				t.Fatal("an empty sub")
			}
		}
		if CheckActChain(c, chain) != nil {
			t.Fatal("a chain does not match itself")
		}
	})
}
