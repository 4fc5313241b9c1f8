package confload

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type cfg struct {
	Name  string        `yaml:"name"`
	Wait  time.Duration `yaml:"wait"`
	Items []struct {
		Rate float64 `yaml:"rate"`
	} `yaml:"items"`
	Nested struct {
		Count int `yaml:"count"`
	} `yaml:"nested"`
}

func TestErrorsNameFileLineField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		yaml string
		want []string
	}{
		{"name: x\nbogus: 1\n", []string{"c.yaml:2: bogus: unknown field \"bogus\""}},
		{"nested:\n  count: many\n", []string{"c.yaml:2: nested.count:", "cannot unmarshal"}},
		{"wait: soon\n", []string{"c.yaml:1: wait:"}},
		{"items:\n  - rate: 1\n  - rate: x\n", []string{"c.yaml:3: items[1].rate:"}},
		{"name: [\n", []string{"c.yaml:"}},
	}
	for _, c := range cases {
		d, err := Parse("c.yaml", []byte(c.yaml))
		if err == nil {
			var v cfg
			err = d.Decode(&v)
		}
		if err == nil {
			t.Errorf("%q: no error", c.yaml)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %q lacks %q", c.yaml, err, w)
			}
		}
	}
	d, _ := Parse("c.yaml", []byte("name: x\nitems:\n  - rate: 1\n  - rate: 2\n"))
	if e := d.Errorf("items[1].rate", "too big"); e.Error() != "c.yaml:4: items[1].rate: too big" {
		t.Errorf("Errorf = %q", e)
	}
	if e := d.Errorf("wait", "missing"); e.Error() != "c.yaml: wait: missing" {
		t.Errorf("Errorf for an unwritten field = %q", e)
	}
	var nilDoc *Doc
	if e := nilDoc.Errorf("stages", "bad"); !strings.Contains(e.Error(), "stages: bad") {
		t.Errorf("nil doc: %q", e)
	}
}

// TestNonFiniteNumbersRefused is issue 9 item 22: .nan passed every range
// check (all comparisons with NaN are false) and failed later without a
// file, line or field.
func TestNonFiniteNumbersRefused(t *testing.T) {
	t.Parallel()
	cases := []struct{ yaml, want string }{
		{"items:\n  - rate: 1\n  - rate: .nan\n", "c.yaml:3: items[1].rate: .nan is not a finite number"},
		{"items: [1, .NaN]\n", "c.yaml:1: items[1]"},
		{"items:\n  - rate: .inf\n", "c.yaml:2: items[0].rate: .inf is not a finite number"},
		{"items:\n  - rate: -.Inf\n", "c.yaml:2: items[0].rate"},
		{"items:\n  - rate: +.INF\n", "c.yaml:2: items[0].rate"},
		{"items:\n  - rate: !!float .nan\n", "c.yaml:2: items[0].rate"},
	}
	for _, c := range cases {
		_, err := Parse("c.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.yaml, err, c.want)
		}
	}
	for _, ok := range []string{"name: \".nan\"\n", "items:\n  - rate: 1e300\n", "name: NaN\n"} {
		if _, err := Parse("c.yaml", []byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func TestReadFileIsBounded(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "big.yaml")
	_ = os.WriteFile(p, []byte("name: "+strings.Repeat("x", MaxFileBytes)+"\n"), 0o600)
	if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), "big.yaml: larger than 1 MiB") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: larger than 1 MiB") {
			t.Fatalf("/dev/zero: err = %v", err)
		}
	}
}

// FuzzParse: no YAML panics the parser, and what it accepts holds no
// non-finite number anywhere.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"stages: [100, 250]\n", "a: .nan\n", "a: [1, -.Inf]\n", "a: !!float .NaN\n",
		"a: &x [1]\nb: *x\n", "a:\n  b:\n    - c: 1e308\n", "[\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse("f.yaml", data)
		if err != nil {
			return
		}
		var v any
		if d.Decode(&v) != nil {
			return
		}
		var walk func(any)
		walk = func(x any) {
			switch x := x.(type) {
			case float64:
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("accepted a non-finite number in %q", data)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for _, e := range x {
					walk(e)
				}
			case map[any]any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(v)
	})
}
