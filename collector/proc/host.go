package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
)

// HostSampler reads the machine that runs tokex's load generator, and the
// generator's own process: host CPU busy and steal (/proc/stat), runnable
// threads and load, memory (/proc/meminfo), pressure stall information
// (/proc/pressure), and for the process its CPU, memory, the cores it may
// use (GOMAXPROCS, affinity, cgroup quota) and how long its threads waited
// for a CPU (/proc/<pid>/task/*/schedstat).
type HostSampler struct {
	Root     string     // "" is "/"; tests point it at a fake tree
	PID      int        // the generator's process
	Label    string     // its resource name
	MaxProcs func() int // GOMAXPROCS; nil when unknown
}

// hostReading is one set of cumulative counters.
type hostReading struct {
	at                 time.Time
	total, idle, steal uint64            // USER_HZ ticks of all CPUs; idle includes iowait (and nice, see idleTicks)
	perCPU             map[int][2]uint64 // cpu number -> busy, total ticks
	cpus, running      int
	allowed            []int // the CPUs the process may run on
	load1              float64
	memTotal, memAvail int64
	psi                []int64 // µs stalled: cpu some, memory some, memory full; nil if absent
	self               Reading
	wait               float64 // seconds the process's threads were runnable but not running
	slices             uint64  // time slices they ran
	waitOK             bool
	limit              float64
}

func (h *HostSampler) path(p string) string { return filepath.Join(h.Root, "/", p) }

func (h *HostSampler) read() (hostReading, error) {
	r := hostReading{at: time.Now()}
	b, err := os.ReadFile(h.path("proc/stat"))
	if err != nil {
		return r, err
	}
	if err := parseProcStat(b, &r, h.lowerPriorityIsIdle()); err != nil {
		return r, fmt.Errorf("/proc/stat: %w", err)
	}
	if b, err := os.ReadFile(h.path("proc/loadavg")); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			r.load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	if b, err := os.ReadFile(h.path("proc/meminfo")); err == nil {
		r.memTotal, r.memAvail = meminfo(b)
	}
	r.psi = h.pressure()
	pid := fmt.Sprintf("proc/%d", h.PID)
	stat, err := os.ReadFile(h.path(pid + "/stat"))
	if err != nil {
		return r, err
	}
	if r.self.CPUSeconds, err = parseStat(stat); err != nil {
		return r, fmt.Errorf("/%s/stat: %w", pid, err)
	}
	r.self.At = r.at
	status, _ := os.ReadFile(h.path(pid + "/status"))
	r.self.MemoryBytes = parseRSS(status)
	r.allowed = allowedCPUs(status)
	_, r.wait, r.slices, r.waitOK = schedstat(h.path(pid + "/task"))
	r.limit = h.cpuLimit(pid, status)
	return r, nil
}

// HostCPU reads the host's cumulative busy (steal included) and total CPU
// time in seconds, and its online CPUs, from /proc/stat.
func HostCPU() (busy, total float64, cpus int, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, 0, err
	}
	var r hostReading
	if err := parseProcStat(b, &r, (&HostSampler{PID: os.Getpid()}).lowerPriorityIsIdle()); err != nil {
		return 0, 0, 0, err
	}
	return float64(r.total-r.idle) / clockTicks, float64(r.total) / clockTicks, r.cpus, nil
}

// lowerPriorityIsIdle says whether the host's nice time (work at a lower
// priority than the default) yields to the sampled process: true unless the
// process runs niced itself. The scheduler gives a nice-0 thread ~98 % of a
// CPU it shares with a nice-19 one, so a niced batch job is not contention.
func (h *HostSampler) lowerPriorityIsIdle() bool {
	b, err := os.ReadFile(h.path(fmt.Sprintf("proc/%d/stat", h.PID)))
	if err != nil {
		return false
	}
	n, ok := statNice(b)
	return ok && n <= 0
}

// statNice reads the nice field (19) of /proc/<pid>/stat.
func statNice(b []byte) (int, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 17 { // state is field 3; nice is field 19
		return 0, false
	}
	n, err := strconv.Atoi(f[16])
	return n, err == nil
}

// parseProcStat reads the aggregate cpu line, the per-CPU lines and
// procs_running; niceIdle counts nice time as idle.
func parseProcStat(b []byte, r *hostReading, niceIdle bool) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	seen := false
	r.perCPU = map[int][2]uint64{}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 0:
		case f[0] == "cpu":
			var err error
			if r.total, r.idle, r.steal, err = cpuTicks(f, niceIdle); err != nil {
				return err
			}
			seen = true
		case strings.HasPrefix(f[0], "cpu"):
			r.cpus++
			n, err1 := strconv.Atoi(f[0][3:])
			total, idle, _, err2 := cpuTicks(f, niceIdle)
			if err1 == nil && err2 == nil {
				r.perCPU[n] = [2]uint64{total - idle, total}
			}
		case f[0] == "procs_running" && len(f) > 1:
			r.running, _ = strconv.Atoi(f[1])
		}
	}
	if !seen {
		return errors.New("no cpu line")
	}
	return nil
}

// cpuTicks sums a cpu line of /proc/stat: user nice system idle iowait irq
// softirq steal (guest time is already in user and nice). Idle is idle plus
// iowait, and nice when niceIdle.
func cpuTicks(f []string, niceIdle bool) (total, idle, steal uint64, err error) {
	if len(f) < 9 {
		return 0, 0, 0, errors.New("short cpu line")
	}
	var v [8]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
			return 0, 0, 0, err
		}
		total += v[i]
	}
	idle = v[3] + v[4]
	if niceIdle {
		idle += v[1]
	}
	return total, idle, v[7], nil
}

func meminfo(b []byte) (total, avail int64) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "MemTotal:":
			total = kb * 1024
		case "MemAvailable:":
			avail = kb * 1024
		}
	}
	return total, avail
}

// pressure reads PSI totals: cpu some, memory some, memory full (µs).
func (h *HostSampler) pressure() []int64 {
	out := make([]int64, 0, 3)
	for _, want := range []struct{ file, line string }{{"cpu", "some"}, {"memory", "some"}, {"memory", "full"}} {
		b, err := os.ReadFile(h.path("proc/pressure/" + want.file))
		if err != nil {
			return nil
		}
		v := int64(-1)
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || f[0] != want.line {
				continue
			}
			for _, kv := range f[1:] {
				if t, ok := strings.CutPrefix(kv, "total="); ok {
					v, _ = strconv.ParseInt(t, 10, 64)
				}
			}
		}
		if v < 0 {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// schedstat sums, over the threads in a task folder, the time they ran,
// the time they waited runnable for a CPU (seconds) and the time slices
// they ran (the three fields of schedstat). A thread that exits takes its
// share with it; rates are clamped at zero then.
func schedstat(taskDir string) (cpu, wait float64, slices uint64, ok bool) {
	tasks, err := os.ReadDir(taskDir)
	if err != nil {
		return 0, 0, 0, false
	}
	var run, delay uint64
	n := 0
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(taskDir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(b))
		if len(f) < 3 {
			continue
		}
		r, err1 := strconv.ParseUint(f[0], 10, 64)
		d, err2 := strconv.ParseUint(f[1], 10, 64)
		c, err3 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		run += r
		delay += d
		slices += c
		n++
	}
	return float64(run) / 1e9, float64(delay) / 1e9, slices, n > 0
}

// ProcessCPU is a process's CPU time in seconds, to the nanosecond from its
// threads' schedstat where the kernel has it, else to the clock tick.
func ProcessCPU(pid int) (float64, error) {
	if cpu, _, _, ok := schedstat(fmt.Sprintf("/proc/%d/task", pid)); ok {
		return cpu, nil
	}
	r, err := Process{PID: pid}.Read()
	return r.CPUSeconds, err
}

// Limit is the cores the process may use: the least of MaxProcs, its CPU
// affinity and its cgroup quota (0 when none is known).
func (h *HostSampler) Limit() float64 {
	pid := fmt.Sprintf("proc/%d", h.PID)
	status, _ := os.ReadFile(h.path(pid + "/status"))
	return h.cpuLimit(pid, status)
}

// cpuLimit is the least of GOMAXPROCS, the CPUs the process may run on
// and its cgroup's CPU quota (0: none known).
func (h *HostSampler) cpuLimit(pid string, status []byte) float64 {
	limit := math.Inf(1)
	if h.MaxProcs != nil {
		limit = float64(h.MaxProcs())
	}
	if n := len(allowedCPUs(status)); n > 0 {
		limit = min(limit, float64(n))
	}
	if b, err := os.ReadFile(h.path(pid + "/cgroup")); err == nil {
		if q := h.cgroupQuota(b); q > 0 {
			limit = min(limit, q)
		}
	}
	if math.IsInf(limit, 1) {
		return 0
	}
	return limit
}

// allowedCPUs reads Cpus_allowed_list from a /proc/<pid>/status.
func allowedCPUs(status []byte) []int {
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return parseCPUList(strings.TrimSpace(v))
		}
	}
	return nil
}

// maxCPUs bounds a CPU list (Linux allows at most 8192 CPUs).
const maxCPUs = 8192

// parseCPUList reads a list like "0-3,8,10-11"; nil when malformed.
func parseCPUList(s string) []int {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil
			}
		}
		if b >= maxCPUs || len(out)+b-a+1 > maxCPUs {
			return nil
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out
}

// cgroupQuota is the tightest CPU quota (cores) on the process's cgroup
// and its ancestors: cpu.max in cgroup v2, cpu.cfs_quota_us/period in v1.
func (h *HostSampler) cgroupQuota(cgroup []byte) float64 {
	quota := math.Inf(1)
	for _, line := range strings.Split(strings.TrimSpace(string(cgroup)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var mounts []string
		if parts[0] == "0" && parts[1] == "" {
			mounts = []string{"sys/fs/cgroup"}
		} else if ctrl := strings.Split(parts[1], ","); slices.Contains(ctrl, "cpu") {
			mounts = []string{"sys/fs/cgroup/" + parts[1], "sys/fs/cgroup/cpu"}
		}
		for _, m := range mounts {
			base := h.path(m)
			if _, err := os.Stat(base); err != nil {
				continue
			}
			for dir := filepath.Join(base, parts[2]); strings.HasPrefix(dir, base); dir = filepath.Dir(dir) {
				if q := quotaIn(dir); q > 0 {
					quota = min(quota, q)
				}
				if dir == base {
					break
				}
			}
			break
		}
	}
	if math.IsInf(quota, 1) {
		return 0
	}
	return quota
}

func quotaIn(dir string) float64 {
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 && f[0] != "max" {
			q, e1 := strconv.ParseFloat(f[0], 64)
			p, e2 := strconv.ParseFloat(f[1], 64)
			if e1 == nil && e2 == nil && p > 0 {
				return q / p
			}
		}
		return 0
	}
	qb, e1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
	pb, e2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
	if e1 != nil || e2 != nil {
		return 0
	}
	q, e1 := strconv.ParseFloat(strings.TrimSpace(string(qb)), 64)
	p, e2 := strconv.ParseFloat(strings.TrimSpace(string(pb)), 64)
	if e1 != nil || e2 != nil || q <= 0 || p <= 0 {
		return 0
	}
	return q / p
}

// between turns two readings into the events of the interval between them.
func (h *HostSampler) between(prev, cur hostReading) (event.Host, event.Resource) {
	m := sample.HostMetrics{CPUs: cur.cpus, Runnable: max(0, cur.running-1), Load1: cur.load1,
		MemTotalBytes: cur.memTotal, MemAvailableBytes: cur.memAvail, GeneratorLimitCores: cur.limit}
	if dt := float64(cur.total - prev.total); cur.total > prev.total {
		busy := dt - float64(cur.idle-prev.idle)
		m.BusyCores = round3(max(0, busy) / dt * float64(cur.cpus))
		m.StealCores = round3(float64(cur.steal-prev.steal) / dt * float64(cur.cpus))
	}
	// How busy the online CPUs the generator may run on were, by anyone.
	var busy, total uint64
	n := 0
	for _, c := range cur.allowed {
		a, okA := prev.perCPU[c]
		b, okB := cur.perCPU[c]
		if okA && okB && b[1] > a[1] && b[0] >= a[0] {
			busy, total, n = busy+b[0]-a[0], total+b[1]-a[1], n+1
		}
	}
	if total > 0 {
		m.GeneratorCPUs = n
		m.GeneratorCPUsBusyCores = round3(float64(busy) / float64(total) * float64(n))
	}
	wall := cur.at.Sub(prev.at).Seconds()
	if len(prev.psi) == 3 && len(cur.psi) == 3 && wall > 0 {
		share := func(i int) float64 { return round3(min(1, max(0, float64(cur.psi[i]-prev.psi[i])/1e6/wall))) }
		m.PSI = &sample.Pressure{CPUSome: share(0), MemorySome: share(1), MemoryFull: share(2)}
	}
	if prev.waitOK && cur.waitOK && wall > 0 {
		dw := max(0, cur.wait-prev.wait)
		w := round3(dw / wall)
		m.GeneratorWaitCores = &w
		if cur.slices > prev.slices {
			ms := round3(dw * 1000 / float64(cur.slices-prev.slices))
			m.GeneratorWaitPerSliceMs = &ms
		}
	}
	gen := event.Resource{At: cur.at, Role: "generator", Name: h.Label, CPUMillicores: Rate(prev.self, cur.self),
		MemoryBytes: cur.self.MemoryBytes, CPUSecondsTotal: cur.self.CPUSeconds, Source: "proc"}
	return event.Host{At: cur.at, HostMetrics: m}, gen
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// SampleHost emits, every interval until ctx ends, the generator's
// Resource and a Host event read at the same instant. A host that cannot
// be read (not Linux) is reported once through warn.
func SampleHost(ctx context.Context, interval time.Duration, h *HostSampler, emit func(event.Event), warn func(string)) {
	prev, err := h.read()
	if err != nil {
		warn("cannot sample the host: " + err.Error())
		return
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		cur, err := h.read()
		if err != nil {
			if ctx.Err() == nil {
				warn("stopped sampling the host: " + err.Error())
			}
			return
		}
		host, gen := h.between(prev, cur)
		emit(gen)
		emit(host)
		prev = cur
	}
}
