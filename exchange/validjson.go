package exchange

import (
	"encoding/binary"
	"math/bits"
)

// maxNesting is encoding/json's limit on nested arrays and objects.
const maxNesting = 10000

// validJSON returns what json.Valid returns for b (its scanner's rules:
// RFC 8259, inside strings any byte from 0x20 up, UTF-8 or not, at most
// maxNesting levels), without a function call per byte. It does not
// recurse; its stack is one bit a level, 1,256 bytes at most.
func validJSON(b []byte) bool {
	var small [2]uint64 // 128 levels without allocating
	st := nesting{bits: small[:]}
	i := skipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		switch c := b[i]; c {
		case '{', '[':
			if !st.push(c == '{') {
				return false
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				st.depth--
				i++
				break
			}
			if c == '{' {
				if i = member(b, i); i < 0 {
					return false
				}
			}
			continue
		case '"':
			i = scanString(b, i+1)
		case 't':
			i = literal(b, i, "true")
		case 'f':
			i = literal(b, i, "false")
		case 'n':
			i = literal(b, i, "null")
		default:
			i = number(b, i)
		}
		if i < 0 {
			return false
		}
		// A value ended at i: close containers up to a comma.
		for {
			i = skipSpace(b, i)
			if st.depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			obj, c := st.object(), b[i]
			if c == ',' {
				i = skipSpace(b, i+1)
				if obj {
					if i = member(b, i); i < 0 {
						return false
					}
				}
				break
			}
			if obj && c != '}' || !obj && c != ']' {
				return false
			}
			st.depth--
			i++
		}
	}
}

// nesting is the stack of open containers, one bit a level.
type nesting struct {
	bits  []uint64 // bit d of the stack is 1 when level d+1 is an object
	depth int
}

// push opens a level, or reports false past maxNesting.
func (n *nesting) push(object bool) bool {
	if n.depth == maxNesting {
		return false
	}
	w := n.depth / 64
	if w == len(n.bits) {
		grown := make([]uint64, (maxNesting+63)/64)
		copy(grown, n.bits)
		n.bits = grown
	}
	bit := uint64(1) << (n.depth % 64)
	if object {
		n.bits[w] |= bit
	} else {
		n.bits[w] &^= bit
	}
	n.depth++
	return true
}

// object reports whether the innermost open level is an object.
func (n *nesting) object() bool {
	d := n.depth - 1
	return n.bits[d/64]>>(d%64)&1 == 1
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// member reads an object key and its colon at i, returning where the value
// starts, or -1.
func member(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = scanString(b, i+1); i < 0 {
		return -1
	}
	if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specials marks with its high bit each byte of x that is '"', '\\' or a
// control byte (below 0x20); the lowest mark is exact, the bits above it
// may not be (the "has a zero byte" and "has a byte below n" tricks).
func specials(x uint64) uint64 {
	q := x ^ (ones * '"')
	s := x ^ (ones * '\\')
	return ((q-ones)&^q | (s-ones)&^s | (x-ones*0x20)&^x) & highs
}

// scanString returns the index after the quote closing a string whose
// contents start at i, or -1; it reads 8 bytes at a time.
func scanString(b []byte, i int) int {
	for {
		if len(b)-i >= 8 {
			m := specials(binary.LittleEndian.Uint64(b[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
		} else if i >= len(b) {
			return -1
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			if i = escape(b, i+1); i < 0 {
				return -1
			}
		case c < 0x20:
			return -1
		default: // only in the last 7 bytes
			i++
		}
	}
}

// escape returns the index after the escape whose letter is at i, or -1.
// A \u escape is 4 hex digits, surrogate or not, as encoding/json checks.
func escape(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 1
	case 'u':
		if len(b)-i < 5 {
			return -1
		}
		for _, h := range b[i+1 : i+5] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return -1
			}
		}
		return i + 5
	}
	return -1
}

// literal returns the index after lit at i, or -1.
func literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// number returns the index after the number at i, or -1: -?(0|[1-9]\d*)
// (\.\d+)?([eE][+-]?\d+)?. What follows it is the caller's to judge.
func number(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// digits returns the index of the first byte at or after i that is not a
// decimal digit.
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
