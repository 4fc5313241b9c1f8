// Package owner marks folders that live only as long as one tokex process
// (the embedded server's TLS keys, an import being written) so that a later
// tokex can remove them when that process was killed before it could. A
// folder is removed only if it carries the marker, belongs to this user,
// and the process named in the marker is gone.
package owner

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MarkerFile is the marker's name inside a marked folder.
const MarkerFile = ".tokex-owner"

// Mark writes the marker of the current process into dir.
func Mark(dir string) error {
	return os.WriteFile(filepath.Join(dir, MarkerFile), []byte(self()), 0o600)
}

// self identifies this process: pid, start time and boot, so that a pid
// reused after the owner died is not taken for the owner.
func self() string {
	pid := os.Getpid()
	return fmt.Sprintf("tokex %d %s %s\n", pid, startTime(pid), bootID())
}

// startTime is the process's start in clock ticks since boot (Linux), or "".
func startTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "-"
	}
	// The command name may hold spaces and ')': fields follow the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "-"
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "-"
	}
	return f[19] // field 22 of stat
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "-"
	}
	return strings.TrimSpace(string(b))
}

// alive reports whether the process a marker names still runs.
func alive(marker string) bool {
	f := strings.Fields(marker)
	if len(f) != 4 || f[0] != "tokex" {
		return true // not a marker we understand: never remove
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return true
	}
	if f[3] != "-" && f[3] != bootID() {
		return false // written before the last reboot
	}
	if f[2] != "-" {
		if st := startTime(pid); st != "-" {
			return st == f[2]
		}
		if _, err := os.Stat("/proc/self/stat"); err == nil {
			return false // /proc works and has no such process
		}
	}
	return processExists(pid)
}

// Sweep removes the folders in parent whose names start with prefix and
// end with suffix, carry the marker, belong to this user, and whose owner
// is gone. It returns what it removed; it never follows a link.
func Sweep(parent, prefix, suffix string) ([]string, error) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() || !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, suffix) || len(n) <= len(prefix)+len(suffix) {
			continue
		}
		dir := filepath.Join(parent, n)
		if !mine(dir) {
			continue
		}
		m, err := os.Lstat(filepath.Join(dir, MarkerFile))
		if err != nil || !m.Mode().IsRegular() || m.Size() > 256 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, MarkerFile))
		if err != nil || alive(string(b)) {
			continue
		}
		if err := os.RemoveAll(dir); err == nil {
			removed = append(removed, dir)
		}
	}
	return removed, nil
}

// mine: a real folder (not a link) owned by this user.
func mine(dir string) bool {
	fi, err := os.Lstat(dir)
	return err == nil && fi.IsDir() && ownedByMe(fi)
}
