package proc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// fakeHost writes a /proc and /sys/fs/cgroup tree under root for pid 42.
type fakeHost struct {
	t    *testing.T
	root string
}

func (f fakeHost) write(path, body string) {
	f.t.Helper()
	p := filepath.Join(f.root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// state writes one moment: cumulative CPU ticks (busy, idle, steal of the
// whole host), procs_running, the process's utime and its threads' run delay.
func (f fakeHost) state(busy, idle, iowait, steal uint64, running int, utime uint64, delayNS [2]uint64, psiCPU, psiMemFull int64) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	// cpu0 takes the busy time, cpu1 the idle time.
	f.write("proc/stat", fmt.Sprintf("cpu  %d 0 0 %d %d 0 0 %d 50 0\ncpu0 %d 0 0 0 0 0 0 %d 0 0\ncpu1 0 0 0 %d %d 0 0 0 0 0\n"+
		"intr 1 2 3\nctxt 99\nprocs_running %d\nprocs_blocked 0\n", busy, idle, iowait, steal, busy, steal, idle, iowait, running))
	f.write("proc/loadavg", "3.50 2.00 1.00 4/300 4242\n")
	f.write("proc/meminfo", "MemTotal:        8000000 kB\nMemFree:          100000 kB\nMemAvailable:     300000 kB\n")
	f.write("proc/pressure/cpu", fmt.Sprintf("some avg10=1.00 avg60=1.00 avg300=1.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", psiCPU))
	f.write("proc/pressure/memory", fmt.Sprintf("some avg10=0.00 avg60=0.00 avg300=0.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=%d\n", psiMemFull*2, psiMemFull))
	f.write("proc/42/stat", fmt.Sprintf("42 (tokex gen) S 1 42 42 0 -1 4194304 1 0 0 0 %d 0 0 0 20 0 12 0 100 0 0\n", utime))
	slices := 10 + delayNS[0]/1_000_000 // one more time slice per ms waited: 1 ms each
	f.write("proc/42/task/42/schedstat", fmt.Sprintf("1000 %d %d\n", delayNS[0], slices))
	f.write("proc/42/task/43/schedstat", fmt.Sprintf("1000 %d 10\n", delayNS[1]))
}

func TestHostSamplerReadsAFakeProcRoot(t *testing.T) {
	root := t.TempDir()
	f := fakeHost{t, root}
	f.write("proc/42/status", "Name:\ttokex\nVmRSS:\t   2048 kB\nCpus_allowed_list:\t0-3,6\n")
	f.write("proc/42/cgroup", "0::/tokex.slice/run.scope\n")
	f.write("sys/fs/cgroup/tokex.slice/cpu.max", "150000 100000\n") // 1.5 cores on the parent
	f.write("sys/fs/cgroup/tokex.slice/run.scope/cpu.max", "max 100000\n")
	h := &HostSampler{Root: root, PID: 42, Label: "tokex-generator", MaxProcs: func() int { return 8 }}

	f.state(1000, 1000, 0, 0, 1, 100, [2]uint64{0, 0}, 0, 0)
	prev, err := h.read()
	if err != nil {
		t.Fatal(err)
	}
	// One second later: 200 ticks passed on 2 CPUs, 190 of them busy (20 of
	// them steal), 5 ticks of iowait counted as idle; 3 threads runnable besides
	// the sampler; the process used 0.5 s of CPU and its threads waited
	// 0.3 s for a CPU; PSI: CPU stalled 0.6 s, memory fully 0.1 s.
	f.state(1170, 1005, 5, 20, 4, 150, [2]uint64{200_000_000, 100_000_000}, 600_000, 100_000)
	cur, err := h.read()
	if err != nil {
		t.Fatal(err)
	}
	cur.at = prev.at.Add(time.Second)
	cur.self.At = cur.at
	host, gen := h.between(prev, cur)

	m := host.HostMetrics
	if m.CPUs != 2 || m.BusyCores != 1.9 || m.StealCores != 0.2 || m.Runnable != 3 || m.Load1 != 3.5 {
		t.Errorf("cpu: %+v", m)
	}
	if m.MemTotalBytes != 8000000*1024 || m.MemAvailableBytes != 300000*1024 {
		t.Errorf("memory: %+v", m)
	}
	if m.PSI == nil || m.PSI.CPUSome != 0.6 || m.PSI.MemoryFull != 0.1 || m.PSI.MemorySome != 0.2 {
		t.Errorf("psi: %+v", m.PSI)
	}
	if m.GeneratorLimitCores != 1.5 { // GOMAXPROCS 8, 5 CPUs allowed, parent quota 1.5
		t.Errorf("limit = %v", m.GeneratorLimitCores)
	}
	if m.GeneratorCPUs != 2 || m.GeneratorCPUsBusyCores != 1.9 { // of the 5 allowed, 2 are online: 190 of 200 ticks busy
		t.Errorf("allowed CPUs %d busy %v", m.GeneratorCPUs, m.GeneratorCPUsBusyCores)
	}
	if m.GeneratorWaitCores == nil || *m.GeneratorWaitCores != 0.3 {
		t.Errorf("wait = %v", m.GeneratorWaitCores)
	}
	if m.GeneratorWaitPerSliceMs == nil || *m.GeneratorWaitPerSliceMs != 1.5 { // 300 ms over 200 slices
		t.Errorf("wait per slice = %v", m.GeneratorWaitPerSliceMs)
	}
	if gen.Role != "generator" || gen.Name != "tokex-generator" || gen.CPUMillicores != 500 || gen.MemoryBytes != 2048*1024 || !gen.At.Equal(host.At) {
		t.Errorf("generator resource: %+v", gen)
	}
	if why := stats.Saturation(&m); !strings.Contains(why, "CPU 95% busy") || !strings.Contains(why, "steal 10%") ||
		!strings.Contains(why, "memory 3.8% available") || !strings.Contains(why, "memory stalls 10%") {
		t.Errorf("saturation: %q", why)
	}
}

func TestCPULimitSources(t *testing.T) {
	cases := []struct {
		name     string
		files    map[string]string
		maxProcs int
		want     float64
	}{
		{"GOMAXPROCS only", map[string]string{"proc/1/status": "Name:\tx\n"}, 2, 2},
		{"pinned to one core", map[string]string{"proc/1/status": "Cpus_allowed_list:\t1\n"}, 2, 1},
		{"cgroup v1 quota", map[string]string{"proc/1/status": "Cpus_allowed_list:\t0-1\n", "proc/1/cgroup": "4:memory:/x\n1:cpu,cpuacct:/job\n",
			"sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us": "50000\n", "sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us": "100000\n"}, 2, 0.5},
		{"cgroup v1 unlimited", map[string]string{"proc/1/cgroup": "1:cpu:/\n", "sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n",
			"sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n"}, 2, 2},
		{"cgroup path escaping the mount is ignored", map[string]string{"proc/1/cgroup": "0::/../../etc\n", "sys/fs/cgroup/cpu.max": "max 100000\n",
			"etc/cpu.max": "1000 100000\n"}, 4, 4},
		{"nothing known", map[string]string{}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			f := fakeHost{t, root}
			for p, b := range c.files {
				f.write(p, b)
			}
			h := &HostSampler{Root: root, PID: 1}
			if c.maxProcs > 0 {
				h.MaxProcs = func() int { return c.maxProcs }
			}
			status, _ := os.ReadFile(filepath.Join(root, "proc/1/status"))
			if got := h.cpuLimit("proc/1", status); got != c.want {
				t.Errorf("limit = %v, want %v", got, c.want)
			}
		})
	}
}

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string]int{"0": 1, "0-1": 2, "0-3,8,10-11": 7, "": 0, "3-1": 0, "x": 0, "-1": 0, "0-4294967295": 0, "0-8191": 8192} {
		if got := len(parseCPUList(in)); got != want {
			t.Errorf("%q: %d, want %d", in, got, want)
		}
	}
}

// Pinned to the busy CPU of two, the generator is starved though the host
// is half idle.
func TestPinnedToABusyCPU(t *testing.T) {
	root := t.TempDir()
	f := fakeHost{t, root}
	f.write("proc/42/status", "Cpus_allowed_list:\t0\n")
	h := &HostSampler{Root: root, PID: 42, MaxProcs: func() int { return 2 }}
	f.state(1000, 1000, 0, 0, 1, 100, [2]uint64{}, 0, 0)
	a, err := h.read()
	if err != nil {
		t.Fatal(err)
	}
	f.state(1098, 1102, 0, 0, 1, 130, [2]uint64{}, 0, 0) // cpu0 98 of 98 ticks busy, cpu1 idle
	f.write("proc/meminfo", "MemTotal: 8000000 kB\nMemAvailable: 6000000 kB\n")
	b, err := h.read()
	if err != nil {
		t.Fatal(err)
	}
	b.at = a.at.Add(time.Second)
	b.self.At = b.at
	host, gen := h.between(a, b)
	if stats.Saturation(&host.HostMetrics) != "" {
		t.Errorf("a half-idle host is saturated: %q", stats.Saturation(&host.HostMetrics))
	}
	if why := stats.Starvation(&host.HostMetrics, gen.CPUMillicores/1000); why != "the 1 of 2 CPUs it may run on were 100% busy" {
		t.Errorf("starvation = %q (%+v)", why, host.HostMetrics)
	}
}

// Without PSI or schedstat (older kernels), those fields are unknown, not zero.
func TestHostSamplerWithoutPSIOrSchedstat(t *testing.T) {
	root := t.TempDir()
	f := fakeHost{t, root}
	f.state(1000, 1000, 0, 0, 1, 100, [2]uint64{}, 0, 0)
	for _, p := range []string{"proc/pressure", "proc/42/task"} {
		if err := os.RemoveAll(filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	f.write("proc/42/status", "VmRSS:\t1 kB\n")
	h := &HostSampler{Root: root, PID: 42}
	a, err := h.read()
	if err != nil {
		t.Fatal(err)
	}
	b := a
	b.at = a.at.Add(time.Second)
	host, _ := h.between(a, b)
	if host.PSI != nil || host.GeneratorWaitCores != nil || host.GeneratorWaitPerSliceMs != nil || host.GeneratorLimitCores != 0 {
		t.Errorf("unknowns reported as figures: %+v", host.HostMetrics)
	}
}

// The sampler loop emits the generator's resource and the host sample with
// the same timestamp, and stops with its context.
func TestSampleHostEmitsPairs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var evs []event.Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		SampleHost(ctx, 10*time.Millisecond, &HostSampler{PID: os.Getpid(), Label: "g"}, func(e event.Event) {
			evs = append(evs, e)
			if len(evs) == 4 {
				cancel()
			}
		}, func(msg string) { t.Error(msg) })
	}()
	<-done
	if len(evs) < 4 {
		t.Fatalf("%d events", len(evs))
	}
	r, ok1 := evs[0].(event.Resource)
	h, ok2 := evs[1].(event.Host)
	if !ok1 || !ok2 || !r.At.Equal(h.At) || h.CPUs < 1 || h.MemTotalBytes <= 0 {
		t.Errorf("first pair: %+v %+v", evs[0], evs[1])
	}
}

func TestLowerPriorityWorkIsNotContention(t *testing.T) {
	stat := []byte("cpu  100 300 50 500 50 0 0 0 0 0\ncpu0 100 300 50 500 50 0 0 0 0 0\nprocs_running 2\n")
	for _, tc := range []struct {
		nice     string
		wantIdle uint64
	}{
		{"0", 850},  // idle+iowait+nice: a nice-19 build yields to a nice-0 tokex
		{"-5", 850}, // higher priority still
		{"10", 550}, // tokex niced itself: nice time may be its own, and competes
	} {
		root := t.TempDir()
		f := fakeHost{t, root}
		f.write("proc/7/stat", "7 (tokex) S 1 7 7 0 -1 0 0 0 0 0 1 0 0 0 20 "+tc.nice+" 1 0 100 0 0\n")
		h := &HostSampler{Root: root, PID: 7}
		var r hostReading
		if err := parseProcStat(stat, &r, h.lowerPriorityIsIdle()); err != nil {
			t.Fatal(err)
		}
		if r.total != 1000 || r.idle != tc.wantIdle || r.perCPU[0] != [2]uint64{1000 - tc.wantIdle, 1000} {
			t.Errorf("nice %s: total %d idle %d perCPU %v, want idle %d", tc.nice, r.total, r.idle, r.perCPU[0], tc.wantIdle)
		}
	}
	if (&HostSampler{Root: t.TempDir(), PID: 7}).lowerPriorityIsIdle() {
		t.Error("an unreadable stat must count nice time as busy")
	}
	for _, bad := range []string{"", "7 (x", "7 (x) S 1", "7 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 z"} {
		if _, ok := statNice([]byte(bad)); ok {
			t.Errorf("statNice(%q) ok", bad)
		}
	}
}
