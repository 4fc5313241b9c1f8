package local

import (
	"testing"
)

// TestParseTCPLine reads /proc/net/tcp's lines: ports, state, inode; the
// header and anything short or malformed are not sockets.
func TestParseTCPLine(t *testing.T) {
	for _, c := range []struct {
		line string
		want tcpSock
		ok   bool
	}{
		{"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode", tcpSock{}, false},
		{"   0: 0100007F:A2B3 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 123456 1 0000000000000000 20 4 30 10 -1",
			tcpSock{local: 0xA2B3, remote: 0x1F90, established: true, inode: 123456}, true},
		{"   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1", tcpSock{local: 0x1F90, inode: 99}, true},
		{"   2: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:D431 01 0:0 00:0 0 0 0 7 1",
			tcpSock{local: 0x1F90, remote: 0xD431, established: true, inode: 7}, true},
		{"   3: 0100007F:ZZZZ 0100007F:1F90 01 0:0 00:0 0 0 0 5", tcpSock{}, false},
		{"   4: 0100007F 0100007F:1F90 01 0:0 00:0 0 0 0 5", tcpSock{}, false},
		{"   5: 0100007F:1F90 0100007F:1F90 01 0:0 00:0 0 0 0 -5", tcpSock{}, false},
		{"", tcpSock{}, false},
	} {
		got, ok := parseTCPLine(c.line)
		if ok != c.ok || got != c.want {
			t.Errorf("%q: %+v %v, want %+v %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

// FuzzParseTCPLine: no line makes it panic, and a socket it reads has
// ports a TCP port can be.
func FuzzParseTCPLine(f *testing.F) {
	f.Add("   0: 0100007F:A2B3 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 123456 1 0000000000000000 20 4 30 10 -1")
	f.Add("  sl  local_address rem_address   st")
	f.Fuzz(func(t *testing.T, line string) {
		s, ok := parseTCPLine(line)
		if ok && (s.local < 0 || s.local > 65535 || s.remote < 0 || s.remote > 65535) {
			t.Errorf("%q: ports %d, %d", line, s.local, s.remote)
		}
	})
}
