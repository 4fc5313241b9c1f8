package local

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tokex-dev/tokex/collector/sample"
)

// tcpSock is one line of /proc/net/tcp{,6}: an IPv4 (or mapped) socket.
type tcpSock struct {
	local, remote int // ports
	established   bool
	inode         uint64
}

// maxProcLines bounds what is read of /proc/net/tcp (a host with a
// million sockets is read up to this many).
const maxProcLines = 1 << 20

// readTCP reads the host's TCP sockets (this network namespace's).
func readTCP() ([]tcpSock, error) {
	var out []tcpSock
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		for n := 0; sc.Scan() && n < maxProcLines; n++ {
			if s, ok := parseTCPLine(sc.Text()); ok {
				out = append(out, s)
			}
		}
		fh.Close()
	}
	return out, nil
}

// parseTCPLine reads "sl local rem st tx:rx tr:when retr uid timeout inode …".
func parseTCPLine(line string) (tcpSock, bool) {
	f := strings.Fields(line)
	if len(f) < 10 || f[0] == "sl" {
		return tcpSock{}, false
	}
	lp, ok1 := hexPort(f[1])
	rp, ok2 := hexPort(f[2])
	inode, err := strconv.ParseUint(f[9], 10, 64)
	if !ok1 || !ok2 || err != nil {
		return tcpSock{}, false
	}
	return tcpSock{local: lp, remote: rp, established: f[3] == "01", inode: inode}, true
}

func hexPort(addr string) (int, bool) {
	_, p, ok := strings.Cut(addr, ":")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(p, 16, 16)
	return int(v), err == nil
}

// socketInodes are the socket inodes process pid holds open.
func socketInodes(pid int) map[uint64]bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := map[uint64]bool{}
	for _, e := range ents {
		l, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue
		}
		if s, ok := strings.CutPrefix(l, "socket:["); ok {
			if v, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				out[v] = true
			}
		}
	}
	return out
}

// spread is how the agents' connections to port lie over the engines: each
// engine's established sockets on port, matched by their peer port with
// the local ports the agents dialed from (ports: port -> agent).
func spread(engines []FleetEngine, port int, ports map[int]int) *sample.Connections {
	socks, err := readTCP()
	if err != nil || len(engines) == 0 {
		return nil
	}
	mine := socketInodes(os.Getpid())
	c := &sample.Connections{}
	held := map[int]bool{} // generator ports an engine holds
	for _, e := range engines {
		inodes := socketInodes(e.PID)
		ec := sample.EngineConnections{Engine: e.Label}
		agents := map[int]bool{}
		for _, s := range socks {
			if !s.established || s.local != port || !inodes[s.inode] {
				continue
			}
			ec.Connections++
			held[s.remote] = true
			if a, ok := ports[s.remote]; ok && !agents[a] {
				agents[a] = true
				ec.Agents = append(ec.Agents, a)
			}
		}
		c.Engines = append(c.Engines, ec)
	}
	for _, s := range socks {
		if s.established && s.remote == port && mine[s.inode] && !held[s.local] {
			c.Unmatched++
		}
	}
	c.Finish()
	if c.Spread == 0 && c.Unmatched == 0 {
		return nil // no connection open (a connection per request): nothing to say
	}
	return c
}
