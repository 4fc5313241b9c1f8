// Package proc samples CPU and memory of local processes and cgroups from
// /proc and /sys/fs/cgroup: the engine of the embedded default and tokex's
// own generator.
package proc

import (
	"bytes"
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

// Source reads one process or cgroup.
type Source interface {
	Read() (Reading, error)
	Name() string
}

// Process reads /proc/<pid>/stat (utime+stime) and VmRSS.
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

// Read takes one reading.
func (p Process) Read() (Reading, error) {
	now := time.Now()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID))
	if err != nil {
		return Reading{}, err
	}
	cpu, err := parseStat(b)
	if err != nil {
		return Reading{}, fmt.Errorf("/proc/%d/stat: %w", p.PID, err)
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
	if err != nil {
		return Reading{}, err
	}
	return Reading{At: now, CPUSeconds: cpu, MemoryBytes: parseRSS(st)}, nil
}

// parseStat returns utime+stime in seconds. The command name (field 2) may
// contain spaces and parentheses, so fields are counted after the last ')'.
func parseStat(b []byte) (float64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// After ")": state(3) ... utime is field 14, stime 15 -> indexes 11, 12.
	if len(f) < 13 {
		return 0, errors.New("malformed stat")
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return float64(ut+st) / clockTicks, nil
}

func parseRSS(status []byte) int64 {
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
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

// Read takes one reading.
func (c Cgroup) Read() (Reading, error) {
	now := time.Now()
	b, err := os.ReadFile(filepath.Join(c.Dir, "cpu.stat"))
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
