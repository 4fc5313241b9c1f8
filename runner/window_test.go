package runner

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/runner/config"
)

func TestWindowerBucketsBySecondAndPhase(t *testing.T) {
	var got []event.Window
	w := newWindower(event.PlannedRun{ID: "r", TargetRPS: 10}, func(e event.Event) { got = append(got, e.(event.Window)) }, func() int64 { return 3 })
	base := time.Unix(1000, 0).UnixMicro()
	add := func(offsetMS int64, ph stats.Phase, outcome exchange.Outcome, durUS int64) {
		w.Add(&stats.Request{Phase: ph, ScheduledUS: base + offsetMS*1000, SendLagUS: 0, DurationUS: durUS, Outcome: outcome})
	}
	add(100, stats.Warmup, "ok", 1000)
	add(200, stats.Measured, "ok", 2000)
	add(300, stats.Measured, "oauth_error", 4000)
	add(999, stats.Measured, "ok", 2000) // completes in the next second
	add(500, stats.Measured, "dropped", 0)
	add(600, stats.Measured, "aborted", 0)
	w.Flush(time.Unix(1001, 0)) // only second 1000
	if len(got) != 2 || got[0].Phase != stats.Warmup || got[1].Completed != 2 || got[1].Errors != 1 || got[1].Dropped != 1 || got[1].InFlight != 3 {
		t.Fatalf("first flush: %+v", got)
	}
	if got[1].Latency.P50 != 3 || got[1].Latency.Max != 4 {
		t.Errorf("latency digest %+v", got[1].Latency)
	}
	// The latency histogram (--metrics-addr): 2 ms in the 2 ms bucket, 4 ms
	// in the 5 ms one; dropped and aborted rows in none.
	want := make([]int64, len(event.LatencyBoundsMs)+1)
	want[2], want[3] = 1, 1
	if fmt.Sprint(got[1].LatencyBuckets) != fmt.Sprint(want) {
		t.Errorf("latency buckets %v, want %v", got[1].LatencyBuckets, want)
	}
	for us, i := range map[int64]int{0: 0, 500: 0, 501: 1, 10_000_000: 13, 10_000_001: 14} {
		if b := event.LatencyBucket(us); b != i {
			t.Errorf("%d µs in bucket %d, want %d", us, b, i)
		}
	}
	w.Flush(time.Time{})
	if len(got) != 3 || got[2].At.Unix() != 1001 || got[2].OK != 1 {
		t.Fatalf("final flush: %+v", got)
	}
}

func TestPlanOrderAndIDs(t *testing.T) {
	c := config.Article()
	p := Plan(&c)
	if len(p) != 10 || !p[0].Sanity || p[0].Warmup != 0 || p[0].TargetRPS != 100 {
		t.Fatalf("plan %+v", p[0])
	}
	want := []string{"00-sanity", "01-r1-100rps", "02-r1-250rps", "03-r1-500rps", "04-r2-100rps"}
	for i, id := range want {
		if p[i].ID != id || p[i].Index != i {
			t.Errorf("run %d = %s (index %d), want %s", i, p[i].ID, p[i].Index, id)
		}
	}
	c.Sanity.Enabled = false
	c.Stages = []float64{12.5}
	if p := Plan(&c); len(p) != 3 || p[0].ID != "00-r1-12.5rps" {
		t.Errorf("plan %+v", p)
	}
}

// windowRun feeds a 40/s run that starts 300 ms into a second (so seconds
// of the wall clock never line up with it) and answers every arrival in
// 5 ms; it returns the windows emitted live, one flush per 100 ms.
func windowRun(t *testing.T, warmup, duration, cut time.Duration) []event.Window {
	t.Helper()
	p := event.PlannedRun{ID: "r", TargetRPS: 40, Warmup: warmup, Duration: duration, Agents: 2}
	var got []event.Window
	w := newWindower(p, func(e event.Event) { got = append(got, e.(event.Window)) }, nil)
	start := time.Unix(1000, 300e6)
	w.Schedule(start)
	end := p.Total()
	if cut > 0 {
		end = warmup + cut
	}
	n := int(end.Seconds() * p.TargetRPS)
	stop := start.Add(end + 2*time.Second) // responses drain after the run's end
	if cut > 0 {
		stop = start.Add(end) // the driver returns at once
	}
	for now := start; now.Before(stop); now = now.Add(100 * time.Millisecond) {
		for k := 0; k < n; k++ {
			at := start.Add(time.Duration(k) * time.Second / 40)
			done := at.Add(5 * time.Millisecond)
			if done.Before(now) || !done.Before(now.Add(100*time.Millisecond)) {
				continue
			}
			ph := stats.Measured
			if at.Sub(start) < warmup {
				ph = stats.Warmup
			}
			w.Add(&stats.Request{Agent: k % 2, Seq: int64(k / 2), Phase: ph, ScheduledUS: at.UnixMicro(), SendLagUS: 0, DurationUS: 5000, Status: 200, Outcome: "ok"})
		}
		w.Flush(now.Add(-time.Second))
	}
	if cut > 0 {
		w.Cut(start.Add(end))
	}
	w.Flush(time.Time{})
	return got
}

// A run that does not start on a wall-clock second used to show its first
// and last measured seconds as partial windows averaged over a full second
// ("achieved 28/s" for 40/s). Windows now count each phase's own seconds,
// a partial last one carries its length, and late responses join it.
func TestWindowsAchieveTheTargetInEverySecond(t *testing.T) {
	cases := []struct {
		name                  string
		warmup, duration, cut time.Duration
		windows               int
		lastSeconds, lastRPS  float64
		measuredResponses     int64
	}{
		{"whole seconds", time.Second, 3 * time.Second, 0, 3, 1, 40, 120},
		{"partial last second", time.Second, 2500 * time.Millisecond, 0, 3, 0.5, 40, 100},
		{"cut short", time.Second, 3 * time.Second, 1600 * time.Millisecond, 2, 0.6, 40, 64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var measured []event.Window
			seen := map[time.Time]bool{}
			var total int64
			for _, w := range windowRun(t, c.warmup, c.duration, c.cut) {
				if w.Phase != stats.Measured {
					continue
				}
				if seen[w.At] {
					t.Errorf("window %s emitted twice", w.At)
				}
				seen[w.At] = true
				measured = append(measured, w)
				total += w.Completed
			}
			if len(measured) != c.windows || total != c.measuredResponses {
				t.Fatalf("%d measured windows, %d responses: %+v", len(measured), total, measured)
			}
			for i, w := range measured {
				want, secs := 40.0, 1.0
				if i == len(measured)-1 {
					want, secs = c.lastRPS, c.lastSeconds
				}
				if math.Abs(w.AchievedRPS()-want) > 0.01 || math.Abs(w.Seconds-secs) > 1e-6 {
					t.Errorf("window %d (%s): achieved %.2f/s over %.3f s, want %.0f/s over %.3f s", i, w.At.Format("05.000"), w.AchievedRPS(), w.Seconds, want, secs)
				}
			}
		})
	}
}

// Failed requests without a response are not achieved load.
func TestWindowAchievedCountsResponses(t *testing.T) {
	var got []event.Window
	w := newWindower(event.PlannedRun{ID: "r", TargetRPS: 10, Duration: time.Second}, func(e event.Event) { got = append(got, e.(event.Window)) }, nil)
	start := time.Unix(1000, 0)
	w.Schedule(start)
	for k, outcome := range []exchange.Outcome{"ok", "conn_error", "timeout", "http_error", "oauth_error"} {
		w.Add(&stats.Request{Phase: stats.Measured, ScheduledUS: start.Add(time.Duration(k) * 100 * time.Millisecond).UnixMicro(), DurationUS: 1000, Outcome: outcome})
	}
	w.Flush(time.Time{})
	if len(got) != 1 || got[0].Completed != 5 || got[0].NoResponse != 2 || got[0].AchievedRPS() != 3 {
		t.Fatalf("%+v", got)
	}
}

// Windows count their errors by key for the dashboard's live errors panel:
// at most event.MaxErrorKinds keys, the rest under "other".
func TestWindowCountsErrorKinds(t *testing.T) {
	var got []event.Window
	w := newWindower(event.PlannedRun{ID: "r", TargetRPS: 10, Duration: time.Second}, func(e event.Event) { got = append(got, e.(event.Window)) }, nil)
	start := time.Unix(1000, 0)
	w.Schedule(start)
	add := func(outcome exchange.Outcome, detail string) {
		w.Add(&stats.Request{Phase: stats.Measured, ScheduledUS: start.UnixMicro(), DurationUS: 1000, Outcome: outcome, Detail: detail})
	}
	add("ok", "")
	add("oauth_error", "invalid_grant")
	add("oauth_error", "invalid_grant")
	add("timeout", "")
	for i := 0; i < 10; i++ {
		add("http_error", fmt.Sprint(500+i))
	}
	w.Flush(time.Time{})
	k := got[0].ErrorKinds
	if k["oauth_error:invalid_grant"] != 2 || k["timeout"] != 1 || len(k) != event.MaxErrorKinds+1 || k[event.OtherErrors] != 4 {
		t.Fatalf("error kinds %v", k)
	}
	var sum int64
	for _, n := range k {
		sum += n
	}
	if sum != got[0].Errors {
		t.Errorf("kinds sum to %d, errors %d", sum, got[0].Errors)
	}
}

// A chain's later hops wait for the hop before, not the schedule: their
// send lag (tokex's time between hops) stays out of the window's send lag,
// which the live late-generator rule reads; their latency counts.
func TestWindowSendLagOfFirstHopsOnly(t *testing.T) {
	var got []event.Window
	w := newWindower(event.PlannedRun{ID: "r", TargetRPS: 10, Chain: 2}, func(e event.Event) { got = append(got, e.(event.Window)) }, nil)
	base := time.Unix(1000, 0).UnixMicro()
	w.Add(&stats.Request{Phase: stats.Measured, ScheduledUS: base, SendLagUS: 2000, DurationUS: 1000, Outcome: "ok", Hop: 1})
	w.Add(&stats.Request{Phase: stats.Measured, ScheduledUS: base + 3000, SendLagUS: 90_000, DurationUS: 5000, Outcome: "ok", Hop: 2})
	w.Flush(time.Time{})
	if len(got) != 1 || got[0].Completed != 2 || got[0].SendLagP99 != 2 || got[0].Latency.Max != 5 {
		t.Fatalf("%+v", got)
	}
}
