// Package safefs reads and writes inside one folder that may have been
// prepared by an adversary. Names are relative paths of clean elements; no
// component may be a symbolic link (os.Root already refuses links that leave
// the folder; this refuses the ones inside it too); only regular files are
// opened; and whole files are replaced through a new temporary file and a
// rename inside the folder, so nothing is ever written through a link.
package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrRefused marks a path refused for what it is (a link, a device, a
// folder where a file belongs, a name leaving the folder).
var ErrRefused = errors.New("refused")

// TempMarker is part of every temporary file's name (".NAME.tmp-RANDOM").
const TempMarker = ".tmp-"

// Dir is an opened folder.
type Dir struct {
	root *os.Root
	path string
}

// Open opens the folder at path (path itself may be a link: it is the
// caller's argument, not the folder's content).
func Open(path string) (*Dir, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: not a directory", ErrRefused)}
	}
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r, path: path}, nil
}

// Close releases the folder.
func (d *Dir) Close() error { return d.root.Close() }

// Path is the folder's path as given to Open.
func (d *Dir) Path() string { return d.path }

// Join is the path of name for messages.
func (d *Dir) Join(name string) string { return filepath.Join(d.path, name) }

func (d *Dir) refuse(name, why string) error {
	return &fs.PathError{Op: "open", Path: d.Join(name), Err: fmt.Errorf("%w: %s", ErrRefused, why)}
}

// lstat checks that name is a clean relative path whose folders are real
// folders, and returns name's own Lstat (fs.ErrNotExist when missing).
func (d *Dir) lstat(name string) (fs.FileInfo, error) {
	if name == "" || !filepath.IsLocal(name) || filepath.Clean(name) != name {
		return nil, d.refuse(name, "not a path inside the folder")
	}
	parts := strings.Split(filepath.ToSlash(name), "/")
	for i := 1; i < len(parts); i++ {
		p := strings.Join(parts[:i], "/")
		fi, err := d.root.Lstat(p)
		if err != nil {
			return nil, d.plain(err)
		}
		if !fi.IsDir() {
			return nil, d.refuse(p, kind(fi)+" where a folder belongs")
		}
	}
	fi, err := d.root.Lstat(name)
	return fi, d.plain(err)
}

// rootOps are os.Root's names of the system calls it makes, and what a
// reader knows them by.
var rootOps = map[string]string{"statat": "stat", "openat": "open", "mkdirat": "mkdir", "unlinkat": "remove", "renameat": "rename"}

// plain gives an error of os.Root the file's path in the folder and the
// call's plain name: a missing file read "statat runs: no such file or
// directory", naming neither the folder nor the file.
func (d *Dir) plain(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if op, ok := rootOps[pe.Op]; ok {
			return &fs.PathError{Op: op, Path: d.Join(pe.Path), Err: pe.Err}
		}
	}
	return err
}

func kind(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	case m.IsRegular():
		return "a file"
	default:
		return "a special file (" + m.Type().String() + ")"
	}
}

// regular checks that name is a regular file (not a link, device, FIFO).
func (d *Dir) regular(name string) (fs.FileInfo, error) {
	fi, err := d.lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, d.refuse(name, kind(fi)+", not a regular file")
	}
	return fi, nil
}

// same checks that the opened f is the file lstat saw (no swap in between).
func (d *Dir) same(name string, f *os.File, want fs.FileInfo) error {
	got, err := f.Stat()
	if err == nil && !os.SameFile(want, got) {
		err = d.refuse(name, "replaced while being opened")
	}
	if err != nil {
		f.Close()
	}
	return err
}

// Open opens a regular file for reading.
func (d *Dir) Open(name string) (*os.File, error) {
	fi, err := d.regular(name)
	if err != nil {
		return nil, err
	}
	f, err := d.root.Open(name)
	if err != nil {
		return nil, d.plain(err)
	}
	return f, d.same(name, f, fi)
}

// ReadFile reads a regular file of at most max bytes.
func (d *Dir) ReadFile(name string, max int64) ([]byte, error) {
	f, err := d.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, d.refuse(name, fmt.Sprintf("larger than %d bytes", max))
	}
	return b, nil
}

// OpenFile opens an existing regular file with flag (os.O_RDWR, say).
func (d *Dir) OpenFile(name string, flag int) (*os.File, error) {
	fi, err := d.regular(name)
	if err != nil {
		return nil, err
	}
	f, err := d.root.OpenFile(name, flag&^os.O_CREATE, 0)
	if err != nil {
		return nil, err
	}
	return f, d.same(name, f, fi)
}

// Create creates a new file; it fails if anything (a link too) has the name.
func (d *Dir) Create(name string) (*os.File, error) {
	if _, err := d.lstat(name); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			err = d.refuse(name, "already exists")
		}
		return nil, err
	}
	return d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

// Append opens a regular file for appending, creating it when missing.
func (d *Dir) Append(name string) (*os.File, error) {
	f, err := d.OpenFile(name, os.O_WRONLY|os.O_APPEND)
	if errors.Is(err, fs.ErrNotExist) {
		return d.root.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
	}
	return f, err
}

// Lstat describes name itself (a link is not followed).
func (d *Dir) Lstat(name string) (fs.FileInfo, error) { return d.lstat(name) }

// Mkdir creates a folder; an existing real folder is fine when existOK.
func (d *Dir) Mkdir(name string, existOK bool) error {
	fi, err := d.lstat(name)
	switch {
	case err == nil && fi.IsDir() && existOK:
		return nil
	case err == nil:
		return d.refuse(name, kind(fi)+" is in the way")
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return d.root.Mkdir(name, 0o755)
}

// RemoveAll removes name and what it holds; links are removed, never
// followed.
func (d *Dir) RemoveAll(name string) error {
	if _, err := d.lstat(name); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	return d.root.RemoveAll(name)
}

// Remove removes one file or empty folder.
func (d *Dir) Remove(name string) error {
	if _, err := d.lstat(name); err != nil {
		return err
	}
	return d.root.Remove(name)
}

// ReadDir lists a folder inside d.
func (d *Dir) ReadDir(name string) ([]fs.DirEntry, error) {
	if name != "." {
		fi, err := d.lstat(name)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, d.refuse(name, kind(fi)+", not a folder")
		}
	}
	f, err := d.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// Sub opens a folder inside d as its own Dir.
func (d *Dir) Sub(name string) (*Dir, error) {
	fi, err := d.lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, d.refuse(name, kind(fi)+", not a folder")
	}
	r, err := d.root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r, path: d.Join(name)}, nil
}

// WriteFile replaces the regular file name (or creates it) with data
// atomically (temporary file, fsync, rename): a crash or a full disk leaves
// the old file or the new one, never half of one, never a temporary file. A
// link or special file in its place is refused, not replaced.
func (d *Dir) WriteFile(name string, data []byte, wrap func(io.Writer) io.Writer) error {
	a, err := d.CreateAtomic(name)
	if err != nil {
		return err
	}
	var w io.Writer = a
	if wrap != nil {
		w = wrap(a)
	}
	if _, err := w.Write(data); err != nil {
		a.Abort()
		return err
	}
	return a.Commit()
}

// Atomic is a file being written under a temporary name.
type Atomic struct {
	d         *Dir
	f         *os.File
	tmp, name string
}

// CreateAtomic starts replacing name. Call Commit, or Abort on failure.
func (d *Dir) CreateAtomic(name string) (*Atomic, error) {
	fi, err := d.lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, d.refuse(name, kind(fi)+" is in the way")
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	dir, base := filepath.Split(name)
	tmp := dir + "." + base + TempMarker + hex.EncodeToString(rnd[:])
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return &Atomic{d: d, f: f, tmp: tmp, name: name}, nil
}

func (a *Atomic) Write(p []byte) (int, error) { return a.f.Write(p) }

// Commit makes the new content visible under the final name.
func (a *Atomic) Commit() error {
	err := a.f.Sync()
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// rename never follows a link at the name (one placed since
		// CreateAtomic looked would be replaced, not written through).
		err = a.d.root.Rename(a.tmp, a.name)
	}
	if err != nil {
		_ = a.d.root.Remove(a.tmp)
	}
	return err
}

// Abort drops the temporary file.
func (a *Atomic) Abort() {
	_ = a.f.Close()
	_ = a.d.root.Remove(a.tmp)
}

// IsTemp reports whether a file name is one of this package's temporary
// files (left behind only if the process was killed while writing).
func IsTemp(base string) bool {
	return strings.HasPrefix(base, ".") && strings.Contains(base, TempMarker)
}
