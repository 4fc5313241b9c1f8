package evidence

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
)

// writeSyntheticCampaign writes an article-sized campaign (sanity + 3 stages
// × 3 rounds of 5 min after 30 s warmup at 100/250/500 per second: about
// 780,000 requests) with one engine and one generator sample per second.
func writeSyntheticCampaign(tb testing.TB, dir string) (int64, stats.Thresholds) {
	th := stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}
	w, err := Create(dir, []byte("name: synthetic\n"), Manifest{CampaignID: "synthetic", Started: time.Now()})
	if err != nil {
		tb.Fatal(err)
	}
	plan := []event.PlannedRun{{ID: "00-sanity", Sanity: true, TargetRPS: 100, Duration: 30 * time.Second, Agents: 10}}
	for r := 1; r <= 3; r++ {
		for _, s := range []float64{100, 250, 500} {
			plan = append(plan, event.PlannedRun{ID: "r" + string(rune('0'+r)) + "-" + units.StageLabel(s)[:3], Index: len(plan), Round: r,
				TargetRPS: s, Warmup: 30 * time.Second, Duration: 5 * time.Minute, Agents: 10})
		}
	}
	rec := NewRecorder(w, nil)
	if err := w.SetPlan(plan); err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	var total int64
	var runs []*stats.Run
	start := time.Unix(1_800_000_000, 0)
	for _, p := range plan {
		run, err := rec.Begin(p, start)
		if err != nil {
			tb.Fatal(err)
		}
		n := int(p.TargetRPS * p.Total().Seconds())
		for k := 0; k < n; k++ {
			at := start.Add(time.Duration(float64(k) / p.TargetRPS * float64(time.Second)))
			ph := stats.Measured
			if at.Sub(start) < p.Warmup {
				ph = stats.Warmup
			}
			run.Record(&stats.Request{Agent: k % 10, Seq: int64(k / 10), Phase: ph, ScheduledUS: at.UnixMicro(),
				SendLagUS: int64(rng.IntN(200)), DurationUS: 3000 + int64(rng.ExpFloat64()*2500), Status: 200, Outcome: "ok"})
			total++
		}
		for s := 0; s <= int(p.Total().Seconds())+1; s++ {
			at := start.Add(time.Duration(s) * time.Second)
			w.Consume(event.Resource{At: at, Role: "engine", Name: "e", CPUMillicores: p.TargetRPS * 5,
				CPUSecondsTotal: 10 + float64(s)*p.TargetRPS*0.005, MemoryBytes: 3 << 30})
		}
		meta := stats.RunMeta{ID: p.ID, Round: p.Round, Sanity: p.Sanity, TargetRPS: p.TargetRPS, Started: start,
			MeasuredStart: start.Add(p.Warmup), MeasuredEnd: start.Add(p.Total()), Status: stats.StatusDone}
		st, err := run.End(meta.MeasuredEnd, meta, th)
		if err != nil {
			tb.Fatal(err)
		}
		runs = append(runs, st)
		start = start.Add(p.Total() + time.Minute)
	}
	s := &summary.Summary{CampaignID: "synthetic", Name: "synthetic", Status: "done", Started: time.Unix(1_800_000_000, 0), Finished: start, Thresholds: th}
	summary.BuildSummary(s, runs, true)
	if err := rec.Finish(s); err != nil {
		tb.Fatal(err)
	}
	return total, th
}

// TestWriteArticleFolder writes the synthetic campaign to
// $TOKEX_ARTICLE_FOLDER for bench/report-rss.sh, which measures the real
// `tokex report` command on it; without the variable there is nothing to do.
func TestWriteArticleFolder(t *testing.T) {
	dir := os.Getenv("TOKEX_ARTICLE_FOLDER")
	if dir == "" {
		t.Skip("set TOKEX_ARTICLE_FOLDER (bench/report-rss.sh does)")
	}
	total, _ := writeSyntheticCampaign(t, dir)
	t.Logf("%d rows in %s", total, dir)
}

// BenchmarkRecomputeArticleCampaign is the analysis cost: every run's
// statistics and the summary recomputed from the evidence of an
// article-sized campaign. Goals: under 2 s and 300 MB.
func BenchmarkRecomputeArticleCampaign(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "synthetic")
	total, th := writeSyntheticCampaign(b, dir)
	f, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	peak := samplePeakHeap(5 * time.Millisecond)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := f.Recompute(th)
		if err != nil {
			b.Fatal(err)
		}
		if s.Totals.Exchanges == 0 {
			b.Fatal("no exchanges")
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(total), "requests")
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
}

// samplePeakHeap starts reading the Go heap every interval (after a GC) and
// returns a function that stops and returns the largest heap seen.
func samplePeakHeap(every time.Duration) func() uint64 {
	runtime.GC()
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				peak.Store(max(peak.Load(), ms.HeapAlloc))
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return peak.Load()
	}
}
