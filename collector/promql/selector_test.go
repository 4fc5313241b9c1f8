package promql

import (
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{`process_cpu_seconds_total`, `process_cpu_seconds_total`},
		{` process_cpu_seconds_total{ job = "tokex-engine" , } `, `process_cpu_seconds_total{job="tokex-engine"}`},
		{`container_cpu_usage_seconds_total{namespace="perf",pod=~"engine-.*",container!="",container!~'POD|'}`,
			`container_cpu_usage_seconds_total{namespace="perf",pod=~"engine-.*",container!="",container!~"POD|"}`},
		{`ns:cpu:rate{a='it\'s "x"'}`, `ns:cpu:rate{a="it's \"x\""}`},
		{"m{a=`raw\\d+`}", `m{a="raw\\d+"}`},
		{`m{a="\u00e9\n"}`, `m{a="é\n"}`},
	} {
		s, err := ParseSelector(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := s.String(); got != tc.out {
			t.Errorf("%s: %s, want %s", tc.in, got, tc.out)
		}
	}
	for _, tc := range []struct{ in, says string }{
		{``, "a metric name"},
		{`{job="x"}`, "a metric name"},
		{`rate(process_cpu_seconds_total[5m])`, "the end of the selector"},
		{`process_cpu_seconds_total[5m]`, "the end of the selector"},
		{`process_cpu_seconds_total offset 5m`, "the end of the selector"},
		{`sum(process_cpu_seconds_total)`, "the end of the selector"},
		{`m{job}`, "=, !=, =~ or !~"},
		{`m{job="x"`, ", or }"},
		{`m{job="x}`, "not closed"},
		{`m{job=x}`, "a quoted value"},
		{`m{1a="x"}`, "a label name"},
		{`m{a="\q"}`, "invalid syntax"},
		{`m{` + strings.Repeat(`a="x",`, MaxMatchers+1) + `}`, "more than 32"},
		{strings.Repeat("m", MaxSelectorBytes+1), "longer than"},
		{`m{a="x"} or m2`, "the end of the selector"},
	} {
		if _, err := ParseSelector(tc.in); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%.40s: %v, want an error saying %q", tc.in, err, tc.says)
		}
	}
}

// FuzzParseSelector: no panic, and what is accepted renders to a selector
// that reads back the same (tokex puts it into the queries it sends).
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{`process_cpu_seconds_total{job="tokex-engine"}`, `m{a=~'x|y',b!="",c!~` + "`z`" + `}`, `m{a="\x00\u2028"}`, `{}`, `m{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSelector(in)
		if err != nil {
			return
		}
		again, err := ParseSelector(s.String())
		if err != nil {
			t.Fatalf("%q renders as %q, which does not parse: %v", in, s.String(), err)
		}
		if again.String() != s.String() {
			t.Fatalf("%q: %q then %q", in, s.String(), again.String())
		}
	})
}
