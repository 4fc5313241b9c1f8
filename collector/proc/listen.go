package proc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Listener is a listening TCP socket of /proc/net/tcp or tcp6.
type Listener struct {
	Addr  net.IP
	Port  int
	Inode uint64
}

// maxNetLines bounds the sockets read from one /proc/net file.
const maxNetLines = 1 << 20

// ParseListeners reads the listening sockets (state 0A) of a
// /proc/net/tcp or /proc/net/tcp6 file; malformed lines are skipped.
func ParseListeners(b []byte) []Listener {
	var out []Listener
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for n := 0; sc.Scan() && n < maxNetLines; n++ {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" {
			continue
		}
		hexAddr, hexPort, ok := strings.Cut(f[1], ":")
		port, err1 := strconv.ParseUint(hexPort, 16, 16)
		inode, err2 := strconv.ParseUint(f[9], 10, 64)
		ip := procIP(hexAddr)
		if !ok || err1 != nil || err2 != nil || ip == nil || inode == 0 {
			continue
		}
		out = append(out, Listener{Addr: ip, Port: int(port), Inode: inode})
	}
	return out
}

// littleEndian: /proc/net prints addresses as 32-bit words in the host's
// byte order.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// procIP decodes /proc/net's address.
func procIP(s string) net.IP {
	b, err := hex.DecodeString(s)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return nil
	}
	for i := 0; littleEndian && i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return net.IP(b)
}

// Listening finds the process listening on port (at one of addrs, or at a
// wildcard address; any address when addrs is empty): the listening
// sockets of /proc/net/tcp and tcp6, then the process holding one in
// /proc/*/fd. Processes sharing the socket (a server's workers forked
// after it listened) resolve to their common ancestor among them; the
// sampled tree holds the others. It sees this network namespace only.
func Listening(port int, addrs []net.IP) (Identity, error) {
	return listening("/proc", port, addrs)
}

func listening(dir string, port int, addrs []net.IP) (Identity, error) {
	inodes := map[uint64]bool{}
	for _, name := range []string{"net/tcp", "net/tcp6"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue // no IPv6
		}
		for _, l := range ParseListeners(b) {
			if l.Port == port && (len(addrs) == 0 || l.Addr.IsUnspecified() || slices.ContainsFunc(addrs, l.Addr.Equal)) {
				inodes[l.Inode] = true
			}
		}
	}
	if len(inodes) == 0 {
		return Identity{}, fmt.Errorf("no process listens on port %d (in this network namespace)", port)
	}
	holders, err := socketHolders(dir, inodes)
	if err != nil {
		return Identity{}, err
	}
	if len(holders) == 0 {
		return Identity{}, fmt.Errorf("port %d is listened on, but by no process whose descriptors this user may read", port)
	}
	return topHolder(dir, holders, port)
}

// maxFDs bounds the descriptors read while looking for a socket's holder.
const maxFDs = 4 << 20

// socketHolders are the processes with a descriptor on one of inodes.
func socketHolders(dir string, inodes map[uint64]bool) (map[int]procStat, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	holders := map[int]procStat{}
	seen := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		fds, err := os.ReadDir(filepath.Join(dir, e.Name(), "fd"))
		if err != nil {
			continue // gone, or another user's
		}
		for _, fd := range fds {
			if seen++; seen > maxFDs {
				return nil, errors.New("too many open descriptors to search")
			}
			link, err := os.Readlink(filepath.Join(dir, e.Name(), "fd", fd.Name()))
			in, ok := strings.CutPrefix(link, "socket:[")
			if err != nil || !ok {
				continue
			}
			if n, err := strconv.ParseUint(strings.TrimSuffix(in, "]"), 10, 64); err == nil && inodes[n] {
				if st, err := readPIDStat(filepath.Join(dir, e.Name(), "stat")); err == nil {
					holders[pid] = st
				}
				break
			}
		}
	}
	return holders, nil
}

// topHolder is the one holder none of whose ancestors holds the socket.
func topHolder(dir string, holders map[int]procStat, port int) (Identity, error) {
	var tops []int
	for pid, st := range holders {
		top := true
		for p, hops := st.ppid, 0; p > 1 && hops < 4096; hops++ {
			if _, ok := holders[p]; ok {
				top = false
				break
			}
			pst, err := readPIDStat(filepath.Join(dir, strconv.Itoa(p), "stat"))
			if err != nil {
				break
			}
			p = pst.ppid
		}
		if top {
			tops = append(tops, pid)
		}
	}
	slices.Sort(tops)
	if len(tops) != 1 {
		var names []string
		for _, p := range tops {
			names = append(names, Identity{PID: p, Comm: holders[p].comm}.String())
		}
		return Identity{}, fmt.Errorf("several unrelated processes listen on port %d: %s", port, strings.Join(names, ", "))
	}
	st := holders[tops[0]]
	return Identity{PID: tops[0], Start: st.start, Comm: st.comm}, nil
}
