package jose

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestFoldKeyMatchesEqualFold(t *testing.T) {
	t.Parallel()
	words := []string{"sub", "SUB", "ſub", "Sub", "sUb", "k", "K", "\u212a", "kid", "\u212aid", "aud", "AUD", "aüd", "AÜD",
		"ß", "ẞ", "ss", "σ", "ς", "Σ", "i", "I", "İ", "ı", "x5t#S256", "X5T#s256", "", "exp", "ехр" /* Cyrillic */}
	for _, a := range words {
		for _, b := range words {
			if got, want := foldKey(a) == foldKey(b), strings.EqualFold(a, b); got != want {
				t.Errorf("foldKey(%q)==foldKey(%q) is %v, EqualFold %v", a, b, got, want)
			}
		}
	}
}

func TestClaimTypes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		payload string
		ok      bool
	}{
		{"numeric dates", `{"exp":1700000000,"iat":1699999000.5,"nbf":0}`, true},
		{"exp as numeric string", `{"exp":"1700000000"}`, false},
		{"exp negative", `{"exp":-1}`, false},
		{"exp beyond year 9999", `{"exp":1e300}`, false},
		{"exp null", `{"exp":null}`, false},
		{"sub a number", `{"sub":1}`, false},
		{"sub null", `{"sub":null}`, false},
		{"aud array", `{"aud":["a","b"]}`, true},
		{"aud array with a number", `{"aud":["a",1]}`, false},
		{"aud object", `{"aud":{"a":1}}`, false},
		{"act without sub", `{"act":{"iss":"x"}}`, false},
		{"act a string", `{"act":"x"}`, false},
		{"act nested", `{"act":{"sub":"a","act":{"sub":"b"}}}`, true},
		{"may_act a string", `{"may_act":"x"}`, false},
		{"may_act without sub", `{"may_act":{"iss":"x"}}`, false},
		{"may_act sub empty", `{"may_act":{"sub":""}}`, false},
		{"may_act sub a number", `{"may_act":{"sub":1}}`, false},
		{"may_act iss a number", `{"may_act":{"sub":"a","iss":1}}`, false},
		{"may_act sub and iss", `{"may_act":{"sub":"a","iss":"i","client_id":"c"}}`, true},
		{"scope a list", `{"scope":["a"]}`, false},
		{"too deep", `{"x":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}`, false},
		{"act chain too deep", strings.Repeat(`{"sub":"a","act":`, 40) + `{"sub":"z"}` + strings.Repeat(`}`, 40), false},
		{"trailing data", `{"sub":"a"} {}`, false},
		{"not an object", `["sub"]`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c Claims
			err := json.Unmarshal([]byte(tc.payload), &c)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestMayAct: may_act's sub and iss are read (RFC 8693 §4.4).
func TestMayAct(t *testing.T) {
	t.Parallel()
	for payload, want := range map[string]*MayAct{
		`{"sub":"u"}`:                        nil,
		`{"may_act":{"sub":"perf-agent-1"}}`: {Sub: "perf-agent-1"},
		`{"may_act":{"sub":"perf-agent-1","iss":"https://a/actors"}}`: {Sub: "perf-agent-1", Iss: "https://a/actors"},
	} {
		var c Claims
		if err := json.Unmarshal([]byte(payload), &c); err != nil {
			t.Fatalf("%s: %v", payload, err)
		}
		if (c.MayAct == nil) != (want == nil) || (want != nil && *c.MayAct != *want) {
			t.Errorf("%s: may_act %+v, want %+v", payload, c.MayAct, want)
		}
	}
}

// FuzzClaims checks the exact claims reader against an independent model:
// whatever it accepts has unique member names, no case variant of a
// registered name, and the values encoding/json finds under the exact names.
func FuzzClaims(f *testing.F) {
	for _, s := range []string{
		`{"iss":"i","sub":"s","aud":["a"],"exp":1700000000,"iat":1,"nbf":2,"jti":"j","act":{"sub":"x","act":{"sub":"y"}}}`,
		`{"sub":"a","SUB":"b"}`, `{"sub":"a","ſub":"b"}`, `{"sub":"a","sub":"b"}`, `{"aud":"a","AUD":"b"}`,
		`{"exp":"1700000000"}`, `{"act":{"sub":"a","Sub":"b"}}`, `{"may_act":{"sub":"a","iss":"i"}}`, `{"may_act":{"sub":"a","SUB":"b"}}`, `{"\u212a":1}`, `{"x":{"y":1,"y":2}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Claims
		if json.Unmarshal(data, &c) != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("accepted what encoding/json refuses: %v", err)
		}
		for k := range m {
			for _, reg := range registeredClaims.fold {
				if k != reg && strings.EqualFold(k, reg) {
					t.Fatalf("accepted %q next to registered %q", k, reg)
				}
			}
		}
		var exact struct {
			Sub any `json:"sub"`
			Iss any `json:"iss"`
		}
		_ = json.Unmarshal(data, &exact) // folds, but there is nothing left to fold
		if s, _ := exact.Sub.(string); s != c.Subject {
			t.Fatalf("sub %q, want %q", c.Subject, s)
		}
		if s, _ := exact.Iss.(string); s != c.Issuer {
			t.Fatalf("iss %q, want %q", c.Issuer, s)
		}
		if c.Act != nil && c.Act.Sub == "" {
			t.Fatal("act without sub accepted")
		}
	})
}

// FuzzMembers checks the byte scanner against encoding/json: on any input it
// must not panic, and what it accepts has exactly the members encoding/json
// finds (so no duplicate), each with the same value.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{"alg":"RS256","kid":"k"}`, `{"a":[1,{"b":2}],"c":"\u00e9\"x"}`, `{"a":1,"a":2}`,
		`{"crit":["x"],"x":1}`, `{ "a" : { } , "b" : [ ] }`, `{"\u212aid":1}`, `[{}]`, `{"a":"\xff"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := members(data, registeredHeaders, nil)
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("accepted what encoding/json refuses: %v", err)
		}
		if len(m) != len(ms) {
			t.Fatalf("%d members, encoding/json finds %d", len(ms), len(m))
		}
		for _, x := range ms {
			if x.text != string(x.raw) {
				t.Fatalf("member %q: text %q, raw %q", x.name, x.text, x.raw)
			}
			var a, b any
			if json.Unmarshal(x.raw, &a) != nil || json.Unmarshal(m[x.name], &b) != nil || fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("member %q: %s, encoding/json %s", x.name, x.raw, m[x.name])
			}
		}
	})
}
