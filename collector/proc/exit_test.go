package proc

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
)

// startSleeper starts `sleep 60`, not reaped until the test ends: killed,
// it stays a zombie until then.
func startSleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start sleep:", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// awaitState waits (10 s at most) until pid's stat shows state.
func awaitState(t *testing.T, pid int, state byte) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if st, err := readPIDStat(filepath.Join("/proc", itoa(pid), "stat")); err == nil && st.state == state {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d never reached state %c", pid, state)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestTreeNoticesAnExitedProcess: a killed server that its parent has not
// reaped yet is a zombie whose /proc/<pid>/stat still reads; issue 23 saw a
// killed engine sampled on as if alive. Every way of being gone wraps
// ErrExited.
func TestTreeNoticesAnExitedProcess(t *testing.T) {
	cmd := startSleeper(t)
	pid := cmd.Process.Pid
	tree := &Tree{PID: pid}
	if _, err := tree.Read(); err != nil {
		t.Fatal(err)
	}
	id, err := Identify(pid)
	if err != nil || id.Comm != "sleep" || id.Start == 0 {
		t.Fatalf("Identify: %+v, %v", id, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	awaitState(t, pid, 'Z')
	_, err = tree.Read()
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "zombie") {
		t.Errorf("reading a zombie: %v", err)
	}
	if _, err := Identify(pid); !errors.Is(err, ErrExited) {
		t.Errorf("Identify of a zombie: %v", err)
	}
	_ = cmd.Wait()
	if _, err := tree.Read(); !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "exited") {
		t.Errorf("reading a reaped process: %v", err)
	}
}

// TestForProcessRefusesAReusedPID: a PID whose start time is not the one
// recorded names another process.
func TestForProcessRefusesAReusedPID(t *testing.T) {
	me, err := Identify(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ForProcess(me, ""); err != nil {
		t.Fatalf("this process: %v", err)
	}
	other := me
	other.Start++
	_, err = ForProcess(other, "")
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "reused") {
		t.Errorf("a reused PID: %v", err)
	}
}

// TestSampleTellsExited: the sampler tells Target.Exited once when the
// sampled process is gone, so a driver can stop the run.
func TestSampleTellsExited(t *testing.T) {
	cmd := startSleeper(t)
	src, err := ForPID(cmd.Process.Pid, "")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var told []error
	exited := make(chan struct{})
	tgt := Target{Role: "engine", Source: src, Exited: func(err error) {
		mu.Lock()
		told = append(told, err)
		mu.Unlock()
		close(exited)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Sample(ctx, 20*time.Millisecond, []Target{tgt}, func(event.Event) {}, func(string) {})
	}()
	time.Sleep(50 * time.Millisecond)
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-exited:
	case <-ctx.Done():
		t.Fatal("Exited was never told")
	}
	<-done // sampling stopped by itself
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 1 || !errors.Is(told[0], ErrExited) {
		t.Errorf("told %v", told)
	}
}

// TestListeningFindsTheServer: the process listening on a port, found
// through /proc/net/tcp and the socket's inode among /proc/*/fd; a child
// that inherited the socket resolves to its parent, the server.
func TestListeningFindsTheServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	check := func(addrs []net.IP) {
		t.Helper()
		id, err := Listening(port, addrs)
		if err != nil || id.PID != os.Getpid() || id.Start == 0 {
			t.Errorf("Listening(%d, %v) = %+v, %v; want this process %d", port, addrs, id, err, os.Getpid())
		}
	}
	check(nil)
	check([]net.IP{net.ParseIP("127.0.0.1")})
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "60")
	child.ExtraFiles = []*os.File{f}
	if err := child.Start(); err != nil {
		t.Skip("cannot start sleep:", err)
	}
	f.Close()
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	check(nil) // the worker holding the socket resolves to its parent
	if _, err := Listening(port, []net.IP{net.ParseIP("10.9.8.7")}); err == nil {
		t.Error("a listener on 127.0.0.1 matched another address")
	}
	ln.Close()
	_ = child.Process.Kill()
	_ = child.Wait()
	if _, err := Listening(port, nil); err == nil || !strings.Contains(err.Error(), "no process listens") {
		t.Errorf("a closed port: %v", err)
	}
}

func TestParseListeners(t *testing.T) {
	tcp := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 20 4 30 10 -1
   2: 00000000:15B3 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1 0000000000000000 100 0 0 10 0
   3: zz:15B3 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 98 1
`
	tcp6 := `   0: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0000000000000000 100 0 0 10 0
`
	got := ParseListeners([]byte(tcp))
	if len(got) != 2 || !got[0].Addr.Equal(net.ParseIP("127.0.0.1")) || got[0].Port != 8080 || got[0].Inode != 4242 ||
		!got[1].Addr.IsUnspecified() || got[1].Port != 5555 {
		t.Errorf("tcp: %+v", got)
	}
	got = ParseListeners([]byte(tcp6))
	if len(got) != 1 || !got[0].Addr.Equal(net.IPv6loopback) || got[0].Port != 8081 || got[0].Inode != 777 {
		t.Errorf("tcp6: %+v", got)
	}
}

func TestParsePIDFile(t *testing.T) {
	cases := []struct {
		in  string
		pid int
	}{
		{"1234\n", 1234}, {"  77 ", 77}, {"", 0}, {"0", 0}, {"-5", 0}, {"+5", 0}, {"12 34", 0}, {"abc", 0},
		{"99999999999999999999", 0}, {strings.Repeat("1", 70), 0}, {"4194305", 0},
	}
	for _, c := range cases {
		pid, err := ParsePIDFile([]byte(c.in))
		if pid != c.pid || (err == nil) != (c.pid > 0) {
			t.Errorf("ParsePIDFile(%q) = %d, %v; want %d", c.in, pid, err, c.pid)
		}
	}
	p := filepath.Join(t.TempDir(), "server.pid")
	if err := os.WriteFile(p, []byte("4321\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if pid, err := ReadPIDFile(p); pid != 4321 || err != nil {
		t.Errorf("ReadPIDFile: %d, %v", pid, err)
	}
}
