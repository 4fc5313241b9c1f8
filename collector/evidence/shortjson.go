package evidence

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// shortStrings passes a JSON text through with every string literal (keys
// too) cut to its first max bytes as written, so that a decoder reading
// from it never holds a long string: a cut string keeps whole UTF-8
// sequences and whole escapes and ends in "…"; what follows the cut is
// read, never kept. Everything else passes unchanged: a valid document
// stays valid and decodes as the original would, strings aside; a raw
// control character or a bad escape in a skipped part becomes a control
// character, so a document the decoder would refuse stays refused.
type shortStrings struct {
	r   io.Reader
	max int
	in  []byte // read, not yet looked at
	buf []byte // read buffer
	ob  []byte // out's buffer
	out []byte // looked at, not yet returned
	err error  // the reader's error, once in is empty

	str  bool // inside a string literal
	n    int  // bytes of the current string passed on
	rest int  // bytes of the UTF-8 sequence passed last still to come
	cut  bool // the current string's rest is skipped
	esc  int  // bytes left of the escape under way (-1: the byte after '\')
	skip bool // the escape under way is being skipped
}

// newShortStrings cuts the strings of r to max bytes (max ≥ 8).
func newShortStrings(r io.Reader, max int) *shortStrings {
	return &shortStrings{r: r, max: max, buf: make([]byte, 32<<10)}
}

const ellipsis = "…"

func (s *shortStrings) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if len(s.in) == 0 {
			if s.err != nil && s.esc == -1 && !s.cut {
				s.esc, s.out = 0, []byte{'\\'} // a text that ends in a backslash
				break
			}
			if s.err != nil {
				return 0, s.err
			}
			n, err := s.r.Read(s.buf)
			s.in, s.err = s.buf[:n], err
			if n == 0 && err == nil {
				continue
			}
		}
		s.ob = s.scan(s.ob[:0])
		s.out = s.ob
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// scan moves what it can of s.in to out.
func (s *shortStrings) scan(out []byte) []byte {
	for len(s.in) > 0 {
		if !s.str {
			i := bytes.IndexByte(s.in, '"')
			if i < 0 {
				out = append(out, s.in...)
				s.in = nil
				return out
			}
			out = append(out, s.in[:i+1]...)
			s.in = s.in[i+1:]
			s.str, s.n, s.cut, s.rest = true, 0, false, 0
			continue
		}
		if s.esc != 0 {
			out = s.escape(out)
			continue
		}
		i := 0
		for i < len(s.in) && s.in[i] != '"' && s.in[i] != '\\' {
			i++
		}
		out = s.plain(out, s.in[:i])
		if i == len(s.in) {
			s.in = nil
			return out
		}
		c := s.in[i]
		s.in = s.in[i+1:]
		if c == '"' {
			s.str = false
			if s.cut {
				out = append(out, ellipsis...)
			}
			out = append(out, '"')
			continue
		}
		s.esc, s.rest = -1, 0 // passed or skipped once its next byte says how long it is
	}
	return out
}

// plain passes the string bytes b up to the budget: a UTF-8 sequence is
// budgeted whole at its first byte (it may end in a later read), and cut
// before if it does not fit; control characters pass regardless.
func (s *shortStrings) plain(out, b []byte) []byte {
	if !s.cut {
		k := 0
		for ; k < len(b); k++ {
			c := b[k]
			switch {
			case !utf8.RuneStart(c) && s.rest > 0: // reserved with its first byte
				s.rest--
			case s.n+seqLen(c) > s.max:
				s.cut = true
			default:
				s.rest = seqLen(c) - 1
			}
			if s.cut {
				break
			}
			s.n++
		}
		out = append(out, b[:k]...)
		b = b[k:]
	}
	for _, c := range b {
		if c < 0x20 {
			out = append(out, c) // invalid in a string: the decoder refuses it
		}
	}
	return out
}

// seqLen is the length of the UTF-8 sequence that c starts (1 for a byte
// that starts none, such as a stray continuation byte).
func seqLen(c byte) int {
	switch {
	case c >= 0xf0 && c < 0xf8:
		return 4
	case c >= 0xe0 && c < 0xf0:
		return 3
	case c >= 0xc0 && c < 0xe0:
		return 2
	}
	return 1
}

// escape passes or skips the bytes of the escape under way: passed whole
// (\uXXXX is 6 bytes, the others 2) or not at all.
func (s *shortStrings) escape(out []byte) []byte {
	c := s.in[0]
	s.in = s.in[1:]
	bad := false
	switch {
	case s.esc == -1:
		need := 2
		if c == 'u' {
			need, s.esc = 6, 4
		} else {
			s.esc, bad = 0, strings.IndexByte(`"\/bfnrt`, c) < 0
		}
		s.skip = s.cut || s.n+need > s.max
		s.cut = s.skip
		if !s.skip {
			out = append(out, '\\')
			s.n++
		}
	default:
		s.esc--
		bad = !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F')
	}
	switch {
	case !s.skip:
		out = append(out, c)
		s.n++
	case bad:
		out = append(out, 0x01) // invalid in a string: the decoder refuses it
	}
	return out
}
