package names

import (
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestFile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, def, want string }{
		{"quick", "campaign", "quick"},
		{"", "campaign", "campaign"},
		{"Quick Run_1.b", "c", "Quick-Run_1.b"},
		{"a b/c", "c", "a-b-c"},
		{"a//  b", "c", "a-b"},
		{"a-/b", "c", "a-b"},
		{"../etc/passwd", "c", "-etc-passwd"},
		{"..hidden", "c", "hidden"},
		{"...", "c", "c"},
		{".", "c", "c"},
		{"é", "c", "-"},
		{"café au lait", "c", "caf-au-lait"},
		{"\xff\xfe", "c", "-"},
		{"=1+2", "c", "-1-2"},
		{strings.Repeat("a", 70), "c", strings.Repeat("a", 64)},
		{strings.Repeat("ab/", 30), "c", strings.Repeat("ab-", 21) + "a"},
	} {
		if got := File(c.in, c.def); got != c.want {
			t.Errorf("File(%q, %q) = %q, want %q", c.in, c.def, got, c.want)
		}
	}
}

func TestIsFile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"20261130-154030.417-quick", true},
		{"00-sanity", true},
		{"a", true},
		{"-x_", true},
		{strings.Repeat("a", IDMax), true},
		{"", false},
		{".x", false},
		{"..", false},
		{"a/b", false},
		{"a\\b", false},
		{"a b", false},
		{"é", false},
		{"a\x00", false},
		{strings.Repeat("a", IDMax+1), false},
	} {
		if got := IsFile(c.in); got != c.want {
			t.Errorf("IsFile(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestDNSLabel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"tokex-20261130-154030.417-Quick_Run", "tokex-20261130-154030-417-quick-run"},
		{"01-stage-100-r1", "01-stage-100-r1"},
		{"--a--", "a"},
		{"a..b", "a--b"},
		{"", ""},
		{"é", ""},
		{"\u212a", "k"}, // KELVIN SIGN lower-cases to an ASCII k
		{strings.Repeat("a", 60), strings.Repeat("a", 52)},
		{strings.Repeat("a", 51) + "-b", strings.Repeat("a", 51)},
	} {
		if got := DNSLabel(c.in); got != c.want {
			t.Errorf("DNSLabel(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzNames checks each rule's promise on any input: File gives a name
// IsFile accepts (or the default), DNSLabel a valid DNS-1123 label (or
// nothing), and both are fixed points.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"quick", "../x", "Tokex_Run.1", "é\xff", strings.Repeat("z/", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name := File(s, "def")
		if !IsFile(name) || len(name) > FileMax || !utf8.ValidString(name) {
			t.Fatalf("File(%q) = %q breaks the rule", s, name)
		}
		if again := File(name, "def"); again != name {
			t.Fatalf("File(File(%q)) = %q, want %q", s, again, name)
		}
		if IsFile(s) && len(s) <= FileMax && File(s, "def") != s {
			t.Fatalf("File changed %q, which already follows the rule", s)
		}
		label := DNSLabel(s)
		if label != "" {
			if errs := validation.IsDNS1123Label(label); len(errs) > 0 || len(label) > DNSLabelMax {
				t.Fatalf("DNSLabel(%q) = %q: %v", s, label, errs)
			}
		}
		if again := DNSLabel(label); again != label {
			t.Fatalf("DNSLabel(DNSLabel(%q)) = %q, want %q", s, again, label)
		}
	})
}
