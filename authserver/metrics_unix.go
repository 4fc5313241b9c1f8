//go:build unix

package authserver

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

type processFigures struct {
	cpuSeconds float64
	rssBytes   int64 // 0: unknown
}

// readProcess reads the process's own CPU (getrusage: user + system, to
// the microsecond) and resident memory (/proc/self/statm, Linux).
func readProcess() (processFigures, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return processFigures{}, false
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	p := processFigures{cpuSeconds: tv(ru.Utime) + tv(ru.Stime)}
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := bytes.Fields(b); len(f) > 1 {
			if pages, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				p.rssBytes = pages * int64(os.Getpagesize())
			}
		}
	}
	return p, true
}
