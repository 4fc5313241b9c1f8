package termsafe

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// attacks are what hostile evidence or logs may carry to a terminal.
var attacks = []string{
	"\x1b]0;pwned\x07",           // window title (OSC)
	"\x1b[2J\x1b[H",              // clear screen, cursor home
	"\x1b[32mPASSED\x1b[0m",      // colour spoofing
	"\u009b31m",                  // C1 CSI
	"\x1bP+q\x1b\\",              // DCS
	"abc\u202edcba",              // right-to-left override
	"\x08\x08\x08ok",             // backspaces
	"line\rPASSED",               // carriage return overwrite
	"bad utf8 \xff\xfe \xe2\x82", // invalid and cut sequences
}

func clean(s string) bool {
	for _, r := range s {
		if drop(r) {
			return false
		}
	}
	return true
}

func TestTextLeavesNoControl(t *testing.T) {
	t.Parallel()
	for _, a := range attacks {
		got := Text(a)
		if !clean(got) || strings.ContainsAny(got, "\x1b\x07\r\n\b") {
			t.Errorf("Text(%q) = %q", a, got)
		}
	}
	if got := Text("plain – text ✓ 5 ms"); got != "plain – text ✓ 5 ms" {
		t.Errorf("plain text changed: %q", got)
	}
	if got := Text("a\tb\nc"); got != "a b c" {
		t.Errorf("got %q", got)
	}
}

func TestWriterKeepsLinesOnly(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := Writer(&b)
	in := strings.Join(attacks, "\n") + "\nend ✓\n"
	// byte by byte: sequences split across writes are handled.
	for i := 0; i < len(in); i++ {
		if _, err := w.Write([]byte{in[i]}); err != nil {
			t.Fatal(err)
		}
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07\r\b") || strings.ContainsRune(out, 0x9b) || strings.ContainsRune(out, 0x202e) {
		t.Errorf("control left: %q", out)
	}
	if strings.Count(out, "\n") != strings.Count(in, "\n") || !strings.HasSuffix(out, "end ✓\n") {
		t.Errorf("lines changed: %q", out)
	}
}

func TestCopyCleansDeepAndLeavesTheOriginal(t *testing.T) {
	t.Parallel()
	type inner struct {
		Name string
		Errs map[string]int
	}
	type ev struct {
		At    time.Time
		Msg   string
		Runs  []*inner
		Any   any
		Count int
	}
	at := time.Unix(1_800_000_000, 5)
	orig := ev{At: at, Msg: attacks[0], Runs: []*inner{{Name: attacks[1], Errs: map[string]int{attacks[2]: 3}}}, Any: inner{Name: attacks[3]}, Count: 7}
	got := Copy(orig)
	if !got.At.Equal(at) || got.Count != 7 || got.Msg != "]0;pwned" || got.Runs[0].Name != "[2J[H" || got.Any.(inner).Name != "31m" {
		t.Errorf("copy %+v", got)
	}
	for k := range got.Runs[0].Errs {
		if k != "[32mPASSED[0m" {
			t.Errorf("map key %q", k)
		}
	}
	if orig.Msg != attacks[0] || orig.Runs[0].Name != attacks[1] {
		t.Error("the original was changed")
	}
}
