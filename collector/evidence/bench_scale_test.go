package evidence

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// scaleRunRows is one run of issue 17's 50,000 exchanges/s campaign: 30 s
// of warmup and 300 s measured from 120 agents, 16.5 million rows.
const scaleRunRows = 50_000 * 330

// writeScaleRun writes that run (rows rows, 120 agents, latencies 3 ms plus
// an exponential tail) and finishes the folder. It returns the thresholds.
func writeScaleRun(tb testing.TB, dir string, rows int) stats.Thresholds {
	th := stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}
	w, err := Create(dir, []byte("name: scale\n"), Manifest{CampaignID: "scale", Started: time.Now()})
	if err != nil {
		tb.Fatal(err)
	}
	p := event.PlannedRun{ID: "01-r1-50000rps", Index: 1, Round: 1, TargetRPS: 50000, Warmup: 30 * time.Second, Duration: 300 * time.Second, Agents: 120}
	rec := NewRecorder(w, nil)
	if err := w.SetPlan([]event.PlannedRun{p}); err != nil {
		tb.Fatal(err)
	}
	start := time.Unix(1_800_000_000, 0)
	run, err := rec.Begin(p, start)
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(17, 17))
	rate := float64(rows) / p.Total().Seconds()
	for k := 0; k < rows; k++ {
		at := start.UnixMicro() + int64(float64(k)/rate*1e6)
		ph := stats.Measured
		if at < start.Add(p.Warmup).UnixMicro() {
			ph = stats.Warmup
		}
		run.Record(&stats.Request{Agent: k % 120, Seq: int64(k / 120), Phase: ph, ScheduledUS: at,
			SendLagUS: int64(rng.IntN(400)), DurationUS: 3000 + int64(rng.ExpFloat64()*2500), Status: 200, Outcome: "ok"})
	}
	meta := stats.RunMeta{ID: p.ID, Round: 1, TargetRPS: p.TargetRPS, Started: start,
		MeasuredStart: start.Add(p.Warmup), MeasuredEnd: start.Add(p.Total()), Status: stats.StatusDone}
	st, err := run.End(meta.MeasuredEnd, meta, th)
	if err != nil {
		tb.Fatal(err)
	}
	s := &summary.Summary{CampaignID: "scale", Name: "scale", Status: "done", Started: start, Finished: start.Add(p.Total()), Thresholds: th}
	summary.BuildSummary(s, []*stats.Run{st}, true)
	if err := rec.Finish(s); err != nil {
		tb.Fatal(err)
	}
	return th
}

// TestWriteScaleFolder writes the 16.5-million-row run to
// $TOKEX_SCALE_FOLDER for bench/analysis-16m.sh, which measures the real
// `tokex report` on it ($TOKEX_SCALE_ROWS rows if set).
func TestWriteScaleFolder(t *testing.T) {
	dir := os.Getenv("TOKEX_SCALE_FOLDER")
	if dir == "" {
		t.Skip("set TOKEX_SCALE_FOLDER (bench/analysis-16m.sh does)")
	}
	rows := scaleRunRows
	if n, err := strconv.Atoi(os.Getenv("TOKEX_SCALE_ROWS")); err == nil && n > 0 {
		rows = n
	}
	writeScaleRun(t, dir, rows)
	var size int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	t.Logf("%d rows, %d bytes (%.2f bytes a row)", rows, size, float64(size)/float64(rows))
}

// BenchmarkRecompute16MRows is the analysis of one run of a 50,000/s
// campaign: its exact statistics (every percentile from every row)
// recomputed from its 16.5 million rows. Reports the peak Go heap.
func BenchmarkRecompute16MRows(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "scale")
	th := writeScaleRun(b, dir, scaleRunRows)
	f, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	peak := samplePeakHeap(20 * time.Millisecond)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := f.Recompute(th)
		if err != nil {
			b.Fatal(err)
		}
		if got := s.Stages[0].Runs[0].Requests; got != 50_000*300 {
			b.Fatalf("%d measured requests", got)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(scaleRunRows), "rows")
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
}
