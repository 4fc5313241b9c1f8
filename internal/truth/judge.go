package truth

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Prefix names the truth tests: scripts/test selects them with -run '^TestTruth'.
const Prefix = "TestTruth"

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// Verdict is what the truth tests of one package did.
type Verdict struct {
	Package string
	// Judged are the leaf tests (no subtests) that ran to a pass or a
	// failure; Skipped those that were skipped, Unavailable those skipped
	// because what they need is not on this machine (Unavailable).
	Judged, Skipped, Unavailable []string
}

// Judge reads the `go test -json` output of the truth step from r, copies
// the tests' own output to w as it comes (what go test -v prints), and
// returns per package what its truth tests did. It returns an error naming
// every package of the input whose truth measurements were all skipped (a
// busy host: a step that judged nothing must not pass). A package without
// truth tests (go test ./runner/local/... names some), or whose tests need
// what this machine lacks (Unavailable), is listed as such. Lines that are
// not test2json events are copied as they are.
func Judge(r io.Reader, w io.Writer) ([]Verdict, error) {
	final := map[string]map[string]string{} // package → test → last action
	unavailable := map[string]bool{}        // "package test" that said UnavailableMark
	var pkgs []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		if e.Output != "" {
			fmt.Fprint(w, e.Output)
			if strings.Contains(e.Output, UnavailableMark) {
				unavailable[e.Package+" "+e.Test] = true
			}
		}
		if e.Package == "" {
			continue
		}
		if final[e.Package] == nil {
			final[e.Package] = map[string]string{}
			pkgs = append(pkgs, e.Package)
		}
		if e.Test != "" && strings.HasPrefix(e.Test, Prefix) {
			switch e.Action {
			case "pass", "fail", "skip":
				final[e.Package][e.Test] = e.Action
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading go test -json: %w", err)
	}
	var out []Verdict
	var none []string
	for _, p := range pkgs {
		v := verdict(p, final[p], func(test string) bool { return unavailable[p+" "+test] })
		out = append(out, v)
		if len(v.Judged) == 0 && len(v.Skipped) > 0 {
			none = append(none, p)
		}
	}
	if len(none) > 0 {
		return out, fmt.Errorf("no truth test judged anything in %s: every measurement was skipped (their reasons are above)", strings.Join(none, ", "))
	}
	return out, nil
}

// verdict sorts a package's leaf tests: a test with subtests is judged by
// them (a parent passes when all its subtests skipped).
func verdict(pkg string, tests map[string]string, unavailable func(test string) bool) Verdict {
	v := Verdict{Package: pkg}
	for name, action := range tests {
		leaf := true
		for other := range tests {
			if strings.HasPrefix(other, name+"/") {
				leaf = false
				break
			}
		}
		switch {
		case !leaf:
		case action == "skip" && unavailable(name):
			v.Unavailable = append(v.Unavailable, name)
		case action == "skip":
			v.Skipped = append(v.Skipped, name)
		default:
			v.Judged = append(v.Judged, name)
		}
	}
	slices.Sort(v.Judged)
	slices.Sort(v.Skipped)
	slices.Sort(v.Unavailable)
	return v
}

// Line is the verdict in one line: "ok   pkg: 3 judged, 1 skipped (TestTruthX)".
func (v Verdict) Line() string {
	mark := "ok  "
	switch {
	case len(v.Judged)+len(v.Skipped)+len(v.Unavailable) == 0:
		return "--   " + v.Package + ": no truth tests"
	case len(v.Judged)+len(v.Skipped) == 0:
		mark = "--  "
	case len(v.Judged) == 0:
		mark = "NONE"
	}
	s := fmt.Sprintf("%s %s: %d judged, %d skipped", mark, v.Package, len(v.Judged), len(v.Skipped))
	if len(v.Skipped) > 0 {
		s += " (" + strings.Join(v.Skipped, ", ") + ")"
	}
	if len(v.Unavailable) > 0 {
		s += fmt.Sprintf(", %d not run here: what they need is missing (%s)", len(v.Unavailable), strings.Join(v.Unavailable, ", "))
	}
	return s
}
