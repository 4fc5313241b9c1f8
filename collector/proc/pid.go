package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ForPID chooses how to measure the server whose (outermost) process is pid:
// its cgroup v2 when the process has one of its own — a cgroup other than
// tokex's and the root, whose every process belongs to pid's tree (a systemd
// unit, a container) — since a cgroup counts everything, even processes
// that daemonised or exited unseen; else the process tree. The Kind of the
// source says which. It fails when pid is not running.
func ForPID(pid int, label string) (Source, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("pid %d is not a process", pid)
	}
	return forTree(&Tree{PID: pid, Label: label})
}

// forTree is ForPID of the tree's root.
func forTree(t *Tree) (Source, error) {
	pid := t.PID
	members, err := t.Members()
	if err != nil {
		return nil, err
	}
	if dir, ok := ownCgroup(pid, members); ok {
		return &PIDCgroup{Cgroup: Cgroup{Dir: dir, Label: t.Name()}, tree: t}, nil
	}
	return t, nil
}

// PIDCgroup measures a process through its own cgroup: CPU from cpu.stat,
// memory from memory.current, or the tree's RSS where the memory
// controller is not enabled for the cgroup.
type PIDCgroup struct {
	Cgroup
	tree *Tree
}

// Read takes one reading; it fails with ErrExited once the process is
// gone, though its cgroup may live on (a unit restarting it, its children).
func (p *PIDCgroup) Read() (Reading, error) {
	if err := p.tree.Alive(); err != nil {
		return Reading{}, err
	}
	r, err := p.Cgroup.Read()
	if err != nil {
		return r, err
	}
	if r.MemoryBytes == 0 {
		if tr, err := p.tree.Read(); err == nil {
			r.MemoryBytes = tr.MemoryBytes
		}
	}
	return r, nil
}

// ownCgroup returns the cgroup v2 directory of pid when it holds only
// processes of pid's tree (members) and is neither the root nor tokex's.
func ownCgroup(pid int, members []int) (string, bool) {
	mine, err1 := cgroupPath(os.Getpid())
	theirs, err2 := cgroupPath(pid)
	if err1 != nil || err2 != nil || theirs == "/" || theirs == mine {
		return "", false
	}
	mount, root, ok := cgroup2Mount()
	if !ok {
		return "", false
	}
	rel, ok := strings.CutPrefix(theirs, root)
	if !ok {
		return "", false
	}
	dir := filepath.Join(mount, rel)
	if _, err := (Cgroup{Dir: dir}).Read(); err != nil {
		return "", false
	}
	in := map[int]bool{}
	for _, m := range members {
		in[m] = true
	}
	// Every process in the cgroup and below must be one of the tree's.
	const maxProcs = 100000
	seen, only := 0, true
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !only {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			only = false
			return filepath.SkipAll
		}
		for _, f := range strings.Fields(string(b)) {
			p, err := strconv.Atoi(f)
			seen++
			if err != nil || !in[p] || seen > maxProcs {
				only = false
				return filepath.SkipAll
			}
		}
		return nil
	})
	return dir, only && seen > 0
}

// cgroupPath is the cgroup v2 path of pid ("0::/path" in /proc/<pid>/cgroup).
func cgroupPath(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok && strings.HasPrefix(p, "/") {
			return filepath.Clean(p), nil
		}
	}
	return "", fmt.Errorf("pid %d: no cgroup v2", pid)
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted (and which
// of its paths that mount shows) in /proc/self/mountinfo.
func cgroup2Mount() (mount, root string, ok bool) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", "", false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source super
		pre, post, found := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !found || len(f) < 5 || len(g) < 1 || g[0] != "cgroup2" {
			continue
		}
		return unescapeMount(f[4]), unescapeMount(f[3]), true
	}
	return "", "", false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
