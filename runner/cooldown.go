package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// Pinger is implemented by a driver that can send one exchange between
// runs. A capacity search measures the server's unloaded latency with it
// before the first probe, and after a broken probe cools down until one
// answers at that latency again: a single-threaded server keeps serving
// the requests an overloaded probe abandoned, and a probe started before
// it is done measures that backlog, not its own rate.
type Pinger interface {
	// Ping sends one exchange, waiting timeout at most, and returns its
	// latency and whether the server answered (any HTTP status).
	Ping(ctx context.Context, timeout time.Duration) (time.Duration, bool)
}

// Cool-down rules (docs/cool-down.md).
const (
	baselinePings = 5
	// The engine is back near rest at rest + max(restMargin, restShare of
	// what the broken probe added); unknown rest: max(restMargin,
	// unknownRestShare of the probe's cores).
	restMargin       = 0.05
	restShare        = 0.10
	unknownRestShare = 0.20
	// A probe request answers at its unloaded latency u within
	// max(2u, u + latencySlack).
	latencySlack = 10 * time.Millisecond
	// Progress is said this often while cooling down.
	coolDownProgress = 5 * time.Second
)

// restWatch keeps the latest engine samples between runs.
type restWatch struct {
	mu      sync.Mutex
	samples map[string][]event.Resource // per member, the latest few
}

const restWatchKeep = 16

func (w *restWatch) observe(e event.Event) {
	r, ok := e.(event.Resource)
	if !ok || r.Role != "engine" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.samples == nil {
		w.samples = map[string][]event.Resource{}
	}
	if _, known := w.samples[r.Name]; !known && len(w.samples) >= 1024 {
		return
	}
	s := append(w.samples[r.Name], r)
	w.samples[r.Name] = s[max(0, len(s)-restWatchKeep):]
}

// seen reports whether the engine is sampled at all.
func (w *restWatch) seen() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.samples) > 0
}

// cores is the engine's cores over samples taken after since: each
// member's average, summed; false when none was taken.
func (w *restWatch) cores(since time.Time) (float64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var total float64
	found := false
	for _, ss := range w.samples {
		var sum float64
		n := 0
		for _, s := range ss {
			if s.At.After(since) {
				sum += s.CPUMillicores
				n++
			}
		}
		if n > 0 {
			total += sum / float64(n) / 1000
			found = true
		}
	}
	return total, found
}

// measureUnloaded times a few probe requests at rest, before the first
// probe: the latency a cool-down waits for (0: no Pinger, or no answer).
func (c *Campaign) measureUnloaded(ctx context.Context) {
	p, ok := c.Driver.(Pinger)
	if !ok || c.unloaded > 0 {
		return
	}
	var ms []time.Duration
	for range baselinePings {
		if d, answered := p.Ping(ctx, c.Cfg.Request.Timeout); answered {
			ms = append(ms, d)
		}
	}
	if len(ms) == 0 {
		c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "warn",
			Message: fmt.Sprintf("no answer to %d probe requests at rest: cool-downs watch the engine's CPU only", baselinePings)})
		return
	}
	slices.Sort(ms)
	c.unloaded = ms[len(ms)/2]
	c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "info", Message: fmt.Sprintf(
		"unloaded latency %s: the median of %d probe requests at rest (sent outside any run), what a cool-down waits for", ms3(c.unloaded), baselinePings)})
}

// coolTarget is the engine cores a cool-down waits for: near rest
// (campaign.idle), judged against what the broken probe ran at.
func (c *Campaign) coolTarget(prev *stats.Run) (target float64, rest *float64) {
	var load float64
	if prev != nil && prev.EngineCPU != nil {
		load = prev.EngineCPU.AvgCores
	}
	if c.idle != nil {
		r := c.idle.Cores
		return r + max(restMargin, restShare*(load-r)), &r
	}
	return max(restMargin, unknownRestShare*load), nil
}

// settle cools down after a broken probe, before next, until the engine's
// CPU is back near rest and a probe request answers at its unloaded
// latency, for bound at most; with neither to watch, for the old fixed
// time (the warmup, at least 5 s). What happened is said as it goes and
// returned for the next run's stats.
func (c *Campaign) settle(ctx context.Context, next curve.Step, prev *stats.Run) *curve.CoolDown {
	bound := next.CoolDown
	w := c.restWatch()
	pinger, _ := c.Driver.(Pinger)
	watchCPU, watchLatency := w != nil && w.seen(), pinger != nil && c.unloaded > 0
	cd := &curve.CoolDown{BoundSeconds: bound.Seconds()}
	start := time.Now()
	if !watchCPU && !watchLatency {
		d := min(bound, max(c.Cfg.Warmup, 5*time.Second))
		c.coolLog("cooling down %s after a broken probe (no engine samples and no probe request to watch), then %s", d, curve.RateLabel(next.Rate))
		sleep(ctx, d)
		cd.Seconds, cd.Reason = round1(time.Since(start).Seconds()), "a fixed time: nothing to watch"
		return cd
	}
	target, rest := c.coolTarget(prev)
	if watchCPU {
		cd.TargetCores, cd.RestCores = &target, rest
	}
	tol := max(2*c.unloaded, c.unloaded+latencySlack)
	if watchLatency {
		u, m := ms(c.unloaded), ms(tol)
		cd.UnloadedMs, cd.MaxProbeMs = &u, &m
	}
	var said time.Time
	for ctx.Err() == nil {
		sleep(ctx, c.Cfg.Sampling)
		now := time.Now()
		cores, fresh := 0.0, false
		if watchCPU {
			cores, fresh = w.cores(maxTime(start, now.Add(-2*c.Cfg.Sampling)))
			cd.EngineCores = &cores
		}
		cpuOK := !watchCPU || (fresh && cores <= target)
		pingOK := !watchLatency
		if watchLatency && cpuOK {
			d, answered := pinger.Ping(ctx, min(c.Cfg.Request.Timeout, max(time.Second, bound-time.Since(start))))
			cd.Probes++
			cd.ProbeMs = nil // not answered
			if answered {
				pm := ms(d)
				cd.ProbeMs = &pm
			}
			pingOK = answered && d <= tol
		}
		elapsed := time.Since(start)
		cd.Seconds, cd.Settled = round1(elapsed.Seconds()), cpuOK && pingOK
		if cd.Settled || elapsed >= bound || now.Sub(said) >= coolDownProgress {
			said = now
			c.coolLog("%s", coolLine(cd, next, fresh))
		}
		if cd.Settled || elapsed >= bound {
			break
		}
	}
	cd.Reason = coolReason(cd, ctx.Err() != nil)
	if !cd.Settled && ctx.Err() == nil {
		c.Bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "warn", Message: "cool-down bound reached before the server was back at rest: " +
			cd.Reason + "; the next probe may measure the backlog (capacity.cool_down raises the bound)"})
	}
	return cd
}

// restWatch is the campaign's watch of the engine between runs.
func (c *Campaign) restWatch() *restWatch {
	if c.idleOut == nil {
		return nil
	}
	return c.idleOut.rest
}

// coolLog says the cool-down's progress (Source "cool-down": the dashboard
// shows the latest in the capacity search's title).
func (c *Campaign) coolLog(format string, args ...any) {
	c.Bus.Emit(event.Log{At: time.Now(), Source: event.CoolDownSource, Level: "info", Message: fmt.Sprintf(format, args...)})
}

// coolLine is one progress line: "cooling down before 50/s: engine 0.93
// cores (≤ 0.11, at rest 0.01), probe request 1.84 s (≤ 13 ms); 12 s of at
// most 1m0s".
func coolLine(cd *curve.CoolDown, next curve.Step, fresh bool) string {
	s := "cooling down before " + curve.RateLabel(next.Rate) + ":"
	if cd.Settled {
		s = fmt.Sprintf("cooled down in %.1f s, then %s:", cd.Seconds, curve.RateLabel(next.Rate))
	}
	if cd.TargetCores != nil {
		switch {
		case !fresh:
			s += " engine not sampled yet"
		default:
			s += fmt.Sprintf(" engine %.2f cores (≤ %.2f", *cd.EngineCores, *cd.TargetCores)
			if cd.RestCores != nil {
				s += fmt.Sprintf(", at rest %.2f", *cd.RestCores)
			}
			s += ")"
		}
	}
	if cd.MaxProbeMs != nil {
		if cd.TargetCores != nil {
			s += ","
		}
		switch {
		case cd.ProbeMs != nil:
			s += fmt.Sprintf(" probe request %s (≤ %s)", msLabel(*cd.ProbeMs), msLabel(*cd.MaxProbeMs))
		case cd.Probes > 0:
			s += " probe request not answered"
		default:
			s += " no probe request yet"
		}
	}
	if !cd.Settled {
		s += fmt.Sprintf("; %.0f s of at most %.0f s", cd.Seconds, cd.BoundSeconds)
	}
	return s
}

// coolReason says why the cool-down ended.
func coolReason(cd *curve.CoolDown, interrupted bool) string {
	switch {
	case interrupted:
		return "interrupted"
	case cd.Settled && cd.MaxProbeMs != nil && cd.TargetCores != nil:
		return "the engine's CPU back near rest and a probe request at its unloaded latency"
	case cd.Settled && cd.TargetCores != nil:
		return "the engine's CPU back near rest (no probe request to time)"
	case cd.Settled:
		return "a probe request at its unloaded latency (no engine samples)"
	}
	return fmt.Sprintf("the bound, %.0f s, ran out", cd.BoundSeconds)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func ms3(d time.Duration) string { return msLabel(ms(d)) }

// msLabel is "3.1 ms" or "1.84 s".
func msLabel(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.1f ms", v)
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
