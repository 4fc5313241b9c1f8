package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// engineSearch is a search in a sandbox: tokex at dir/bin/tokex, run from
// a module checkout at dir/src (when fromSource), building into
// dir/state; builds counts the builds.
func engineSearch(t *testing.T, fromSource bool, builds *int) EngineSearch {
	t.Helper()
	dir := t.TempDir()
	self := filepath.Join(dir, "bin", "tokex")
	writeExe(t, self, "tokex binary")
	src := filepath.Join(dir, "src")
	writeFile(t, filepath.Join(src, "go.mod"), "module "+modulePath+"\n\ngo 1.26\n")
	writeFile(t, filepath.Join(src, "cmd", EngineName, "main.go"), "package main\n")
	s := EngineSearch{
		Self: self, SelfArgs: []string{EngineArg}, WorkDir: filepath.Join(src, "runner"),
		StateDir: filepath.Join(dir, "state"), Go: "/nonexistent/go",
		Build: &debug.BuildInfo{Main: debug.Module{Path: "example.com/other", Version: "v1.0.0"}},
		build: func(_ context.Context, goCmd, root, out string) error {
			*builds++
			if root != src {
				t.Errorf("built in %s, want %s", root, src)
			}
			return os.WriteFile(out, []byte("engine"), 0o755)
		},
	}
	if fromSource {
		s.Build.Main = debug.Module{Path: modulePath, Version: "(devel)"}
	}
	return s
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeExe(t *testing.T, path, body string) {
	writeFile(t, path, body)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestFindEngineOrder: an explicit path, then tokex-engine beside tokex,
// then one built once from the module source, then tokex itself flagged
// Inflated.
func TestFindEngineOrder(t *testing.T) {
	ctx := context.Background()
	t.Run("explicit", func(t *testing.T) {
		var builds int
		s := engineSearch(t, true, &builds)
		s.Explicit = filepath.Join(t.TempDir(), "my-engine")
		writeExe(t, s.Explicit, "x")
		writeExe(t, filepath.Join(filepath.Dir(s.Self), EngineName), "x")
		e, err := FindEngine(ctx, s)
		if err != nil || e.Path != s.Explicit || e.Inflated || builds != 0 {
			t.Fatalf("%+v %v builds %d", e, err, builds)
		}
		s.Explicit = filepath.Join(t.TempDir(), "absent")
		if _, err := FindEngine(ctx, s); err == nil {
			t.Error("an explicit engine that does not exist was accepted")
		}
		writeFile(t, s.Explicit, "not executable")
		if _, err := FindEngine(ctx, s); err == nil || !strings.Contains(err.Error(), "not an executable") {
			t.Errorf("non-executable explicit engine: %v", err)
		}
	})
	t.Run("beside", func(t *testing.T) {
		var builds int
		s := engineSearch(t, true, &builds)
		beside := filepath.Join(filepath.Dir(s.Self), EngineName)
		writeExe(t, beside, "x")
		if e, err := FindEngine(ctx, s); err != nil || e.Path != beside || e.Inflated || builds != 0 {
			t.Fatalf("%+v %v builds %d", e, err, builds)
		}
	})
	t.Run("source", func(t *testing.T) {
		var builds int
		s := engineSearch(t, true, &builds)
		stale := filepath.Join(s.StateDir, EngineName+"-0000000000000000")
		writeExe(t, stale, "an older build")
		e, err := FindEngine(ctx, s)
		if err != nil || e.Inflated || filepath.Dir(e.Path) != s.StateDir || builds != 1 {
			t.Fatalf("%+v %v builds %d", e, err, builds)
		}
		again, err := FindEngine(ctx, s)
		if err != nil || again.Path != e.Path || builds != 1 {
			t.Errorf("second search: %+v %v builds %d (want the same binary, built once)", again, err, builds)
		}
		if _, err := os.Stat(stale); !os.IsNotExist(err) {
			t.Errorf("an older build was kept: %v", err)
		}
		// Another tokex build gets its own engine.
		writeExe(t, s.Self, "another tokex binary")
		other, err := FindEngine(ctx, s)
		if err != nil || other.Path == e.Path || builds != 2 {
			t.Errorf("after a rebuild of tokex: %+v %v builds %d", other, err, builds)
		}
	})
	t.Run("self", func(t *testing.T) {
		var builds int
		s := engineSearch(t, false, &builds)
		e, err := FindEngine(ctx, s)
		if err != nil || e.Path != s.Self || !e.Inflated || strings.Join(e.Args, " ") != EngineArg || builds != 0 {
			t.Fatalf("%+v %v builds %d", e, err, builds)
		}
		if !strings.Contains(e.How, "not run from its module source") {
			t.Errorf("how: %q", e.How)
		}
		s.SelfArgs = nil // a program without an engine mode
		if _, err := FindEngine(ctx, s); err == nil {
			t.Error("no engine and no engine mode: found one")
		}
	})
	t.Run("build fails", func(t *testing.T) {
		var builds int
		s := engineSearch(t, true, &builds)
		s.build = func(context.Context, string, string, string) error { return errors.New("compiler on fire") }
		e, err := FindEngine(ctx, s)
		if err != nil || !e.Inflated || !strings.Contains(e.How, "compiler on fire") {
			t.Fatalf("%+v %v", e, err)
		}
		if left, _ := filepath.Glob(filepath.Join(s.StateDir, "*"+EngineName+"*")); len(left) != 0 {
			t.Errorf("a failed build left %v", left)
		}
	})
	t.Run("outside the module", func(t *testing.T) {
		var builds int
		s := engineSearch(t, true, &builds)
		s.WorkDir = t.TempDir()
		if e, err := FindEngine(ctx, s); err != nil || !e.Inflated || builds != 0 || !strings.Contains(e.How, "module source") {
			t.Fatalf("%+v %v builds %d", e, err, builds)
		}
	})
}
