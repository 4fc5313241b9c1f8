package lines

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReaderSkipsLongLinesAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in  string
		max       int
		want      []string
		long      int
		firstLong int
		partial   bool
	}{
		{"plain", "a\nbb\n\nccc\n", 3, []string{"a", "bb", "", "ccc"}, 0, 0, false},
		{"exactly max", "abc\n", 3, []string{"abc"}, 0, 0, false},
		{"one over", "abcd\nx\n", 3, []string{"x"}, 1, 1, false},
		{"long in the middle", "a\n" + strings.Repeat("z", 200000) + "\nb\n", 10, []string{"a", "b"}, 1, 2, false},
		{"long last without newline", "a\n" + strings.Repeat("z", 100), 10, []string{"a"}, 1, 2, false},
		{"last without newline", "a\nbc", 10, []string{"a", "bc"}, 0, 0, true},
		{"crlf kept", "a\r\n", 10, []string{"a\r"}, 0, 0, false},
		{"two long", "xxxx\nyyyy\nok\n", 3, []string{"ok"}, 2, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(iotest.OneByteReader(strings.NewReader(c.in)), c.max)
			var got []string
			for {
				b, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(b))
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") || r.Long != c.long || r.FirstLong != c.firstLong || r.Partial != c.partial {
				t.Errorf("got %q long %d first %d partial %v", got, r.Long, r.FirstLong, r.Partial)
			}
		})
	}
}

func TestReaderDropsTheLineCutByAnError(t *testing.T) {
	t.Parallel()
	boom := errors.New("unexpected EOF")
	r := NewReader(io.MultiReader(strings.NewReader("a\nhalf"), iotest.ErrReader(boom)), 100)
	if b, err := r.Next(); err != nil || string(b) != "a" {
		t.Fatalf("%q %v", b, err)
	}
	if b, err := r.Next(); !errors.Is(err, boom) || b != nil {
		t.Fatalf("the cut line was returned: %q %v", b, err)
	}
}
