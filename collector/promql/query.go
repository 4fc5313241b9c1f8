package promql

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Target is what is measured: the CPU-seconds counter and the memory gauge
// of the engine's series, the labels that name a member (a Pod, a scraped
// process), and the members that must have series.
type Target struct {
	CPU    Selector
	Memory *Selector // nil: memory not asked
	By     []string
	// Expect are the members that must answer (the engine Pods the kube
	// driver selected); nil: whatever series the selectors match.
	Expect []string
}

// cAdvisor's series of a container's CPU and memory, as the kubelet exposes
// them to Prometheus.
const (
	CAdvisorCPU    = "container_cpu_usage_seconds_total"
	CAdvisorMemory = "container_memory_working_set_bytes"
)

// CAdvisor is the default target of the kube driver: the engine Pods'
// containers in cAdvisor's series (container!="" leaves out the Pod-level
// sums, container!="POD" the pause container), a member per Pod.
func CAdvisor(namespace string, pods []string) Target {
	ms := []Matcher{{Name: "namespace", Op: "=", Value: namespace}}
	if len(pods) > 0 {
		alt := make([]string, len(pods))
		for i, p := range pods {
			alt[i] = regexp.QuoteMeta(p)
		}
		ms = append(ms, Matcher{Name: "pod", Op: "=~", Value: strings.Join(alt, "|")})
	}
	ms = append(ms, Matcher{Name: "container", Op: "!=", Value: ""}, Matcher{Name: "container", Op: "!=", Value: "POD"})
	mem := Selector{Metric: CAdvisorMemory, Matchers: ms}
	return Target{CPU: Selector{Metric: CAdvisorCPU, Matchers: ms}, Memory: &mem, By: []string{"pod"}, Expect: pods}
}

// ByProcess names a member of user-given selectors: the scrape job and
// instance (one process each).
var ByProcess = []string{"job", "instance"}

// Window is a run's measured window as the queries see it: its end to the
// millisecond (Prometheus's resolution) and its length in whole
// milliseconds, so a range [Len] evaluated at To covers From…To exactly.
type Window struct {
	From, To time.Time
}

// NewWindow is the window from..to at millisecond resolution: To truncated,
// the length rounded, From = To − length.
func NewWindow(from, to time.Time) Window {
	end := to.Truncate(time.Millisecond)
	length := to.Sub(from).Round(time.Millisecond)
	return Window{From: end.Add(-length), To: end}
}

// Len is the window's length.
func (w Window) Len() time.Duration { return w.To.Sub(w.From) }

// Range is the length as a PromQL duration: "300s", or "5250ms".
func (w Window) Range() string { return duration(w.Len()) }

// duration renders d (at least 1 ms) as a PromQL duration.
func duration(d time.Duration) string {
	d = max(d.Round(time.Millisecond), time.Millisecond)
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
}

// ceilSeconds rounds d up to whole seconds, at least one.
func ceilSeconds(d time.Duration) time.Duration {
	return max(time.Second, time.Duration(math.Ceil(d.Seconds()))*time.Second)
}

func (t Target) by() string { return "sum by (" + strings.Join(t.By, ", ") + ") " }

// CPUQuery is each member's CPU in cores: the rate of its counter over the
// whole window, its series summed.
func (t Target) CPUQuery(w Window) string {
	return t.by() + "(rate(" + t.CPU.String() + "[" + w.Range() + "]))"
}

// MemoryQuery is each member's memory averaged over the window.
func (t Target) MemoryQuery(w Window) string {
	if t.Memory == nil {
		return ""
	}
	return t.by() + "(avg_over_time(" + t.Memory.String() + "[" + w.Range() + "]))"
}

// SamplesQuery counts each CPU series' samples in the window.
func (t Target) SamplesQuery(w Window) string {
	return "count_over_time(" + t.CPU.String() + "[" + w.Range() + "])"
}

// LastQuery is each CPU series' latest sample time at or before the time
// it is evaluated at (at the window's end: how close to it the data
// reach; at its start: whether the series was there).
func (t Target) LastQuery() string { return "timestamp(" + t.CPU.String() + ")" }

// GapStep is the gap query's resolution: a second, or a thousandth of a
// long window.
func GapStep(w Window) time.Duration { return ceilSeconds(w.Len() / 1000) }

// GapQuery is each CPU series' longest time without a sample inside the
// window, at GapStep's resolution: missed scrapes show as a gap.
func (t Target) GapQuery(w Window) string {
	return "max_over_time((time() - timestamp(" + t.CPU.String() + "))[" + w.Range() + ":" + duration(GapStep(w)) + "])"
}

// PeakRange is the range of the short rates the peak is the highest of:
// four scrape intervals (Prometheus's advice for rate), at least 2 s;
// 0 when the window is shorter than two of them.
func PeakRange(w Window, interval time.Duration) time.Duration {
	r := max(ceilSeconds(4*interval), 2*time.Second)
	if w.Len() < 2*r {
		return 0
	}
	return r
}

// PeakQuery is the highest total CPU of short ranges inside the window
// ("" when the window is too short for one).
func (t Target) PeakQuery(w Window, interval time.Duration) string {
	r := PeakRange(w, interval)
	if r == 0 {
		return ""
	}
	step := ceilSeconds(interval)
	inner := w.Len() - r // the short ranges lie inside the window
	return fmt.Sprintf("max_over_time(sum(rate(%s[%s]))[%s:%s])", t.CPU.String(), duration(r), duration(inner), duration(step))
}
