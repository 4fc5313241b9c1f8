package runner

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
)

// A row a driver learns after it happened (Keep) is evidence and counts in
// the run's error descriptions, but not in the live windows nor in the
// reachability watch; Record does all four.
func TestKeepIsEvidenceOnly(t *testing.T) {
	w, err := evidence.Create(filepath.Join(t.TempDir(), "c"), []byte("name: t\n"), evidence.Manifest{CampaignID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	p := event.PlannedRun{ID: "r", TargetRPS: 10, Duration: time.Second}
	if err := w.SetPlan([]event.PlannedRun{p}); err != nil {
		t.Fatal(err)
	}
	run, err := evidence.NewRecorder(w, nil).Begin(p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var wins []event.Window
	win := newWindower(p, func(e event.Event) { wins = append(wins, e.(event.Window)) }, nil)
	start := time.Unix(1000, 0)
	win.Schedule(start)
	o := &output{run: run, win: win, reach: &reachability{}, descs: &descriptions{}}
	var _ Keeper = o
	row := func(k int) *stats.Request {
		return &stats.Request{Phase: stats.Measured, Seq: int64(k), ScheduledUS: start.Add(time.Duration(k) * 100 * time.Millisecond).UnixMicro(),
			DurationUS: 1000, Outcome: "conn_error", Description: "connection refused"}
	}
	o.Record(row(0))
	o.Keep(row(1))
	o.Keep(row(2))
	win.Flush(time.Time{})
	if len(wins) != 1 || wins[0].Completed != 1 {
		t.Errorf("windows %+v, want one row in one window", wins)
	}
	if d := o.descs.list(); len(d) != 1 || d[0].Count != 3 {
		t.Errorf("descriptions %+v", d)
	}
	if o.reach.failures != 1 {
		t.Errorf("reachability saw %d failures, want 1", o.reach.failures)
	}
	st, err := run.End(time.Now(), stats.RunMeta{ID: "r", Status: stats.StatusDone, MeasuredStart: start, MeasuredEnd: start.Add(time.Second)}, stats.Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Requests != 3 {
		t.Errorf("evidence holds %d measured rows, want 3", st.Requests)
	}
}
