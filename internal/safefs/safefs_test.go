package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fixture: a folder with a file, a sub-folder, and links that point out of
// the folder, inside it, and nowhere; outside.txt must never change.
func fixture(t *testing.T) (*Dir, string, string) {
	t.Helper()
	base := t.TempDir()
	outside := filepath.Join(base, "outside.txt")
	must(t, os.WriteFile(outside, []byte("precious"), 0o644))
	must(t, os.Mkdir(filepath.Join(base, "outdir"), 0o755))
	dir := filepath.Join(base, "folder")
	must(t, os.Mkdir(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "file"), []byte("content"), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(t, os.Symlink(outside, filepath.Join(dir, "abs-link")))
	must(t, os.Symlink("../outside.txt", filepath.Join(dir, "rel-link")))
	must(t, os.Symlink("file", filepath.Join(dir, "inner-link")))
	must(t, os.Symlink("missing", filepath.Join(dir, "dangling")))
	must(t, os.Symlink("../outdir", filepath.Join(dir, "dirlink")))
	must(t, os.Symlink("sub", filepath.Join(dir, "inner-dirlink")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	d, err := Open(dir)
	must(t, err)
	t.Cleanup(func() { d.Close() })
	return d, dir, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestEveryLinkAndSpecialFileIsRefused(t *testing.T) {
	t.Parallel()
	d, _, outside := fixture(t)
	names := []string{"abs-link", "rel-link", "inner-link", "dangling", "fifo", "dirlink/x", "inner-dirlink/x", "../outside.txt", "/etc/passwd", "sub/../file", "", "."}
	ops := map[string]func(string) error{
		"Open":      func(n string) error { f, err := d.Open(n); closeIf(f); return err },
		"ReadFile":  func(n string) error { _, err := d.ReadFile(n, 100); return err },
		"OpenFile":  func(n string) error { f, err := d.OpenFile(n, os.O_RDWR); closeIf(f); return err },
		"Append":    func(n string) error { f, err := d.Append(n); closeIf(f); return err },
		"Create":    func(n string) error { f, err := d.Create(n); closeIf(f); return err },
		"WriteFile": func(n string) error { return d.WriteFile(n, []byte("x"), nil) },
	}
	for op, fn := range ops {
		for _, n := range names {
			if err := fn(n); err == nil {
				t.Errorf("%s(%q) succeeded", op, n)
			}
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "precious" {
		t.Fatalf("the file outside the folder changed: %q", b)
	}
}

func closeIf(f *os.File) {
	if f != nil {
		f.Close()
	}
}

func TestAtomicWriteReplacesRegularFilesOnly(t *testing.T) {
	t.Parallel()
	d, dir, _ := fixture(t)
	must(t, d.WriteFile("file", []byte("new"), nil))
	must(t, d.WriteFile("sub/new", []byte("fresh"), nil))
	if b, _ := os.ReadFile(filepath.Join(dir, "file")); string(b) != "new" {
		t.Fatalf("file: %q", b)
	}
	a, err := d.CreateAtomic("file")
	must(t, err)
	_, _ = a.Write([]byte("half"))
	a.Abort()
	if b, _ := os.ReadFile(filepath.Join(dir, "file")); string(b) != "new" {
		t.Fatalf("an aborted write changed the file: %q", b)
	}
	for _, sub := range []string{".", "sub"} {
		ents, _ := os.ReadDir(filepath.Join(dir, sub))
		for _, e := range ents {
			if IsTemp(e.Name()) {
				t.Errorf("temporary file left: %s", e.Name())
			}
		}
	}
}

func TestRemoveAllRemovesLinksOnly(t *testing.T) {
	t.Parallel()
	d, dir, outside := fixture(t)
	must(t, os.WriteFile(filepath.Join(filepath.Dir(dir), "outdir", "keep"), []byte("k"), 0o644))
	must(t, d.RemoveAll("dirlink"))
	must(t, d.RemoveAll("abs-link"))
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "outdir", "keep")); err != nil {
		t.Fatal("RemoveAll followed a link out of the folder")
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatal(err)
	}
	if err := d.RemoveAll("../outdir"); err == nil {
		t.Error("removed outside the folder")
	}
}

func TestRegularFilesWork(t *testing.T) {
	t.Parallel()
	d, _, _ := fixture(t)
	b, err := d.ReadFile("file", 7)
	if err != nil || string(b) != "content" {
		t.Fatal(b, err)
	}
	if _, err := d.ReadFile("file", 6); !errors.Is(err, ErrRefused) {
		t.Errorf("a file over the limit was read: %v", err)
	}
	must(t, d.Mkdir("sub", true))
	if err := d.Mkdir("sub", false); err == nil {
		t.Error("Mkdir over an existing folder")
	}
	if err := d.Mkdir("inner-dirlink", true); !errors.Is(err, ErrRefused) {
		t.Errorf("Mkdir accepted a link as a folder: %v", err)
	}
	f, err := d.Append("sub/log")
	must(t, err)
	_, _ = f.WriteString("1\n")
	f.Close()
	f, err = d.Append("sub/log")
	must(t, err)
	_, _ = f.WriteString("2\n")
	f.Close()
	if b, _ := d.ReadFile("sub/log", 10); string(b) != "1\n2\n" {
		t.Errorf("append: %q", b)
	}
	if _, err := d.Open("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	s, err := d.Sub("sub")
	must(t, err)
	defer s.Close()
	if _, err := d.Sub("inner-dirlink"); err == nil {
		t.Error("Sub followed a link")
	}
}

// TestMissingFileSaysWhichInPlainWords: a file or folder that is not there
// is named with the folder's path and the call's plain name, still
// fs.ErrNotExist ("statat runs: no such file or directory" said neither).
func TestMissingFileSaysWhichInPlainWords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, name := range []string{"missing/requests.csv.gz", "runs/r1/requests.csv.gz", "runs/gone.csv"} {
		_, err := d.Open(name)
		var pe *fs.PathError
		if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
			t.Fatalf("%s: %v", name, err)
		}
		if pe.Op != "stat" || !strings.HasPrefix(pe.Path, dir+string(filepath.Separator)) || strings.Contains(err.Error(), "statat") {
			t.Errorf("%s: %q", name, err)
		}
	}
}
