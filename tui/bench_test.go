package tui

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// longRun is a campaign four minutes into a 5-minute 500/s run of ten
// engine pods: full charts to draw.
func longRun() (*Model, event.PlannedRun, time.Time) {
	run := event.PlannedRun{ID: "04-r1-500rps", Index: 4, Round: 1, TargetRPS: 500, Warmup: 30 * time.Second, Duration: 5 * time.Minute, Agents: 10}
	plan := []event.PlannedRun{{ID: "00-sanity", Sanity: true, TargetRPS: 100, Duration: 30 * time.Second}, run}
	m := New(Options{Live: true})
	m.Apply(event.CampaignStarted{At: t0, ID: "bench", Name: "bench", Driver: "kube (ctx/ns)", Runs: plan, Thresholds: stats.Thresholds{P95Ms: 20}})
	m.Apply(event.RunStarted{At: t0, Run: run})
	at := t0
	for s := 0; s < 240; s++ {
		at = t0.Add(time.Duration(s) * time.Second)
		for _, e := range second(run, at, s, 10, 0) {
			m.Apply(e)
		}
	}
	return m, run, at
}

// second is one second of a run's stream: its window, the host, the
// generator, engines pods' samples and agents' statuses.
func second(run event.PlannedRun, at time.Time, s, engines, agents int) []event.Event {
	lat := 8 + float64(s%7)
	evs := []event.Event{
		event.Window{At: at, Seconds: 1, RunID: run.ID, Phase: stats.Measured, TargetRPS: 500, Completed: 498, OK: 497, Errors: 1, Dropped: 2,
			ErrorKinds: map[string]int64{"oauth_error:invalid_grant": 1}, Latency: stats.Latency{Count: 498, P50: lat / 2, P95: lat, P99: lat * 1.4}},
		event.Host{At: at, HostMetrics: sample.HostMetrics{CPUs: 16, BusyCores: 6, Runnable: 3}},
		event.Resource{At: at, Role: "generator", Name: "gen", CPUMillicores: 900},
	}
	for e := 0; e < engines; e++ {
		evs = append(evs, event.Resource{At: at, Role: "engine", Name: fmt.Sprintf("pingfederate-%d", e), CPUMillicores: 240 + float64((s+e)%30), MemoryBytes: 2 << 30})
	}
	for a := 0; a < agents; a++ {
		evs = append(evs, event.AgentStatus{At: at, RunID: run.ID, Agent: a, Name: fmt.Sprintf("agent-%d", a), State: "running", Sent: int64(s * 5), OK: int64(s * 5)})
	}
	return evs
}

// BenchmarkFrame is one 200×60 frame with charts to redraw (an event
// arrived since the last frame): the brief wants it under 2 ms.
// In colour (truecolor) each run of one colour costs an escape sequence.
func BenchmarkFrame(b *testing.B) {
	defer lipgloss.SetColorProfile(termenv.Ascii)
	for _, p := range []termenv.Profile{termenv.Ascii, termenv.TrueColor} {
		b.Run(p.Name(), func(b *testing.B) {
			lipgloss.SetColorProfile(p)
			m, _, _ := longRun()
			m.SetSize(200, 60)
			b.ResetTimer()
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				m.grid.cache = nil // every chart redrawn, as after a resize
				_ = m.View()
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU this process used (user and system): on a shared
// machine the time a benchmark waits for a core is not its cost.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStream500 is one second of a 500 events/s stream as the
// program delivers it: 20 batches (one per 50 ms frame), each applied and
// drawn at 200×60. An op is one second of stream, so the dashboard's share
// of a core is its CPU time ÷ 1e7 % (reported as %core, from the process's
// CPU time: the garbage collector's too, the waits for a core not).
func BenchmarkStream500(b *testing.B) {
	m, run, at := longRun()
	m.SetSize(200, 60)
	evs := append([]event.Event(nil), second(run, at.Add(time.Second), 241, 60, 437)...)
	if len(evs) != 500 {
		b.Fatalf("%d events a second", len(evs))
	}
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		for f := 0; f < 20; f++ {
			m.Update(eventsMsg(evs[f*25 : (f+1)*25]))
			_ = m.View()
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e7, "%core")
}
