// Package termsafe keeps text that tokex did not write itself (evidence
// files, server and pod logs, k6 output) from acting on a terminal: escape
// and control sequences (window titles, screen clears, colours, cursor
// moves), C1 controls and bidirectional overrides are removed before the
// text is printed or drawn, so it can only ever show as text.
package termsafe

import (
	"io"
	"reflect"
	"strings"
	"unicode/utf8"
)

// drop reports a rune a terminal may act on: C0 and C1 controls, DEL, and
// the bidirectional controls that reorder what is shown.
func drop(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
		r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// Text makes s one safe line: tabs and line breaks become spaces, every
// other control is removed, invalid UTF-8 becomes U+FFFD.
func Text(s string) string {
	ok := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if drop(r) || (r == utf8.RuneError && n == 1) {
			ok = false
			break
		}
		i += n
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s { // invalid bytes come as utf8.RuneError
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case !drop(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// writer filters a byte stream: newlines stay, other controls go.
type writer struct {
	w    io.Writer
	tail []byte // an incomplete UTF-8 sequence from the last Write
}

// Writer returns a writer that passes what is written to w without any
// control character but '\n' (a tab becomes a space).
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

func (w *writer) Write(p []byte) (int, error) {
	buf := append(w.tail, p...)
	w.tail = nil
	out := make([]byte, 0, len(buf))
	for i := 0; i < len(buf); {
		r, n := utf8.DecodeRune(buf[i:])
		if r == utf8.RuneError && n == 1 && !utf8.FullRune(buf[i:]) && len(buf)-i < utf8.UTFMax {
			w.tail = append([]byte(nil), buf[i:]...)
			break
		}
		switch {
		case r == '\n':
			out = append(out, '\n')
		case r == '\t':
			out = append(out, ' ')
		case drop(r):
		default:
			out = utf8.AppendRune(out, r)
		}
		i += n
	}
	if _, err := w.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Copy returns a deep copy of v with every string (map keys too) passed
// through Text; the original is untouched, so other consumers of a shared
// event still see what was recorded.
func Copy[T any](v T) T {
	rv := reflect.ValueOf(&v).Elem()
	out := reflect.New(rv.Type()).Elem()
	copyValue(out, rv)
	return out.Interface().(T)
}

func copyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.String:
		dst.SetString(Text(src.String()))
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(src.Type().Elem())
		copyValue(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Interface:
		if src.IsNil() {
			return
		}
		inner := src.Elem()
		c := reflect.New(inner.Type()).Elem()
		copyValue(c, inner)
		dst.Set(c)
	case reflect.Struct:
		dst.Set(src) // unexported fields (time.Time's) as they are
		for i := 0; i < src.NumField(); i++ {
			if dst.Field(i).CanSet() {
				copyValue(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := 0; i < src.Len(); i++ {
			copyValue(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Array:
		for i := 0; i < src.Len(); i++ {
			copyValue(dst.Index(i), src.Index(i))
		}
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		it := src.MapRange()
		for it.Next() {
			k := reflect.New(src.Type().Key()).Elem()
			copyValue(k, it.Key())
			val := reflect.New(src.Type().Elem()).Elem()
			copyValue(val, it.Value())
			m.SetMapIndex(k, val)
		}
		dst.Set(m)
	default:
		dst.Set(src)
	}
}
