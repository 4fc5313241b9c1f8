package stats

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tokex-dev/tokex/collector/sample"
)

// The rules that say whether a run's figures are the server's. Each works
// on one sample (so the dashboard can show it live) and on the measured
// window of a run (the warning in stats.json). Bounds are documented in
// docs/warnings.md ("The machine, the generator and the host").
const (
	// LateFloorMs: a send lag p99 below this is timer and scheduling noise.
	LateFloorMs = 5.0
	// StarvedCPUShare: a generator using this share of the cores it may use
	// is at its limit; its goroutines queue for a CPU.
	StarvedCPUShare = 0.9
	// StarvedWaitMs: before each time slice, the generator's threads waited
	// this long on average runnable but not running (another thread held
	// the CPU); a request wakes them a few times, so latency grows by a few
	// times this. An idle machine shows microseconds.
	StarvedWaitMs = 1.0
	// SaturatedBusyShare: the host's CPUs were this busy (steal included);
	// above it every runnable thread, the server's included, queues.
	SaturatedBusyShare = 0.9
	// SaturatedStealShare: the hypervisor withheld this share of the CPUs.
	SaturatedStealShare = 0.1
	// SaturatedMemAvailable: less than this share of memory was available.
	SaturatedMemAvailable = 0.05
	// SaturatedMemFull: all non-idle tasks stalled on memory this share of
	// the time (PSI memory "full").
	SaturatedMemFull = 0.05
	// TimeoutsHeavyShare: from this share of a run's requests ending in
	// the client's timeout, its p95 is that timeout, not a latency the
	// server gave (timed-out requests are the slowest).
	TimeoutsHeavyShare = 0.05
	// BadShare: a run is flagged when at least this share of its measured
	// samples (and at least one) broke a per-sample rule.
	BadShare = 0.1
)

// finding is one broken per-sample rule: the rule (key), what this sample
// showed (text) and the figure behind it (value, in the key's unit).
type finding struct {
	key, unit, text string
	value           float64
}

func joinText(fs []finding) string {
	var t []string
	for _, f := range fs {
		t = append(t, f.text)
	}
	return strings.Join(t, ", ")
}

// Saturation names why the host was saturated in sample h ("" if not).
func Saturation(h *sample.HostMetrics) string { return joinText(saturation(h)) }

func saturation(h *sample.HostMetrics) []finding {
	var fs []finding
	if h.CPUs > 0 {
		n := float64(h.CPUs)
		if v := 100 * h.BusyCores / n; v >= 100*SaturatedBusyShare {
			fs = append(fs, finding{fmt.Sprintf("CPU ≥ %.0f%% busy", 100*SaturatedBusyShare), "%", fmt.Sprintf("CPU %.0f%% busy", v), v})
		}
		if v := 100 * h.StealCores / n; v >= 100*SaturatedStealShare {
			fs = append(fs, finding{fmt.Sprintf("steal ≥ %.0f%%", 100*SaturatedStealShare), "%", fmt.Sprintf("steal %.0f%%", v), v})
		}
	}
	if h.MemTotalBytes > 0 {
		if v := 100 * float64(h.MemAvailableBytes) / float64(h.MemTotalBytes); v < 100*SaturatedMemAvailable {
			fs = append(fs, finding{fmt.Sprintf("memory < %.0f%% available", 100*SaturatedMemAvailable), "%", fmt.Sprintf("memory %.1f%% available", v), v})
		}
	}
	if h.PSI != nil {
		if v := 100 * h.PSI.MemoryFull; v >= 100*SaturatedMemFull {
			fs = append(fs, finding{fmt.Sprintf("memory stalls ≥ %.0f%% of the time", 100*SaturatedMemFull), "%", fmt.Sprintf("memory stalls %.0f%% of the time", v), v})
		}
	}
	return fs
}

// Starvation names why the generator lacked CPU in sample h ("" if
// not); cores is its CPU use over the same interval.
func Starvation(h *sample.HostMetrics, cores float64) string { return joinText(starvation(h, cores)) }

func starvation(h *sample.HostMetrics, cores float64) []finding {
	var fs []finding
	if l := h.GeneratorLimitCores; l > 0 && cores >= StarvedCPUShare*l {
		fs = append(fs, finding{fmt.Sprintf("≥ %.0f%% of the %.4g cores it may use", 100*StarvedCPUShare, l), " cores",
			fmt.Sprintf("used %.2f of the %.4g cores it may use", cores, l), cores})
	}
	// Pinned to fewer CPUs than the host has, and those are full: the host
	// rule cannot see it.
	if n := h.GeneratorCPUs; n > 0 && n < h.CPUs && h.GeneratorCPUsBusyCores >= SaturatedBusyShare*float64(n) {
		fs = append(fs, finding{fmt.Sprintf("the %d of %d CPUs it may run on ≥ %.0f%% busy", n, h.CPUs, 100*SaturatedBusyShare), "%",
			fmt.Sprintf("the %d of %d CPUs it may run on were %.0f%% busy", n, h.CPUs, 100*h.GeneratorCPUsBusyCores/float64(n)), 100 * h.GeneratorCPUsBusyCores / float64(n)})
	}
	if w := h.GeneratorWaitPerSliceMs; w != nil && *w >= StarvedWaitMs {
		fs = append(fs, finding{fmt.Sprintf("its threads waiting ≥ %g ms for a CPU each time", StarvedWaitMs), " ms",
			fmt.Sprintf("its threads waited %.1f ms for a CPU each time", *w), *w})
	}
	return fs
}

// timeoutsHeavy is the run's timeouts_heavy warning, when at least
// TimeoutsHeavyShare of its requests timed out.
func timeoutsHeavy(run string, timeouts, requests int64) *Warning {
	share := float64(timeouts) / float64(max(requests, 1))
	if timeouts == 0 || share < TimeoutsHeavyShare {
		return nil
	}
	w := Warn(WarnTimeoutsHeavy, run, fmt.Sprintf("%d of %d requests (%.1f%%) ended in the client's timeout: the latency percentiles "+
		"from about p%.4g up are that timeout, not the server's answer, and the server's work on them is in the CPU per exchange "+
		"of the requests it answered", timeouts, requests, 100*share, math.Floor(1000*(1-share))/10))
	return &w
}

// LateBound is the send-lag p99 (ms) above which the generator did not keep
// its schedule: the arrival interval (1/rate), or the median latency when
// that is shorter (a lag that size is a visible share of every figure), but
// never below LateFloorMs.
func LateBound(rate, latencyP50 float64) float64 {
	b := math.Inf(1)
	if rate > 0 {
		b = 1000 / rate
	}
	if latencyP50 > 0 {
		b = min(b, latencyP50)
	}
	return max(LateFloorMs, b)
}

// generatorLate checks the run's measured send lag against LateBound.
func (r *Run) generatorLate() *Warning {
	if r.Requests == 0 {
		return nil
	}
	bound := LateBound(r.TargetRPS, r.LatencyMs.P50)
	lag, what := r.lateLag()
	if lag <= bound {
		return nil
	}
	w := Warn(WarnGeneratorLate, r.ID, fmt.Sprintf("%s %.1f ms exceeds %.1f ms (arrival interval %.1f ms, latency p50 %.1f ms): "+
		"the generator did not keep its schedule, so latency includes its own delay", what, lag, bound, 1000/r.TargetRPS, r.LatencyMs.P50))
	return &w
}

// hostTally applies the per-sample rules to the host samples of the
// measured window as they come: the host's saturation and the starvation
// of tokex's generator (whose CPU comes from the generator resource row
// taken at the same instant).
type hostTally struct {
	n           int
	sat, starve tally
	// others: the cores processes other than the generator and the engine
	// used in saturated seconds, summed over nOthers of them.
	others  float64
	nOthers int
}

// add files one host sample of the window: c is the generator's cores at
// the same instant (hasGen: there is a generator sample there), eng the
// engines' in its second.
func (t *hostTally) add(h *sample.Host, c float64, hasGen bool, eng float64) {
	t.n++
	if t.sat.add(saturation(&h.HostMetrics), h) && hasGen {
		t.others += max(0, h.BusyCores-c-eng)
		t.nOthers++
	}
	if hasGen {
		t.starve.add(starvation(&h.HostMetrics, c), h)
	}
}

// hostWarnings are the run's host_saturated and generator_starved.
func (r *Run) hostWarnings(t *hostTally) []Warning {
	sat, starve, n := &t.sat, &t.starve, t.n
	var out []Warning
	if Flags(sat.n, n) {
		d := fmt.Sprintf("host saturated in %d of %d measured seconds (%s; up to %d runnable threads on %d CPUs",
			sat.n, n, sat.reasons(), sat.maxRunnable, sat.cpus)
		if t.nOthers > 0 {
			d += fmt.Sprintf("; processes other than the generator and the engine used %.2f cores on average", t.others/float64(t.nOthers))
		}
		d += "): latency and CPU per exchange include queueing for the machine, not only the server"
		out = append(out, Warn(WarnHostSaturated, r.ID, d))
	}
	if Flags(starve.n, n) {
		out = append(out, Warn(WarnGeneratorStarved, r.ID, fmt.Sprintf("tokex generator starved of CPU in %d of %d measured seconds (%s): "+
			"latency includes the time it waited to send and to read responses", starve.n, n, starve.reasons())))
	}
	return out
}

// tally counts flagged samples, and per rule how often it broke and the
// mean figure when it did. A rule's name holds the sample's figures (the
// cores the generator may use, its CPUs), so a hostile host.csv could
// make each sample's rule new: past maxRules, new ones are only counted.
type tally struct {
	n, maxRunnable, cpus int
	rules                []string
	count                map[string]int
	sum                  map[string]float64
	unit                 map[string]string
	unlisted             int // findings of rules past maxRules
}

// maxRules bounds the rules a run's warning lists.
const maxRules = 16

func (t *tally) add(fs []finding, h *sample.Host) bool {
	if len(fs) == 0 {
		return false
	}
	if t.count == nil {
		t.count, t.sum, t.unit = map[string]int{}, map[string]float64{}, map[string]string{}
	}
	t.n++
	t.maxRunnable = max(t.maxRunnable, h.Runnable)
	t.cpus = h.CPUs
	for _, f := range fs {
		if t.count[f.key] == 0 {
			if len(t.rules) >= maxRules {
				t.unlisted++
				continue
			}
			t.rules = append(t.rules, f.key)
		}
		t.count[f.key]++
		t.sum[f.key] += f.value
		t.unit[f.key] = f.unit
	}
	return true
}

// reasons lists each broken rule with its seconds and mean, most frequent first.
func (t *tally) reasons() string {
	keys := append([]string(nil), t.rules...)
	sort.SliceStable(keys, func(i, j int) bool { return t.count[keys[i]] > t.count[keys[j]] })
	var parts []string
	for _, k := range keys {
		prec := 0
		if t.unit[k] != "%" {
			prec = 2
		}
		parts = append(parts, fmt.Sprintf("%s in %d s, mean %.*f%s", k, t.count[k], prec, t.sum[k]/float64(t.count[k]), t.unit[k]))
	}
	if t.unlisted > 0 {
		parts = append(parts, fmt.Sprintf("%d more findings of rules past the first %d, not listed", t.unlisted, maxRules))
	}
	return strings.Join(parts, "; ")
}

// Flags reports whether a per-sample rule that broke in k of a run's n
// measured samples makes the run's warning: in BadShare of them, and at
// least one.
func Flags(k, n int) bool { return k > 0 && float64(k) >= BadShare*float64(n) }
