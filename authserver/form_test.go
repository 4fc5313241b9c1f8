package authserver

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/internal/jose"
)

// FuzzParseForm checks parseForm against url.ParseQuery: the same values and
// an error for the same bodies, with known values read from the cache.
func FuzzParseForm(f *testing.F) {
	fc := newFixture(f, jose.ES256, nil).srv.form
	for _, s := range []string{"", "a=1&b=2&a=3", "grant_type=%zz", "a=1;b=2", "&&=&a", "a+b=c+d%20e", "%41=%42&A=B&a",
		"x=" + strings.Repeat("&y=1", 70), "a=%", "=1&=2", form("e30.e30.sig").Encode(), "scope=mcp%3Atools%3Ainvoke&scope=mcp%3atools%3ainvoke"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, gerr := fc.parseForm(body)
		want, werr := url.ParseQuery(body)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: err %v, url.ParseQuery %v", body, gerr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %v, url.ParseQuery %v", body, got, want)
		}
		if gerr != nil {
			return
		}
		for k := range got { // appending to one value never changes another
			before := got[k]
			got[k] = append(got[k], "x")
			for k2, v2 := range got {
				if k2 != k && !reflect.DeepEqual(v2, want[k2]) {
					t.Fatalf("appending to %q changed %q", k, k2)
				}
			}
			got[k] = before
		}
	})
}

// FuzzScope checks checkScope's normalisation against strings.Fields and
// Join, for a client allowed every scope.
func FuzzScope(f *testing.F) {
	for _, s := range []string{"a", "a b", " a", "a  b", "a\tb", "a\u00a0b", "a\u0085", "a b ", "\x7f", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, scope string) {
		cl := &client{scopes: map[string]bool{}}
		for _, sc := range strings.Fields(scope) {
			cl.scopes[sc] = true
		}
		got, oe := checkScope(scope, cl)
		if oe != nil {
			t.Fatalf("%q refused: %v", scope, oe.desc)
		}
		if want := strings.Join(strings.Fields(scope), " "); got != want {
			t.Fatalf("%q: %q, want %q", scope, got, want)
		}
	})
}
