package evidence

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

func shorten(t *testing.T, in []byte, max int) []byte {
	t.Helper()
	// One byte at a time: every state must survive a read boundary.
	out, err := io.ReadAll(newShortStrings(iotest.OneByteReader(bytes.NewReader(in)), max))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestShortStrings(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"name":"short","n":[1,2,{"k":"v"}]}`, `{"name":"short","n":[1,2,{"k":"v"}]}`},
		{`{"name":"0123456789abcdef"}`, `{"name":"01234567…"}`},
		{`"0123456\u00e9abc"`, `"0123456…"`},                       // an escape is passed whole or not at all
		{`"01\u00e9abcdefgh"`, `"01\u00e9…"`},                      // …and counts as written
		{`"0123456é"`, `"0123456…"`},                               // a UTF-8 sequence too
		{`"01234567\"still in the string\\", 5`, `"01234567…", 5`}, // escaped quotes do not end a skipped string
		{`["0123456789\n"]`, `["01234567…"]`},
		{`["01234567` + "\x01" + `"]`, `["01234567` + "\x01" + `…"]`}, // a raw control character stays
		{`["01234567\x"]`, `["01234567` + "\x01" + `…"]`},             // so does a bad escape, as one
		{`["01234567\u12G4"]`, `["01234567` + "\x01" + `…"]`},
		{`{"a":"01234567890`, `{"a":"01234567`}, // unterminated stays unterminated
	}
	for _, c := range cases {
		if got := string(shorten(t, []byte(c.in), 8)); got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// FuzzShortStrings: whatever the text, shortStrings keeps it valid or
// invalid as it was; a valid one passes unchanged when no string is longer
// than the cut, and keeps every token but strings, each cut to a prefix of
// the original (a text of valid UTF-8: a broken sequence is budgeted at
// the length its first byte announces).
func FuzzShortStrings(f *testing.F) {
	f.Add([]byte(`{"campaign_id":"c","name":"a long name with \u00e9 and \"quotes\"","runs":[{"id":"01","plan":{"target_rps":10}}]}`), 8)
	f.Add([]byte(`["\ud83d\ude00\ud83d\ude00\ud83d\ude00", "x\\y", 1e3, true, null]`), 10)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		max = 8 + abs(max)%64
		out := shorten(t, in, max)
		if json.Valid(in) != json.Valid(out) {
			t.Fatalf("valid %v → %v: %q → %q", json.Valid(in), json.Valid(out), in, out)
		}
		if json.Valid(in) && utf8.Valid(in) && longest(in) <= max && !bytes.Equal(in, out) {
			t.Fatalf("changed with no long string: %q → %q", in, out)
		}
		if !json.Valid(in) {
			return
		}
		a, b := json.NewDecoder(bytes.NewReader(in)), json.NewDecoder(bytes.NewReader(out))
		for {
			ta, ea := a.Token()
			tb, eb := b.Token()
			if (ea == nil) != (eb == nil) {
				t.Fatalf("%v ≠ %v", ea, eb)
			}
			if ea != nil {
				return
			}
			sa, okA := ta.(string)
			sb, okB := tb.(string)
			switch {
			case okA != okB:
				t.Fatalf("token %v → %v", ta, tb)
			case !okA && ta != tb:
				t.Fatalf("token %v → %v", ta, tb)
			case okA && sa != sb:
				prefix, cut := strings.CutSuffix(sb, ellipsis)
				if !cut || utf8.RuneCountInString(prefix) > max || !strings.HasPrefix(sa, prefix) && !strings.ContainsRune(prefix, utf8.RuneError) {
					t.Fatalf("string %q → %q", sa, sb)
				}
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

// longest is the longest string literal of a JSON text, as written.
func longest(b []byte) int {
	best, in, esc, n := 0, false, false, 0
	for _, c := range b {
		switch {
		case !in && c == '"':
			in, n = true, 0
		case !in:
		case esc:
			esc = false
			n++
		case c == '\\':
			esc = true
			n++
		case c == '"':
			in = false
		default:
			n++
		}
		best = max(best, n)
	}
	return best
}
