package proc

import (
	"context"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tokex-dev/tokex/internal/knowncost"
)

func TestMain(m *testing.M) {
	knowncost.RunIfServer()
	os.Exit(m.Run())
}

func childrenCPU(t *testing.T) float64 {
	t.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &ru); err != nil {
		t.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// TestTreeCountsChildrenThatComeAndGo runs a shell that burns CPU only in
// short-lived subshells, reaped as they end: the shell's own CPU is near
// zero, the tree's is all of it. The truth is getrusage(RUSAGE_CHILDREN)
// of this process once the shell is reaped.
func TestTreeCountsChildrenThatComeAndGo(t *testing.T) {
	before := childrenCPU(t)
	script := `for n in 1 2 3 4 5 6; do ( i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done ); done; echo done; read x; exit 0`
	cmd := exec.Command("/bin/sh", "-c", script)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	done := make(chan struct{})
	go func() {
		b := make([]byte, 16)
		_, _ = stdout.Read(b) // "done": every subshell has been reaped
		close(done)
	}()
	tree := &Tree{PID: cmd.Process.Pid}
	// Read while subshells come and go, until the shell says it is done:
	// bounded by count, not by a deadline on the result.
	var last Reading
	samples, finished := 0, false
	for i := 0; i < 30000 && !finished; i++ {
		select {
		case <-done:
			finished = true // one more read, after the last subshell
		default:
		}
		r, err := tree.Read()
		if err != nil {
			t.Fatal(err)
		}
		if r.CPUSeconds < last.CPUSeconds {
			t.Fatalf("the tree's counter went back: %v after %v", r.CPUSeconds, last.CPUSeconds)
		}
		last = r
		samples++
		time.Sleep(20 * time.Millisecond)
	}
	if !finished {
		t.Fatal("the shell did not finish")
	}
	single, err := (Process{PID: cmd.Process.Pid}).Read()
	if err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	truth := childrenCPU(t) - before
	got := last.CPUSeconds // the tree started at zero, like the kernel's count
	t.Logf("tree %.2f s over %d reads, the shell alone %.2f s, getrusage %.2f s", got, samples, single.CPUSeconds, truth)
	if truth < 0.2 {
		t.Fatalf("the subshells burnt only %.2f s", truth)
	}
	if math.Abs(got-truth) > 0.05+0.02*truth {
		t.Errorf("tree counted %.2f CPU-s, the kernel %.2f", got, truth)
	}
	if single.CPUSeconds > truth/2 {
		t.Errorf("the shell itself used %.2f of %.2f CPU-s: the test burns in the wrong process", single.CPUSeconds, truth)
	}
}

func TestLostCPU(t *testing.T) {
	k := func(pid int) procKey { return procKey{pid, uint64(pid)} }
	st := func(ppid int, own, children float64) procStat {
		return procStat{ppid: ppid, own: own, children: children}
	}
	prev := map[procKey]procStat{k(1): st(0, 1, 0), k(2): st(1, 5, 0), k(3): st(2, 3, 0), k(4): st(1, 2, 0)}
	cases := []struct {
		name string
		cur  map[procKey]procStat
		want float64
	}{
		{"nobody left", map[procKey]procStat{k(1): st(0, 1, 0), k(2): st(1, 6, 0), k(3): st(2, 4, 0), k(4): st(1, 2, 0)}, 0},
		// 4 exited and 1 reaped it: its 2 s moved to 1's children.
		{"reaped", map[procKey]procStat{k(1): st(0, 1, 2.1), k(2): st(1, 6, 0), k(3): st(2, 4, 0)}, 0},
		// 3 daemonised (reparented to init): nobody took its 3 s.
		{"orphaned", map[procKey]procStat{k(1): st(0, 1, 0), k(2): st(1, 6, 0), k(4): st(1, 2, 0)}, 3},
		// 2 reaped 3, then exited and 1 reaped 2: 1 took 5+3.
		{"reaped twice", map[procKey]procStat{k(1): st(0, 1, 8.5), k(4): st(1, 2, 0)}, 0},
		// 2 exited unreaped by 1 (SIGCHLD ignored), 3 orphaned: both lost.
		{"ignored", map[procKey]procStat{k(1): st(0, 1, 0), k(4): st(1, 2, 0)}, 8},
	}
	for _, c := range cases {
		if got := lostCPU(prev, c.cur); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: lost %v, want %v", c.name, got, c.want)
		}
	}
}

// TestForPIDChoosesItsOwnCgroup puts a server behind a wrapper into a
// cgroup v2 of its own and checks that ForPID measures the cgroup, and the
// process tree otherwise. It needs a writable cgroup v2 hierarchy (root).
func TestForPIDChoosesItsOwnCgroup(t *testing.T) {
	exe, _ := os.Executable()
	p, err := knowncost.Start(context.Background(), exe, knowncost.Options{Cost: 5 * time.Millisecond, Wrap: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	src, err := ForPID(p.PID, "")
	if err != nil {
		t.Fatal(err)
	}
	if src.Kind() != "proc-tree" { // it shares this test's cgroup
		t.Fatalf("a process in tokex's own cgroup measured by %s", src.Kind())
	}
	mount, root, ok := cgroup2Mount()
	if !ok {
		t.Skip("no cgroup v2 hierarchy mounted")
	}
	mine, err := cgroupPath(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	rel, _ := strings.CutPrefix(mine, root)
	dir := filepath.Join(mount, rel, "tokex-test-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup here: %v", err)
	}
	defer func() {
		p.Close()
		for i := 0; i < 50 && os.Remove(dir) != nil; i++ {
			time.Sleep(100 * time.Millisecond) // until the killed processes are gone
		}
	}()
	for _, pid := range []int{p.PID, p.ServerPID} {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			t.Skipf("cannot move a process into a cgroup here: %v", err)
		}
	}
	src, err = ForPID(p.PID, "as")
	if err != nil {
		t.Fatal(err)
	}
	cg, ok := src.(*PIDCgroup)
	if !ok || src.Kind() != "cgroup" || cg.Dir != dir || src.Name() != "as" {
		t.Fatalf("source %T %s %+v", src, src.Kind(), src)
	}
	a, err := src.Read()
	if err != nil {
		t.Fatal(err)
	}
	s0, _ := p.Stats()
	for range 20 {
		resp, err := http.Post(p.URL+"/token", "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	s1, _ := p.Stats()
	b, _ := src.Read()
	if b.MemoryBytes <= 0 {
		t.Errorf("memory %d", b.MemoryBytes)
	}
	got, truth := b.CPUSeconds-a.CPUSeconds, s1.CPUSeconds-s0.CPUSeconds
	if truth < 0.05 || math.Abs(got-truth) > 0.2*truth {
		t.Errorf("cgroup counted %.3f CPU-s, the server %.3f", got, truth)
	}
	// A cgroup that holds another process is not the server's own.
	other := exec.Command("/bin/sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Signal(syscall.SIGKILL); _ = other.Wait() }()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(other.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if src, err := ForPID(p.PID, ""); err != nil || src.Kind() != "proc-tree" {
		t.Errorf("shared cgroup: %v %v", src, err)
	}
}

func TestForPIDRefusesWhatIsNotAProcess(t *testing.T) {
	for _, pid := range []int{0, -1, 1 << 30} {
		if _, err := ForPID(pid, ""); err == nil {
			t.Errorf("pid %d accepted", pid)
		}
	}
}
