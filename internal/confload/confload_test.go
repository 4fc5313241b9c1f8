package confload

import (
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
