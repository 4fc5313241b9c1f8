package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Tree reads a process and all its descendants, re-scanned at every read so
// that children that come and go are counted: a server started through a
// wrapper (sh -c, npm start, a java launcher, a supervisor) does its work in
// a child, and the wrapper's own CPU is near zero.
//
// Counted: utime+stime of every live process of the tree (all its threads),
// plus cutime+cstime, the CPU of children it has waited for (and of theirs),
// so a child that exits and is reaped by a tree member stays counted. A
// member that leaves without being reaped by one (orphaned to init, a
// daemon's double fork, SIGCHLD ignored) keeps the CPU it had at the last
// scan. Not counted: its CPU after that scan, and a process that leaves the
// tree after that. A cgroup counts all of it: see ForPID.
type Tree struct {
	PID   int
	Label string
	Proc  string // the /proc mount; default /proc

	// Start is the root's start time (clock ticks after boot, /proc/<pid>/stat
	// field 22) when known before the first read (Identify), so that a PID
	// reused since is noticed; 0: the start time the first read finds.
	Start uint64

	mu       sync.Mutex
	prev     map[procKey]procStat
	departed float64 // CPU-seconds of members gone without being reaped in the tree
	last     float64
}

type procKey struct {
	pid   int
	start uint64
}

// procStat is what the tree needs of /proc/<pid>/stat.
type procStat struct {
	state    byte // R, S, D, Z (a zombie: exited, not yet reaped), X (dead), …
	comm     string
	ppid     int
	start    uint64
	own      float64 // utime+stime, seconds
	children float64 // cutime+cstime, seconds
	rss      int64   // bytes
}

// Name is the sample name.
func (t *Tree) Name() string {
	if t.Label != "" {
		return t.Label
	}
	return fmt.Sprintf("pid-%d", t.PID)
}

// Kind names the method in the evidence.
func (t *Tree) Kind() string { return "proc-tree" }

func (t *Tree) dir() string {
	if t.Proc == "" {
		return "/proc"
	}
	return t.Proc
}

// Read scans the tree and returns its cumulative CPU and summed RSS.
func (t *Tree) Read() (Reading, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	cur, err := t.scan()
	if err != nil {
		return Reading{}, err
	}
	// A member that vanished was reaped before this scan looked for it, but
	// its reaper's stat may have been read before that: read the reapers
	// again, so that their children's CPU includes it.
	for a := range gone(t.prev, cur) {
		if p, err := readPIDStat(filepath.Join(t.dir(), strconv.Itoa(a.pid), "stat")); err == nil && p.start == a.start {
			cur[a] = p
		}
	}
	var live float64
	var rss int64
	for _, p := range cur {
		live += p.own + p.children
		rss += p.rss
	}
	t.departed += lostCPU(t.prev, cur)
	t.prev = cur
	total := max(live+t.departed, t.last) // a counter never goes back
	t.last = total
	return Reading{At: now, CPUSeconds: total, MemoryBytes: rss}, nil
}

// Members returns the PIDs of the tree now, the root first.
func (t *Tree) Members() ([]int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur, err := t.scan()
	if err != nil {
		return nil, err
	}
	out := []int{t.PID}
	for k := range cur {
		if k.pid != t.PID {
			out = append(out, k.pid)
		}
	}
	return out, nil
}

// root reads the root's stat: an error wrapping ErrExited when it is gone,
// a zombie, or its PID names another process than the one first read (or
// than Start, when set).
func (t *Tree) root() (procStat, error) {
	root, err := readPIDStat(filepath.Join(t.dir(), strconv.Itoa(t.PID), "stat"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return root, fmt.Errorf("process %d %w", t.PID, ErrExited)
	case err != nil:
		return root, err
	case t.Start == 0:
		t.Start = root.start
	}
	if root.start != t.Start {
		return root, fmt.Errorf("process %d %w (its PID was reused by %q)", t.PID, ErrExited, root.comm)
	}
	if (root.state == 'Z' || root.state == 'X') && !t.threadsLeft() {
		return root, fmt.Errorf("process %d %w (a zombie its parent has not reaped)", t.PID, ErrExited)
	}
	return root, nil
}

// threadsLeft reports whether a root that reads as a zombie still has
// threads: a leader thread that ended alone (pthread_exit in main) shows Z
// while the process runs on.
func (t *Tree) threadsLeft() bool {
	ents, err := os.ReadDir(filepath.Join(t.dir(), strconv.Itoa(t.PID), "task"))
	return err == nil && len(ents) > 1
}

// Alive checks that the root process is still the one first read.
func (t *Tree) Alive() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, err := t.root()
	return err
}

// scan reads every process once and keeps the root's descendants.
func (t *Tree) scan() (map[procKey]procStat, error) {
	root, err := t.root()
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(t.dir())
	if err != nil {
		return nil, err
	}
	all := map[int]procStat{}
	kids := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		p, err := readPIDStat(filepath.Join(t.dir(), e.Name(), "stat"))
		if err != nil {
			continue // gone since the listing
		}
		all[pid] = p
		kids[p.ppid] = append(kids[p.ppid], pid)
	}
	all[t.PID] = root
	cur := map[procKey]procStat{{t.PID, root.start}: root}
	queue := []int{t.PID}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range kids[pid] {
			p := all[c]
			k := procKey{c, p.start}
			if _, seen := cur[k]; seen || c == t.PID {
				continue
			}
			cur[k] = p
			queue = append(queue, c)
		}
	}
	return cur, nil
}

// gone maps each member present in prev and absent from cur to its
// nearest ancestor still in cur (the one that reaped it, or should have);
// the result is keyed by that ancestor. A member without one maps to the
// zero key.
func gone(prev, cur map[procKey]procStat) map[procKey][]procKey {
	if prev == nil {
		return nil
	}
	byPID := make(map[int]procKey, len(prev))
	for k := range prev {
		byPID[k.pid] = k
	}
	out := map[procKey][]procKey{}
	for k, p := range prev {
		if _, ok := cur[k]; ok {
			continue
		}
		anc := procKey{}
		for pid, hops := p.ppid, 0; hops < len(prev); hops++ {
			a, ok := byPID[pid]
			if !ok {
				break
			}
			if _, alive := cur[a]; alive {
				anc = a
				break
			}
			pid = prev[a].ppid
		}
		out[anc] = append(out[anc], k)
	}
	return out
}

// lostCPU is the CPU of members present in prev and gone from cur that no
// surviving ancestor's cutime+cstime took up: each gone member is credited
// to its nearest surviving ancestor, whose children's CPU must have grown
// by at least the gone members' last totals if it reaped them.
func lostCPU(prev, cur map[procKey]procStat) float64 {
	var lost float64
	for anc, ks := range gone(prev, cur) {
		var expect float64
		for _, k := range ks {
			expect += prev[k].own + prev[k].children
		}
		if anc == (procKey{}) {
			lost += expect
			continue
		}
		grew := cur[anc].children
		if p, ok := prev[anc]; ok {
			grew -= p.children
		}
		if expect > grew {
			lost += expect - grew
		}
	}
	return lost
}

// pageSize converts stat's rss (pages) to bytes.
var pageSize = int64(os.Getpagesize())

// readPIDStat parses /proc/<pid>/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted after the last ')'.
func readPIDStat(path string) (procStat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	return parsePIDStat(b)
}

func parsePIDStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed stat")
	}
	// After ")": state is field 3 (index 0), ppid 4, utime 14, stime 15,
	// cutime 16, cstime 17, starttime 22, rss 24.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 || len(f[0]) != 1 {
		return procStat{}, errors.New("malformed stat")
	}
	var v [6]uint64
	for j, idx := range []int{11, 12, 13, 14, 19, 21} {
		n, err := strconv.ParseUint(f[idx], 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("malformed stat: %w", err)
		}
		v[j] = n
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("malformed stat: %w", err)
	}
	var comm string
	if j := bytes.IndexByte(b, '('); j >= 0 && j < i {
		comm = string(b[j+1 : i])
	}
	return procStat{
		state: f[0][0], comm: comm, ppid: ppid, start: v[4],
		own:      float64(v[0]+v[1]) / clockTicks,
		children: float64(v[2]+v[3]) / clockTicks,
		rss:      int64(min(v[5], 1<<40)) * pageSize,
	}, nil
}
