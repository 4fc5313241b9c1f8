package funclen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/internal/gosrc"
)

// maxLines is the longest a function may be, from its "func" line to its
// closing brace inclusive.
const maxLines = 80

// generated is the marker of generated files (https://go.dev/s/generatedcode).
var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

func root(t *testing.T) string {
	t.Helper()
	dir, err := gosrc.Root("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// lengths returns the length of every function (and package-level function
// literal) in the non-test, non-generated Go files under base, keyed by
// "dir Recv.Name".
func lengths(t *testing.T, base string) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := gosrc.Files(base, func(rel string) error {
		if strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		path := filepath.Join(base, rel)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated.Match(src) {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for name, n := range funcs(fset, f) {
			out[filepath.ToSlash(filepath.Dir(rel))+" "+name] = n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// funcs measures the declared functions of f and the function literals
// outside them (package-level variables).
func funcs(fset *token.FileSet, f *ast.File) map[string]int {
	out := map[string]int{}
	span := func(n ast.Node) int {
		return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = recv(d.Recv.List[0].Type) + "." + name
			}
			if name == "init" || name == "_" {
				name = fmt.Sprintf("%s@%d", name, fset.Position(d.Pos()).Line)
			}
			out[name] = span(d)
		case *ast.GenDecl:
			ast.Inspect(d, func(n ast.Node) bool {
				lit, ok := n.(*ast.FuncLit)
				if !ok {
					return true
				}
				out[fmt.Sprintf("func@%d", fset.Position(lit.Pos()).Line)] = span(lit)
				return false
			})
		}
	}
	return out
}

func recv(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recv(t.X)
	case *ast.IndexExpr:
		return recv(t.X)
	case *ast.IndexListExpr:
		return recv(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

func TestNoLongFunctions(t *testing.T) {
	t.Parallel()
	got := lengths(t, root(t))
	if len(got) < 500 {
		t.Fatalf("measured only %d functions: is the walk rooted at the repository?", len(got))
	}
	var long []string
	for name, n := range got {
		if n > maxLines {
			long = append(long, fmt.Sprintf("%s: %d lines", name, n))
		}
	}
	sort.Strings(long)
	for _, l := range long {
		t.Errorf("function over %d lines (split it into steps named for what they do): %s", maxLines, l)
	}
}

// TestMeasure keeps the measure honest: a function's length runs from its
// "func" line to its closing brace, methods are named by receiver, and
// package-level function literals count too.
func TestMeasure(t *testing.T) {
	t.Parallel()
	src := `package p

type T[K any] struct{}

func (t *T[K]) M() {
	_ = 1
}

func F() {}

var v = func() int {
	return 1
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := funcs(fset, f)
	want := map[string]int{"T.M": 3, "F": 1, "func@11": 3}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("funcs = %v, want %v", got, want)
	}
}
