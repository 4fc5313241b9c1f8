// Package gosrc walks the module's own Go files, for the tests that hold
// the repository to its structure (internal/layout, internal/funclen).
package gosrc

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Root is dir made absolute, checked to be the module's root (it holds
// go.mod).
func Root(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("repository root not found: %w", err)
	}
	return dir, nil
}

// Files calls fn with the path, relative to root, of every .go file of the
// module: hidden folders, testdata and nested modules (the e2e control
// plane's tools) are left out.
func Files(root string, fn func(rel string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		return fn(rel)
	})
}
