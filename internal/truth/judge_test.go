package truth

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// stream is `go test -json` output: one event per "pkg test action"
// (test may be "-" for a package event).
func stream(t *testing.T, events ...string) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range events {
		f := strings.Fields(ev)
		e := map[string]string{"Package": f[0], "Action": f[2]}
		if f[1] != "-" {
			e["Test"] = f[1]
		}
		if f[2] == "output" {
			e["Output"] = strings.Join(f[3:], " ") + "\n"
		}
		j, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestJudge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		in      []string
		judged  map[string][]string // package → judged leaves
		failPkg string              // named in the error; "" no error
	}{
		{"one judged, one skipped", []string{
			"a TestTruthX run", "a TestTruthX pass", "a TestTruthY run", "a TestTruthY skip", "a - pass",
		}, map[string][]string{"a": {"TestTruthX"}}, ""},
		{"all skipped fails", []string{
			"a TestTruthX run", "a TestTruthX output --- SKIP: TestTruthX (0.00s)", "a TestTruthX skip", "a - pass",
			"b TestTruthZ run", "b TestTruthZ pass", "b - pass",
		}, map[string][]string{"b": {"TestTruthZ"}}, "a"},
		{"a failure judged", []string{"a TestTruthX run", "a TestTruthX fail", "a - fail"}, map[string][]string{"a": {"TestTruthX"}}, ""},
		{"parent passes, subtests all skipped", []string{
			"a TestTruthX run", "a TestTruthX/one run", "a TestTruthX/one skip", "a TestTruthX/two skip", "a TestTruthX pass", "a - pass",
		}, nil, "a"},
		{"one subtest judged", []string{
			"a TestTruthX/one skip", "a TestTruthX/two pass", "a TestTruthX pass", "a - pass",
		}, map[string][]string{"a": {"TestTruthX/two"}}, ""},
		{"a package without truth tests", []string{"a - output testing: warning: no tests to run", "a - pass", "b TestTruthX pass", "b - pass"},
			map[string][]string{"b": {"TestTruthX"}}, ""},
		{"other tests do not count", []string{"a TestOther pass", "a TestTruthX skip", "a - pass"}, nil, "a"},
		// A test whose tool is missing is not a measurement a busy host
		// spoilt: alone it fails nothing, beside a noise skip it excuses none.
		{"unavailable here", []string{"a TestTruthX output x_test.go:9: " + UnavailableMark + "prometheus is not installed", "a TestTruthX skip", "a - pass"}, nil, ""},
		{"unavailable beside a noise skip", []string{"a TestTruthX output " + UnavailableMark + "no node", "a TestTruthX skip", "a TestTruthY skip", "a - pass"}, nil, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			vs, err := Judge(strings.NewReader(stream(t, tc.in...)), &out)
			if (err != nil) != (tc.failPkg != "") || err != nil && !strings.Contains(err.Error(), " "+tc.failPkg) {
				t.Errorf("err %v, want one naming %q", err, tc.failPkg)
			}
			for _, v := range vs {
				if !slices.Equal(v.Judged, tc.judged[v.Package]) {
					t.Errorf("%s judged %v, want %v", v.Package, v.Judged, tc.judged[v.Package])
				}
			}
		})
	}
}

// TestJudgeCopiesTheOutput: the step's log reads like go test -v, with
// lines that are not events (a build failure on stderr merged in) kept.
func TestJudgeCopiesTheOutput(t *testing.T) {
	t.Parallel()
	in := "# pkg\nbuild error\n" + stream(t, "a TestTruthX output === RUN TestTruthX", "a TestTruthX output measured 3.1 ms", "a TestTruthX pass")
	var out strings.Builder
	vs, err := Judge(strings.NewReader(in), &out)
	if err != nil || len(vs) != 1 {
		t.Fatalf("%v %+v", err, vs)
	}
	if want := "# pkg\nbuild error\n=== RUN TestTruthX\nmeasured 3.1 ms\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	if got := vs[0].Line(); got != "ok   a: 1 judged, 0 skipped" {
		t.Errorf("line %q", got)
	}
	vs, _ = Judge(strings.NewReader(stream(t, "b - pass")), &out)
	if got := vs[0].Line(); got != "--   b: no truth tests" {
		t.Errorf("line %q", got)
	}
	vs, _ = Judge(strings.NewReader(stream(t, "c TestTruthP output "+UnavailableMark+"no prometheus", "c TestTruthP skip")), &out)
	if got := vs[0].Line(); got != "--   c: 0 judged, 0 skipped, 1 not run here: what they need is missing (TestTruthP)" {
		t.Errorf("line %q", got)
	}
}
