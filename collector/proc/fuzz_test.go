package proc

import (
	"bytes"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/tokex-dev/tokex/collector/sample"
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
	f.Add([]byte("process_cpu_seconds_total 9.2e18\n"), false)
	f.Add([]byte("{\"process_cpu_seconds_total\",pid=\"1\"} 3\nprocess_resident_memory_bytes{a=\"}\\\"\"} 7 1700000000\n"), false)
	f.Add(protoPage(), true)
	f.Fuzz(func(t *testing.T, b []byte, openMetrics bool) {
		format := expfmt.NewFormat(expfmt.TypeTextPlain)
		if openMetrics {
			format, _ = expfmt.NewOpenMetricsFormat(expfmt.OpenMetricsVersion_1_0_0)
			if len(b) > 0 && (b[0] < 0x20 && b[0] != '\t' && b[0] != '\n' && b[0] != '\r' || b[0] >= 0x80) {
				format = expfmt.NewFormat(expfmt.TypeProtoDelim) // a first byte no text starts with
			}
		}
		r, err := parseProcessMetrics(bytes.NewReader(b), format)
		if err == nil && (r.CPUSeconds < 0 || r.CPUSeconds != r.CPUSeconds || r.CPUSeconds > sample.MaxCPUCounterSeconds || r.MemoryBytes < 0 || r.MemoryBytes > maxMemoryBytes) {
			t.Fatalf("reading %+v from %q", r, b)
		}
	})
}

// protoPage is a delimited protobuf page (an empty family first, then the
// two kept series and another one), as a server may send it.
func protoPage() []byte {
	text := "go_goroutines 8\nprocess_cpu_seconds_total 12.5\nprocess_resident_memory_bytes 1048576\n"
	tp := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := tp.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		panic(err)
	}
	b := bytes.NewBuffer([]byte{0})
	enc := expfmt.NewEncoder(b, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if err := enc.Encode(fams[name]); err != nil {
			panic(err)
		}
	}
	return b.Bytes()
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
