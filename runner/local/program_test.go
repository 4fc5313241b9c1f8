package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// programSearch is a search in a sandbox: tokex at dir/bin/tokex.
func programSearch(t *testing.T) ProgramSearch {
	t.Helper()
	self := filepath.Join(t.TempDir(), "bin", "tokex")
	writeExe(t, self, "tokex binary")
	return ProgramSearch{Self: self, SelfArgs: []string{ServerArg}}
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

// TestFindServerProgramOrder: an explicit path, then tokex-engine beside tokex,
// then tokex itself flagged Inflated; nothing is ever built.
func TestFindServerProgramOrder(t *testing.T) {
	t.Run("explicit", func(t *testing.T) {
		s := programSearch(t)
		s.Explicit = filepath.Join(t.TempDir(), "my-engine")
		writeExe(t, s.Explicit, "x")
		writeExe(t, filepath.Join(filepath.Dir(s.Self), ServerBinary), "x")
		e, err := FindServerProgram(s)
		if err != nil || e.Path != s.Explicit || e.Inflated {
			t.Fatalf("%+v %v", e, err)
		}
		s.Explicit = filepath.Join(t.TempDir(), "absent")
		if _, err := FindServerProgram(s); err == nil {
			t.Error("an explicit engine that does not exist was accepted")
		}
		writeFile(t, s.Explicit, "not executable")
		if _, err := FindServerProgram(s); err == nil || !strings.Contains(err.Error(), "not an executable") {
			t.Errorf("non-executable explicit engine: %v", err)
		}
	})
	t.Run("beside", func(t *testing.T) {
		s := programSearch(t)
		beside := filepath.Join(filepath.Dir(s.Self), ServerBinary)
		writeExe(t, beside, "x")
		if e, err := FindServerProgram(s); err != nil || e.Path != beside || e.Inflated {
			t.Fatalf("%+v %v", e, err)
		}
	})
	t.Run("beside but not executable", func(t *testing.T) {
		s := programSearch(t)
		writeFile(t, filepath.Join(filepath.Dir(s.Self), ServerBinary), "x")
		if e, err := FindServerProgram(s); err != nil || e.Path != s.Self || !e.Inflated {
			t.Fatalf("%+v %v", e, err)
		}
	})
	t.Run("self", func(t *testing.T) {
		s := programSearch(t)
		e, err := FindServerProgram(s)
		if err != nil || e.Path != s.Self || !e.Inflated || strings.Join(e.Args, " ") != ServerArg {
			t.Fatalf("%+v %v", e, err)
		}
		if !strings.Contains(e.How, "no "+ServerBinary+" beside it") {
			t.Errorf("how: %q", e.How)
		}
		s.SelfArgs = nil // a program without an engine mode
		if _, err := FindServerProgram(s); err == nil {
			t.Error("no program and no engine mode: found one")
		}
	})
}
