// Package proc samples CPU and memory of local processes, process trees and
// cgroups from /proc and cgroup v2, and of remote servers from their
// Prometheus process metrics: the engine under test and tokex's own
// generator.
package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, 100 on every Linux ABI Go supports.
const clockTicks = 100

// Reading is a cumulative CPU counter and the current memory.
type Reading struct {
	At          time.Time
	CPUSeconds  float64
	MemoryBytes int64
}

// Source reads one process, process tree, cgroup or metrics endpoint.
type Source interface {
	Read() (Reading, error)
	Name() string
	Kind() string // the method, in the evidence: proc, proc-tree, cgroup, prometheus
}

// Process reads one process's /proc/<pid>/stat: utime+stime (all its
// threads) and RSS; its children are not counted (see Tree).
type Process struct {
	PID   int
	Label string
}

// Name is the sample name.
func (p Process) Name() string {
	if p.Label != "" {
		return p.Label
	}
	return fmt.Sprintf("pid-%d", p.PID)
}

// Kind names the method in the evidence.
func (p Process) Kind() string { return "proc" }

// Read takes one reading.
func (p Process) Read() (Reading, error) {
	now := time.Now()
	st, err := readPIDStat(fmt.Sprintf("/proc/%d/stat", p.PID))
	if err != nil {
		return Reading{}, err
	}
	return Reading{At: now, CPUSeconds: st.own, MemoryBytes: st.rss}, nil
}

// Cgroup reads a cgroup v2 directory's cpu.stat usage_usec and memory.current.
type Cgroup struct {
	Dir   string
	Label string
}

// Name is the sample name.
func (c Cgroup) Name() string {
	if c.Label != "" {
		return c.Label
	}
	return filepath.Base(c.Dir)
}

// Kind names the method in the evidence.
func (c Cgroup) Kind() string { return "cgroup" }

// Read takes one reading.
func (c Cgroup) Read() (Reading, error) {
	now := time.Now()
	b, err := os.ReadFile(filepath.Join(c.Dir, "cpu.stat"))
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(c.Dir); errors.Is(serr, os.ErrNotExist) {
			return Reading{}, fmt.Errorf("cgroup %s is gone: the engine %w", c.Dir, ErrExited)
		}
	}
	if err != nil {
		return Reading{}, err
	}
	var usec int64 = -1
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			usec, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	if usec < 0 {
		return Reading{}, fmt.Errorf("%s/cpu.stat: no usage_usec", c.Dir)
	}
	var mem int64
	if m, err := os.ReadFile(filepath.Join(c.Dir, "memory.current")); err == nil {
		mem, _ = strconv.ParseInt(strings.TrimSpace(string(m)), 10, 64)
	}
	return Reading{At: now, CPUSeconds: float64(usec) / 1e6, MemoryBytes: mem}, nil
}

// Rate turns two readings into millicores over the interval between them.
func Rate(prev, cur Reading) float64 {
	dt := cur.At.Sub(prev.At).Seconds()
	if dt <= 0 {
		return 0
	}
	return (cur.CPUSeconds - prev.CPUSeconds) / dt * 1000
}

// parseStat returns a process's utime+stime in seconds.
func parseStat(b []byte) (float64, error) {
	p, err := parsePIDStat(b)
	return p.own, err
}

// parseRSS reads VmRSS from /proc/<pid>/status.
func parseRSS(status []byte) int64 {
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			if f := strings.Fields(rest); len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
