package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrExited is wrapped by a reading of a process (or its cgroup) that is
// gone: it exited (a zombie its parent has not reaped yet counts), or its
// PID now names another process. The sampler tells Target.Exited.
var ErrExited = errors.New("exited")

// Identity tells one process from any later one that reuses its PID: the
// PID with the process's start time, in clock ticks after boot
// (/proc/<pid>/stat field 22), and its command name.
type Identity struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start_ticks"`
	Comm  string `json:"comm,omitempty"`
}

// String is "1234 (dex)".
func (id Identity) String() string {
	if id.Comm == "" {
		return strconv.Itoa(id.PID)
	}
	return fmt.Sprintf("%d (%s)", id.PID, id.Comm)
}

// Identify reads the identity of the running process pid; the error wraps
// ErrExited when there is none (or only a zombie).
func Identify(pid int) (Identity, error) {
	t := &Tree{PID: pid}
	st, err := t.root()
	if err != nil {
		return Identity{}, err
	}
	return Identity{PID: pid, Start: st.start, Comm: st.comm}, nil
}

// ForProcess is ForPID for a process known by its identity: a PID reused
// by another process since id was read is refused, and noticed by every
// later reading.
func ForProcess(id Identity, label string) (Source, error) {
	if id.PID <= 0 {
		return nil, fmt.Errorf("pid %d is not a process", id.PID)
	}
	return forTree(&Tree{PID: id.PID, Label: label, Start: id.Start})
}

// MaxPIDFile bounds what ReadPIDFile reads: a PID is a few digits.
const MaxPIDFile = 64

// ReadPIDFile reads the PID a server wrote to path (its pid file).
func ReadPIDFile(path string) (int, error) {
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b := make([]byte, MaxPIDFile+1)
	n, _ := f.Read(b)
	pid, err := ParsePIDFile(b[:n])
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return pid, nil
}

// ParsePIDFile reads a pid file's content: one positive decimal PID,
// surrounding white space allowed.
func ParsePIDFile(b []byte) (int, error) {
	if len(b) > MaxPIDFile {
		return 0, fmt.Errorf("more than %d bytes: not a pid file", MaxPIDFile)
	}
	s := strings.TrimSpace(string(b))
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 || pid > 1<<22 || strings.ContainsAny(s, "+-") {
		return 0, fmt.Errorf("%q is not a process id", s)
	}
	return pid, nil
}
