package exchange

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// encodings are the ways a server may echo a secret, each written with
// the standard library (the oracle), never with the filter's decoders.
var encodings = map[string]func(id, secret string) string{
	"plain":               func(_, s string) string { return s },
	"upper case":          func(_, s string) string { return strings.ToUpper(s) },
	"lower case":          func(_, s string) string { return strings.ToLower(s) },
	"all but the last":    func(_, s string) string { return s[:len(s)-1] },
	"base64":              func(_, s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"base64 unpadded":     func(_, s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) },
	"base64url":           func(_, s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) },
	"base64url unpadded":  func(_, s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
	"base64 of id:secret": func(id, s string) string { return base64.StdEncoding.EncodeToString([]byte(id + ":" + s)) },
	"HTTP Basic":          func(id, s string) string { return BasicAuth(id, s) },
	"base64 of the upper case": func(_, s string) string {
		return base64.StdEncoding.EncodeToString([]byte(strings.ToUpper(s)))
	},
	"hex":                func(_, s string) string { return hex.EncodeToString([]byte(s)) },
	"HEX":                func(_, s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) },
	"URL (query)":        func(_, s string) string { return url.QueryEscape(s) },
	"URL (path)":         func(_, s string) string { return url.PathEscape(s) },
	"URL, every byte":    func(_, s string) string { return everyBytePercent(s) },
	"URL twice":          func(_, s string) string { return url.QueryEscape(url.QueryEscape(s)) },
	"form":               func(_, s string) string { return url.Values{"client_secret": {s}}.Encode() },
	"spaced out":         func(_, s string) string { return spaced(s, " ") },
	"control characters": func(_, s string) string { return spaced(s, "\x1b") },
	"zero-width spaces":  func(_, s string) string { return spaced(s, "\u200b") },
	"base64 in lines": func(_, s string) string {
		e := base64.StdEncoding.EncodeToString([]byte(s))
		return e[:len(e)/2] + "\r\n" + e[len(e)/2:]
	},
	"prefixed base64": func(_, s string) string { return "Zm9v" + base64.RawStdEncoding.EncodeToString([]byte("x"+s)) },
	"a piece":         func(_, s string) string { return s[3 : 3+PieceLen] },
}

// runeWise are the encodings that read the secret as text.
var runeWise = map[string]bool{"upper case": true, "lower case": true, "base64 of the upper case": true,
	"spaced out": true, "control characters": true, "zero-width spaces": true}

func everyBytePercent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString("%" + strings.ToLower(hex.EncodeToString([]byte{s[i]})))
	}
	return b.String()
}

func spaced(s, sep string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && i%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestDescriptionWithholdsEncodedSecrets: a description that carries the
// client secret, or 8 characters of it, in any encoding a server may use
// is withheld (issue 25 item 5: base64(id:secret), upper case and all but
// the last character reached manifest.json).
func TestDescriptionWithholdsEncodedSecrets(t *testing.T) {
	t.Parallel()
	const id = "perf-agent-0"
	for _, secret := range []string{"Zq9-long client/SECRET+x", "ünïcödé-sécret-wörd"} {
		f := NewSecretFilter(secret)
		for name, enc := range encodings {
			in := "invalid client: " + enc(id, secret) + " is not registered"
			if got := f.Sanitize(in); got != Withheld {
				t.Errorf("%q, %s: kept as %q", secret, name, got)
			}
			if got := SanitizeDescription(in, secret); got != Withheld {
				t.Errorf("%q, %s: SanitizeDescription kept %q", secret, name, got)
			}
		}
	}
	// What must stay: ordinary text, 7 characters of the secret, other
	// base64 and hex.
	f := NewSecretFilter("Zq9-long-client-secret")
	for _, keep := range []string{
		"client authentication failed",
		"secret Zq9-lon is wrong", // 7 characters
		"request id 3f2a9c1e7b5d4f60a1b2c3d4e5f60718 (hex)",
		"trace " + base64.StdEncoding.EncodeToString([]byte("some other text entirely")),
		"jeton expiré pour le client perf-agent-0",
	} {
		if got := f.Sanitize(keep); got != keep {
			t.Errorf("%q: %q, want it kept", keep, got)
		}
	}
	// A short secret is found whole in every encoding too.
	short := NewSecretFilter("s3c")
	for _, in := range []string{"S3C", base64.StdEncoding.EncodeToString([]byte("id:s3c")), "%73%33%63"} {
		if short.Sanitize("x "+in) != Withheld {
			t.Errorf("short secret in %q kept", in)
		}
	}
}

// The remembered verdict never carries one request's token to another.
func TestSecretFilterRemembersOnlyTheSecretVerdict(t *testing.T) {
	t.Parallel()
	f := NewSecretFilter("Zq9-long-client-secret")
	if got := f.Sanitize("bad token abc.def", "abc.def"); got != Withheld {
		t.Errorf("token of the request: %q", got)
	}
	if got := f.Sanitize("bad token abc.def", "other"); got != "bad token abc.def" {
		t.Errorf("the same text with another token: %q", got)
	}
}

// FuzzSecretFilter: a text holding an encoding of the secret (written by
// the standard library) within what is judged is always withheld, and
// nothing kept holds 8 characters of the secret in any case.
func FuzzSecretFilter(f *testing.F) {
	f.Add("Zq9-long-client-secret", "perf-agent-0", "bad: ", " end", uint8(0))
	f.Add("s3cret!!", "a", "", "", uint8(7))
	f.Add("ünïcödé-sécret", "c", "x", "y", uint8(1))
	f.Add("\xff\xfe-invalid-utf8", "c", "", "", uint8(2))
	names := make([]string, 0, len(encodings))
	for n := range encodings {
		names = append(names, n)
	}
	slices.Sort(names)
	f.Fuzz(func(t *testing.T, secret, id, prefix, suffix string, which uint8) {
		if len(secret) < 2 || len(secret) > 256 || len(id) > 64 {
			return
		}
		name := names[int(which)%len(names)]
		enc := encodings[name]
		if name == "a piece" && len(secret) < 3+PieceLen || name == "all but the last" && len(secret) <= PieceLen {
			return
		}
		if runeWise[name] && !utf8.ValidString(secret) {
			return // these rewrite invalid bytes as U+FFFD: not the secret any more
		}
		in := prefix + enc(id, secret) + suffix
		got := NewSecretFilter(secret).Sanitize(in)
		if len(got) > MaxDescription || !utf8.ValidString(got) {
			t.Fatalf("%q -> %q", in, got)
		}
		if got != Withheld {
			// A secret of printable characters without spaces (any real
			// one) is found in every encoding within what is judged.
			if len(in) <= maxJudged && string(squeeze([]byte(secret))) == secret {
				t.Fatalf("secret %q, %s in %q: kept as %q", secret, name, in, got)
			}
			w := min(PieceLen, len(secret))
			lower := strings.ToLower(got)
			for i := 0; i+w <= len(secret); i++ {
				if strings.Contains(lower, strings.ToLower(secret[i:i+w])) {
					t.Fatalf("secret %q: %q kept a piece", secret, got)
				}
			}
		}
	})
}

// BenchmarkSecretFilter: the cost of judging a long description that
// holds nothing (every view scanned).
func BenchmarkSecretFilter(b *testing.B) {
	f := NewSecretFilter("Zq9-long-client-secret")
	desc := strings.Repeat("the subject_token is not valid: aGVsbG8gd29ybGQ 0123456789abcdef %41%42 ", 20)
	for i := 0; b.Loop(); i++ {
		if f.Sanitize(desc+string(rune('a'+i%26))) == Withheld {
			b.Fatal("withheld")
		}
	}
}
