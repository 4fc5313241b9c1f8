package layout

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/internal/gosrc"
)

const module = "github.com/tokex-dev/tokex/"

// allowed lists, per top-level folder, the top-level folders its packages may
// import (besides their own). README.md draws the same graph; cmd may import
// anything. Test files follow the same rules, except end-to-end suites.
var allowed = map[string][]string{
	"internal":   {},
	"bench":      {}, // standalone tools of the bench/ scripts
	"exchange":   {"internal"},
	"subject":    {"internal"},
	"authserver": {"exchange", "subject", "internal"},
	"charts":     {},
	"collector":  {"charts", "exchange", "internal"},
	"runner":     {"collector", "authserver", "exchange", "subject", "internal"},
	"tui":        {"collector", "charts", "internal"},
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := gosrc.Root("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func top(rel string) string {
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first
}

func TestImportsPointOneWay(t *testing.T) {
	t.Parallel()
	base := root(t)
	seen := 0
	err := gosrc.Files(base, func(rel string) error {
		path := filepath.Join(base, rel)
		from := top(rel)
		if from == "cmd" || strings.HasSuffix(filepath.Dir(rel), "/e2e") && strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		rules, ok := allowed[from]
		if !ok {
			t.Errorf("%s: top-level folder %q has no import rule (add it here and to README.md)", rel, from)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		seen++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, module) {
				continue
			}
			to := top(strings.TrimPrefix(p, module))
			if to != from && !slices.Contains(rules, to) {
				t.Errorf("%s imports %s: %s/ may import only %v", rel, p, from, rules)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 50 {
		t.Fatalf("checked only %d files: is the walk rooted at the repository?", seen)
	}
}

// TestRuleCatchesWrongImport keeps the check honest: a file that breaks a
// rule must be reported.
func TestRuleCatchesWrongImport(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ from, to string }{
		{"collector", "runner"}, {"authserver", "runner"}, {"tui", "runner"}, {"exchange", "collector"},
	} {
		if slices.Contains(allowed[c.from], c.to) {
			t.Errorf("%s may import %s: the layering says it must not", c.from, c.to)
		}
	}
}
