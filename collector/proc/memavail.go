package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MemAvailable is the memory this process can still take: the kernel's
// MemAvailable, or less when its cgroup v2 has a memory.max (its limit
// minus memory.current). how names the source.
func MemAvailable() (avail int64, how string, err error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, "", err
	}
	_, avail = meminfo(b)
	if avail <= 0 {
		return 0, "", fmt.Errorf("/proc/meminfo: no MemAvailable")
	}
	how = "MemAvailable"
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return avail, how, nil
	}
	for _, line := range strings.Split(string(cg), "\n") {
		path, ok := strings.CutPrefix(line, "0::")
		if !ok {
			continue
		}
		dir := "/sys/fs/cgroup" + path
		lim, err1 := readInt(dir + "/memory.max")
		cur, err2 := readInt(dir + "/memory.current")
		if err1 == nil && err2 == nil && lim-cur < avail {
			avail, how = max(lim-cur, 0), "cgroup memory.max − memory.current"
		}
	}
	return avail, how, nil
}

// readInt reads a one-number file ("max" is not a number: an error).
func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}
