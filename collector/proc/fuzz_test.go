package proc

import (
	"testing"

	"github.com/prometheus/common/expfmt"
)

// FuzzParsePIDStat: /proc/<pid>/stat lines, including command names with
// spaces and parentheses; never a panic, never a negative figure.
func FuzzParsePIDStat(f *testing.F) {
	f.Add([]byte("1234 (tokex) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 8 0 100 0 55 0"))
	f.Add([]byte("99 (we ird) (name)) R 1 2 3 4 5 6 7 8 9 10 7 3 0 0 20 0 1 0 1 0 0 0"))
	f.Add([]byte("7 (x) Z 1 2 3 4 5 6 7 8 9 10 18446744073709551615 3 0 0 20 0 1 0 1 0 1099511627776"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePIDStat(b)
		if err == nil && (p.own < 0 || p.children < 0 || p.rss < 0) {
			t.Fatalf("negative figures %+v from %q", p, b)
		}
	})
}

// FuzzParseProcessMetrics: a metrics endpoint may be hostile; the parser
// returns a sane reading or an error.
func FuzzParseProcessMetrics(f *testing.F) {
	f.Add([]byte("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5\nprocess_resident_memory_bytes 1.048576e+06\n"), false)
	f.Add([]byte("# TYPE process_cpu_seconds counter\nprocess_cpu_seconds_total 1\n# EOF\n"), true)
	f.Add([]byte("process_cpu_seconds_total{pid=\"1\"} NaN\nprocess_cpu_seconds_total{pid=\"2\"} +Inf\n"), false)
	f.Fuzz(func(t *testing.T, b []byte, openMetrics bool) {
		format := expfmt.NewFormat(expfmt.TypeTextPlain)
		if openMetrics {
			format, _ = expfmt.NewOpenMetricsFormat(expfmt.OpenMetricsVersion_1_0_0)
		}
		r, err := parseProcessMetrics(b, format)
		if err == nil && (r.CPUSeconds < 0 || r.CPUSeconds != r.CPUSeconds || r.CPUSeconds > 1e15 || r.MemoryBytes < 0) {
			t.Fatalf("reading %+v from %q", r, b)
		}
	})
}

// FuzzParseListeners: /proc/net/tcp and tcp6 lines; never a panic, only
// listening sockets with a port and an inode.
func FuzzParseListeners(f *testing.F) {
	f.Add([]byte("   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0\n"))
	f.Add([]byte("   0: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 777 1\n"))
	f.Add([]byte("  sl  local_address rem_address   st\n   1: 0100007F:FFFFF 0:0 0A 0 0 0 0 0 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, l := range ParseListeners(b) {
			if l.Port < 0 || l.Port > 65535 || l.Inode == 0 || (len(l.Addr) != 4 && len(l.Addr) != 16) {
				t.Fatalf("listener %+v from %q", l, b)
			}
		}
	})
}

// FuzzParsePIDFile: a pid file may hold anything; a PID read from it is
// positive and within the kernel's limit.
func FuzzParsePIDFile(f *testing.F) {
	f.Add([]byte("1234\n"))
	f.Add([]byte(" -1 "))
	f.Add([]byte("0x10"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if pid, err := ParsePIDFile(b); err == nil && (pid <= 0 || pid > 1<<22) {
			t.Fatalf("pid %d from %q", pid, b)
		}
	})
}
