package exchange

import (
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// PieceLen is the shortest piece of a client secret that a stored text may
// not carry: a description holding any PieceLen consecutive bytes of the
// secret (a secret shorter than that: all of it) is withheld.
const PieceLen = 8

// SecretFilter finds a client secret, or any PieceLen-byte piece of it, in
// a text and in what the text decodes to: as written or in another ASCII
// case (either way for a secret with non-ASCII letters), URL- or
// form-encoded (once or twice), hex in either case, base64 or base64url
// with or without padding at any alignment (so base64 of "id:secret" and
// of "id:" + the URL-encoded secret too, as HTTP Basic sends it), and any
// of these cut short (all but the last character still holds a piece),
// also with spaces or control characters put between its characters.
//
// The work is linear in the text: every piece of the secret is one 64-bit
// word in a set, and each view of the text (itself, its percent-decoding,
// each run of hex or base64 decoded at every alignment) is scanned once
// with a rolling word. A filter is safe for concurrent use; it remembers
// its last verdict, since a server repeats one description.
type SecretFilter struct {
	secrets []*pieces
	last    atomic.Pointer[verdict]
}

type verdict struct{ in, out string }

// pieces is one secret's set of windows, folded (foldByte).
type pieces struct {
	w    int    // window length: PieceLen, or the secret's length when shorter
	mask uint64 // the low w bytes
	set  map[uint64]struct{}
	// bloom rejects most words before the map is asked.
	bloom []uint64
	shift uint
}

// NewSecretFilter prepares the filter of the given secrets (empty ones
// are skipped).
func NewSecretFilter(secrets ...string) *SecretFilter {
	f := &SecretFilter{}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		variants := []string{s}
		if !isASCII(s) { // Unicode case: the ASCII fold does not reach it
			variants = append(variants, strings.ToUpper(s), strings.ToLower(s))
		}
		// A secret with spaces or control characters, as the squeezed
		// view of a text shows it.
		if q := string(squeeze([]byte(s))); q != s && q != "" {
			variants = append(variants, q)
		}
		for _, v := range variants {
			f.secrets = append(f.secrets, newPieces(v))
		}
	}
	return f
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func newPieces(s string) *pieces {
	w := min(PieceLen, len(s))
	p := &pieces{w: w, mask: ^uint64(0) >> (64 - 8*uint(w)), set: map[uint64]struct{}{}}
	bits := uint(6)
	for 1<<bits < 16*(len(s)-w+1) && bits < 20 {
		bits++
	}
	p.bloom, p.shift = make([]uint64, (1<<bits)/64), 64-bits
	var h uint64
	for i := 0; i < len(s); i++ {
		h = h<<8 | uint64(foldByte(s[i]))
		if i+1 >= w {
			k := h & p.mask
			p.set[k] = struct{}{}
			b := p.index(k)
			p.bloom[b/64] |= 1 << (b % 64)
		}
	}
	return p
}

func (p *pieces) index(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> p.shift }

// foldByte makes ASCII letters lower case and a space a '+' (form
// encoding's space), in the secret and in every view alike.
func foldByte(b byte) byte {
	switch {
	case b >= 'A' && b <= 'Z':
		return b + ('a' - 'A')
	case b == ' ':
		return '+'
	}
	return b
}

// in reports whether b holds a window of the secret.
func (p *pieces) in(b []byte) bool {
	if len(b) < p.w {
		return false
	}
	var h uint64
	for i := 0; i < len(b); i++ {
		h = h<<8 | uint64(foldByte(b[i]))
		if i+1 < p.w {
			continue
		}
		k := h & p.mask
		if x := p.index(k); p.bloom[x/64]&(1<<(x%64)) == 0 {
			continue
		}
		if _, ok := p.set[k]; ok {
			return true
		}
	}
	return false
}

// Found reports whether s carries a secret or a piece of one in any of
// the encodings the filter knows.
func (f *SecretFilter) Found(s string) bool {
	if f == nil || len(f.secrets) == 0 || s == "" {
		return false
	}
	minW := PieceLen
	for _, p := range f.secrets {
		minW = min(minW, p.w)
	}
	sc := scan{f: f, minW: minW}
	b := []byte(s)
	if sc.view(b, 2) {
		return true
	}
	// The same with spaces and control characters taken out: a secret cut
	// by them (which clean would print as spaces) or a base64 broken into
	// lines.
	if q := squeeze(b); len(q) < len(b) {
		return sc.view(q, 2)
	}
	return false
}

// squeeze is b without what clean prints as a space: spaces, control
// characters and every other unprintable rune.
func squeeze(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r != ' ' && r != utf8.RuneError && unicode.IsPrint(r) {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// scan is one Found: the filter and the scratch its decodings share.
type scan struct {
	f    *SecretFilter
	minW int
	buf  []byte
}

// plain checks b as it is.
func (sc *scan) plain(b []byte) bool {
	for _, p := range sc.f.secrets {
		if p.in(b) {
			return true
		}
	}
	return false
}

// view checks b, its percent-decoding (depth more times), and every run
// of hex or base64 in them, decoded.
func (sc *scan) view(b []byte, depth int) bool {
	if sc.plain(b) || sc.runs(b) {
		return true
	}
	if depth > 0 && hasPercent(b) {
		return sc.view(percentDecode(b), depth-1)
	}
	return false
}

// runs decodes each long enough run of base64 (both alphabets; hex is a
// part of it) at every alignment, and each run of hex at both, and checks
// what they give, percent-decoded too (HTTP Basic encodes the secret
// before base64).
func (sc *scan) runs(b []byte) bool {
	for i := 0; i < len(b); {
		if b64Value(b[i]) < 0 {
			i++
			continue
		}
		j := i
		for j < len(b) && b64Value(b[j]) >= 0 {
			j++
		}
		if sc.run(b[i:j]) {
			return true
		}
		i = j
	}
	return false
}

func (sc *scan) run(r []byte) bool {
	if len(r)*3/4 >= sc.minW {
		for off := 0; off < 4 && off < len(r); off++ {
			sc.buf = b64Decode(sc.buf[:0], r[off:])
			if sc.decoded() {
				return true
			}
		}
	}
	// Hex: the longest stretches of hex digits within the run.
	for i := 0; i < len(r); {
		if hexValue(r[i]) < 0 {
			i++
			continue
		}
		j := i
		for j < len(r) && hexValue(r[j]) >= 0 {
			j++
		}
		if (j-i)/2 >= sc.minW {
			for off := 0; off < 2; off++ {
				sc.buf = hexDecode(sc.buf[:0], r[i+off:j])
				if sc.decoded() {
					return true
				}
			}
		}
		i = j
	}
	return false
}

// decoded checks sc.buf, and its percent-decoding when it has a '%'.
func (sc *scan) decoded() bool {
	if sc.plain(sc.buf) {
		return true
	}
	return hasPercent(sc.buf) && sc.plain(percentDecode(sc.buf))
}

func hasPercent(b []byte) bool {
	for _, c := range b {
		if c == '%' {
			return true
		}
	}
	return false
}

// percentDecode decodes every %XX it can and keeps the rest as it is
// ('+' stays: foldByte makes a space one).
func percentDecode(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '%' && i+2 < len(b) && hexValue(b[i+1]) >= 0 && hexValue(b[i+2]) >= 0 {
			out = append(out, byte(hexValue(b[i+1])<<4|hexValue(b[i+2])))
			i += 2
			continue
		}
		out = append(out, b[i])
	}
	return out
}

func hexValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func hexDecode(dst, r []byte) []byte {
	for i := 0; i+1 < len(r); i += 2 {
		dst = append(dst, byte(hexValue(r[i])<<4|hexValue(r[i+1])))
	}
	return dst
}

// b64Value is a base64 or base64url digit's value, -1 for anything else.
func b64Value(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	case c >= '0' && c <= '9':
		return int(c-'0') + 52
	case c == '+' || c == '-':
		return 62
	case c == '/' || c == '_':
		return 63
	}
	return -1
}

// b64Decode decodes a run of digits, a short last group as far as it goes.
func b64Decode(dst, r []byte) []byte {
	var acc uint32
	n := 0
	for _, c := range r {
		acc = acc<<6 | uint32(b64Value(c))
		if n++; n == 4 {
			dst = append(dst, byte(acc>>16), byte(acc>>8), byte(acc))
			acc, n = 0, 0
		}
	}
	switch n {
	case 2:
		dst = append(dst, byte(acc>>4))
	case 3:
		dst = append(dst, byte(acc>>10), byte(acc>>2))
	}
	return dst
}

// Sanitize is SanitizeDescription with the filter's secrets; plain are
// the request's other material (its subject token, its client assertion),
// found only whole.
func (f *SecretFilter) Sanitize(s string, plain ...string) string {
	if s == "" {
		return ""
	}
	if len(s) > maxJudged {
		s = s[:maxJudged]
	}
	if carries(s, plain) {
		return Withheld
	}
	v := f.last.Load()
	if v == nil || v.in != s {
		out := Withheld
		if !f.Found(s) {
			if out = clean(s); f.Found(out) {
				out = Withheld
			}
		}
		v = &verdict{in: s, out: out}
		f.last.Store(v)
	}
	if v.out != Withheld && carries(v.out, plain) { // spaces collapsed into one
		return Withheld
	}
	return v.out
}
