package layout

import (
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/internal/gosrc"
)

const module = "github.com/tokex-dev/tokex/"

var update = flag.Bool("update", false, "rewrite the generated diagrams in README.md and docs/layout.md")

func root(t *testing.T) string {
	t.Helper()
	dir, err := gosrc.Root("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func top(rel string) string {
	first, _, _ := strings.Cut(rel, "/")
	return first
}

func find(rules []rule, from string) (rule, bool) {
	i := slices.IndexFunc(rules, func(r rule) bool { return r.from == from })
	if i < 0 {
		return rule{}, false
	}
	return rules[i], true
}

// check parses every Go file under base (a module laid out like tokex's)
// and returns each import that breaks a rule, and how many files it read.
func check(base string) ([]string, int, error) {
	var bad []string
	seen := 0
	err := gosrc.Files(base, func(rel string) error {
		rel = filepath.ToSlash(rel)
		pkg, test := path.Dir(rel), strings.HasSuffix(rel, "_test.go")
		if top(rel) == "cmd" || test && strings.HasSuffix(pkg, "/e2e") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(base, rel), nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		seen++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if to, ok := strings.CutPrefix(p, module); ok {
				bad = append(bad, judge(rel, pkg, to, test)...)
			}
		}
		return nil
	})
	return bad, seen, err
}

// judge is what is wrong with package pkg (file rel) importing package to.
func judge(rel, pkg, to string, test bool) []string {
	if to == pkg {
		return nil // an external test package
	}
	from := top(pkg)
	fr, ok := find(folders, from)
	if !ok {
		return []string{fmt.Sprintf("%s: top-level folder %q has no import rule (add it to internal/layout)", rel, from)}
	}
	if !fr.anything && top(to) != from && !slices.Contains(fr.may, top(to)) {
		return []string{fmt.Sprintf("%s imports %s: %s/ may import only %v", rel, to, from, fr.may)}
	}
	if !slices.Contains(layered, from) || top(to) == "internal" && from != "internal" {
		return nil
	}
	pr, ok := find(packages, pkg)
	if !ok {
		return []string{fmt.Sprintf("%s: package %s has no import rule (add it to internal/layout, then -update)", rel, pkg)}
	}
	if slices.Contains(pr.may, to) || test && slices.Contains(pr.tests, to) {
		return nil
	}
	what := " may import only"
	if test {
		what = "'s tests may import only"
	}
	return []string{fmt.Sprintf("%s imports %s: %s%s %v", rel, to, pkg, what, append(append([]string{}, pr.may...), pr.tests...))}
}

func TestImportsPointOneWay(t *testing.T) {
	t.Parallel()
	bad, seen, err := check(root(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
	if seen < 50 {
		t.Fatalf("checked only %d files: is the walk rooted at the repository?", seen)
	}
}

// TestRuleCatchesWrongImport keeps the check honest: the walker, run over
// a module of a few files each breaking a rule (and one keeping them),
// reports each, and only them.
func TestRuleCatchesWrongImport(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	write := func(rel, pkg string, imports ...string) {
		t.Helper()
		src := "package " + pkg + "\n\nimport (\n"
		for _, i := range imports {
			src += "\t_ \"" + module + i + "\"\n"
		}
		src += ")\n"
		if err := os.MkdirAll(filepath.Join(base, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, rel), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("collector/stats/ok.go", "stats", "collector/curve", "internal/lines")
	write("collector/stats/bad.go", "stats", "collector/doc")           // statistics under presentation
	write("runner/config/bad.go", "config", "collector/evidence")       // allowed folder, forbidden package
	write("collector/event/bad.go", "event", "runner")                  // a folder against the graph
	write("runner/local/bad.go", "local", "runner/local/localtest")     // a test helper outside tests
	write("runner/local/ok_test.go", "local", "runner/local/localtest") // ... in tests
	write("collector/newpkg/x.go", "newpkg", "collector/stats")         // a package with no rule
	write("tui/e2e/any_test.go", "e2e", "runner", "cmd/tokex/cli")      // end-to-end suites are exempt
	write("internal/lines/bad.go", "lines", "internal/jose")            // internal has rules too
	write("collector/sample/bad.go", "sample", "collector/stats")       // a leaf: readings under statistics
	bad, seen, err := check(base)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"collector/event/bad.go imports runner",
		"collector/newpkg/x.go: package collector/newpkg has no import rule",
		"collector/sample/bad.go imports collector/stats",
		"collector/stats/bad.go imports collector/doc",
		"internal/lines/bad.go imports internal/jose",
		"runner/config/bad.go imports collector/evidence",
		"runner/local/bad.go imports runner/local/localtest",
	}
	slices.Sort(bad)
	if len(bad) != len(want) || seen != 9 {
		t.Fatalf("%d files, reported:\n%s\nwant:\n%s", seen, strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(bad[i], w) {
			t.Errorf("reported %q, want %q…", bad[i], w)
		}
	}
}

// TestRulesAgree: a package's rule stays within its folder's, names only
// packages that exist, and every layered package appears once.
func TestRulesAgree(t *testing.T) {
	t.Parallel()
	base := root(t)
	seen := map[string]bool{}
	for _, p := range packages {
		if seen[p.from] {
			t.Errorf("%s has two rules", p.from)
		}
		seen[p.from] = true
		fr, _ := find(folders, top(p.from))
		for _, to := range append(append([]string{}, p.may...), p.tests...) {
			if top(to) != top(p.from) && !slices.Contains(fr.may, top(to)) {
				t.Errorf("%s may import %s, which its folder's rule forbids", p.from, to)
			}
			if _, err := os.Stat(filepath.Join(base, to)); err != nil {
				t.Errorf("%s may import %s: %v", p.from, to, err)
			}
		}
		if _, err := os.Stat(filepath.Join(base, p.from)); err != nil {
			t.Errorf("rule for %s: %v", p.from, err)
		}
	}
}

// TestDiagramsAreTheRules: README.md's layout graph and docs/layout.md's
// per-package rules are generated from the rules above (go test
// ./internal/layout -update writes them).
func TestDiagramsAreTheRules(t *testing.T) {
	base := root(t)
	for _, d := range []struct{ file, name, body string }{
		{"README.md", "folders", drawFolders()},
		{"docs/layout.md", "packages", drawPackages()},
	} {
		file := filepath.Join(base, d.file)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		begin, end := "<!-- layout:"+d.name+" (generated by internal/layout) -->\n```\n", "```\n<!-- /layout:"+d.name+" -->"
		i, j := strings.Index(string(b), begin), strings.Index(string(b), end)
		if i < 0 || j < i {
			t.Fatalf("%s: no %q … %q block", d.file, begin, end)
		}
		got := string(b[i+len(begin) : j])
		if got == d.body {
			continue
		}
		if !*update {
			t.Errorf("%s's %s diagram is not the rules (go test ./internal/layout -update):\n got:\n%s\nwant:\n%s", d.file, d.name, got, d.body)
			continue
		}
		out := string(b[:i+len(begin)]) + d.body + string(b[j:])
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func drawFolders() string {
	var b strings.Builder
	for _, r := range folders {
		fmt.Fprintf(&b, "%-10s ──▶ %s\n", r.from, mayText(r))
	}
	return b.String()
}

func drawPackages() string {
	var b strings.Builder
	for i, r := range packages {
		if i > 0 && top(r.from) != top(packages[i-1].from) {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%-22s ──▶ %s\n", r.from, mayText(r))
	}
	return b.String()
}

func mayText(r rule) string {
	s := strings.Join(r.may, ", ")
	switch {
	case r.anything:
		s = "anything"
	case s == "":
		s = "nothing of tokex"
	}
	if len(r.tests) > 0 {
		s += "; its tests also " + strings.Join(r.tests, ", ")
	}
	return s
}
