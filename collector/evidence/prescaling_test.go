package evidence

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// TestEvidenceBeforeScalingReads (issue 28): a folder written before runs
// carried an engine count reads as it did: one size, no scaling section,
// the same stages recomputed, and nothing new in its summary.json.
func TestEvidenceBeforeScalingReads(t *testing.T) {
	f, err := Open(filepath.Join("testdata", "pre-scaling", "20261202-011157.666-quick"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Manifest.Scaling) != 0 || len(f.Manifest.Runs) != 3 {
		t.Fatalf("manifest: %d scales, %d runs", len(f.Manifest.Scaling), len(f.Manifest.Runs))
	}
	s, err := f.Summary()
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.Recompute(s.Thresholds)
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range []*struct {
		name string
		v    any
	}{{"summary.json", s}, {"recomputed", again}} {
		b, _ := json.Marshal(sum.v)
		if strings.Contains(string(b), `"replicas"`) || strings.Contains(string(b), `"scaling"`) {
			t.Errorf("%s gained an engine count", sum.name)
		}
	}
	if s.Scaling != nil || again.Scaling != nil || len(again.Stages) != 2 || len(s.Stages) != 2 {
		t.Fatalf("stages %d / %d, scaling %v / %v", len(s.Stages), len(again.Stages), s.Scaling, again.Scaling)
	}
	for i, st := range again.Stages {
		if st.Replicas != 0 || st.Label() != s.Stages[i].Label() || st.Reported().Requests != s.Stages[i].Reported().Requests {
			t.Errorf("stage %s: replicas %d, %d requests, summary.json %d", st.Label(), st.Replicas, st.Reported().Requests, s.Stages[i].Reported().Requests)
		}
	}
}

// TestListEngineCounts: tokex ls shows a campaign over engine counts stage
// by count ("10/s@1 10/s@2"), each with its own reported p95.
func TestListEngineCounts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "scaled")
	plan := []event.PlannedRun{
		{ID: "00-n1-r1-10rps", Index: 0, Round: 1, TargetRPS: 10, Duration: time.Second, Agents: 1, Replicas: 1},
		{ID: "01-n2-r1-10rps", Index: 1, Round: 1, TargetRPS: 10, Duration: time.Second, Agents: 1, Replicas: 2},
	}
	w, err := Create(dir, []byte("name: t\n"), Manifest{CampaignID: "scaled", Started: time.Unix(1_800_000_000, 0)})
	must(t, err)
	must(t, w.SetPlan(plan))
	rec := NewRecorder(w, nil)
	var runs []*stats.Run
	for i, p := range plan {
		start := time.Unix(1_800_000_000+int64(10*i), 0)
		run, err := rec.Begin(p, start)
		must(t, err)
		for k := 0; k < 10; k++ {
			run.Record(&stats.Request{Seq: int64(k), Phase: stats.Measured, ScheduledUS: start.Add(time.Duration(k) * 100 * time.Millisecond).UnixMicro(),
				DurationUS: int64(1000 * (i + 1)), Status: 200, Outcome: "ok"})
		}
		st, err := run.End(start.Add(time.Second), stats.RunMeta{ID: p.ID, Round: 1, TargetRPS: 10, Replicas: p.Replicas, Started: start,
			MeasuredStart: start, MeasuredEnd: start.Add(time.Second), Status: stats.StatusDone}, stats.Thresholds{P95Ms: 10, SuccessRatio: 1})
		must(t, err)
		runs = append(runs, st)
	}
	must(t, finish(t, rec, runs...))
	ls, _, err := List(filepath.Dir(dir))
	must(t, err)
	if len(ls) != 1 {
		t.Fatalf("%d listed", len(ls))
	}
	rates, p95s := ls[0].StageCells(func(ms float64) string { return fmt.Sprintf("%.0f", ms) })
	if rates != "10/s@1 10/s@2" || p95s != "1 2" {
		t.Errorf("stages %q, p95s %q", rates, p95s)
	}
}
