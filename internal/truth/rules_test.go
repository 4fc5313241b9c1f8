package truth

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/internal/gosrc"
)

// violations lists where the test functions of one file break the rules
// of the truth gate: a TestTruth… test starts with truth.Require(t); a test
// that calls truth.Require is named TestTruth… (scripts/test selects the
// truth step's tests by name, so another name never runs in CI); and no
// test passes without judging, by logging why it could not and returning
// (it calls t.Skip with the reason instead).
func violations(fset *token.FileSet, f *ast.File) []string {
	var out []string
	at := func(n ast.Node, format string, args ...any) {
		out = append(out, fset.Position(n.Pos()).String()+": "+fmt.Sprintf(format, args...))
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Test") {
			continue
		}
		name := fd.Name.Name
		gated := strings.HasPrefix(name, Prefix)
		if gated && (len(fd.Body.List) == 0 || !isRequire(fd.Body.List[0])) {
			at(fd, "%s does not start with truth.Require(t): it runs in the unit step", name)
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit: // a subtest's body is a test; a goroutine's is not
				return takesT(n.Type)
			case *ast.ExprStmt:
				if !gated && isRequire(n) && !isBareRequire(n) {
					at(n, "%s calls truth.Require but is not named %s…: the truth step (-run '^%s') never runs it", name, Prefix, Prefix)
				}
			case *ast.BlockStmt:
				if logsAndReturns(n) {
					at(n, "%s logs and returns: a pass that judged nothing; call t.Skip with the reason", name)
				}
			}
			return true
		})
	}
	return out
}

// isRequire: the statement is a call of truth.Require (or Require, in
// this package).
func isRequire(s ast.Stmt) bool {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		x, ok := fn.X.(*ast.Ident)
		return ok && x.Name == "truth" && fn.Sel.Name == "Require"
	case *ast.Ident:
		return fn.Name == "Require"
	}
	return false
}

// takesT: the function's one parameter is a *testing.T.
func takesT(ft *ast.FuncType) bool {
	if ft.Params == nil || len(ft.Params.List) != 1 {
		return false
	}
	star, ok := ft.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}

// isBareRequire: Require called in package truth's own tests, which test it.
func isBareRequire(s ast.Stmt) bool {
	_, ok := s.(*ast.ExprStmt).X.(*ast.CallExpr).Fun.(*ast.Ident)
	return ok
}

// logsAndReturns: a block of one or more t.Log/t.Logf calls, then a bare
// return.
func logsAndReturns(b *ast.BlockStmt) bool {
	n := len(b.List)
	if n < 2 {
		return false
	}
	if r, ok := b.List[n-1].(*ast.ReturnStmt); !ok || len(r.Results) > 0 {
		return false
	}
	for _, s := range b.List[:n-1] {
		es, ok := s.(*ast.ExprStmt)
		if !ok {
			return false
		}
		call, ok := es.X.(*ast.CallExpr)
		if !ok {
			return false
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Log" && sel.Sel.Name != "Logf" {
			return false
		}
	}
	return true
}

func parse(t *testing.T, name, src string) (*token.FileSet, *ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	return fset, f
}

// TestRulesCatch: each rule catches what it is for; the first case is the
// shape TestCapacityKnownCost had (issue 31), the last what passes.
func TestRulesCatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, want string
	}{
		{"logs and returns", `func TestCapacityKnownCost(t *testing.T) {
	if why := invalid(); why != "" {
		t.Logf("capacity not judged, the machine set it: %s", why)
		return
	}
	t.Error("judged")
}`, "logs and returns"},
		{"in a subtest", `func TestX(t *testing.T) {
	t.Run("a", func(t *testing.T) { if busy { t.Log("busy"); return } })
}`, "logs and returns"},
		{"in a goroutine", `func TestX(t *testing.T) {
	go func() { if err != nil { t.Log(err); return } }()
	check(t)
}`, ""},
		{"not gated", `func TestTruthX(t *testing.T) {
	measure(t)
}`, "does not start with truth.Require"},
		{"gated late", `func TestTruthX(t *testing.T) {
	p := start(t)
	truth.Require(t)
	_ = p
}`, "does not start with truth.Require"},
		{"misnamed", `func TestCostKnown(t *testing.T) {
	truth.Require(t)
}`, "is not named TestTruth"},
		{"fine", `func TestTruthX(t *testing.T) {
	truth.Require(t)
	if busy() {
		t.Logf("busy")
		t.Skip("busy")
	}
	if err != nil {
		t.Logf("create: %v", err)
		assertWhole(t)
		return
	}
}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fset, f := parse(t, "x_test.go", "package x\n\n"+tc.body+"\n")
			got := strings.Join(violations(fset, f), "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("violations:\n%s\nwant %q", got, tc.want)
			}
		})
	}
}

// TestEveryTestJudgesOrSkips holds the module's tests to the rules.
func TestEveryTestJudgesOrSkips(t *testing.T) {
	t.Parallel()
	base, err := gosrc.Root("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = gosrc.Files(base, func(rel string) error {
		if !strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(base, rel), nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, v := range violations(fset, f) {
			t.Error(strings.TrimPrefix(v, base+string(filepath.Separator)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d test files found under %s", files, base)
	}
}
