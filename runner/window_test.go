package runner

import (
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/config"
)

func TestWindowerBucketsBySecondAndPhase(t *testing.T) {
	var got []event.Window
	w := newWindower(event.PlannedRun{ID: "r", TargetRPS: 10}, func(e event.Event) { got = append(got, e.(event.Window)) }, func() int64 { return 3 })
	base := time.Unix(1000, 0).UnixMicro()
	add := func(offsetMS int64, ph stats.Phase, outcome string, durUS int64) {
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
