package evidence

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// Fixtures of issue 25's done-criteria, written for the bench/ scripts that
// measure the real tokex on them (bench/list-rss.sh, bench/samples-report.sh).
// Without their variables there is nothing to do: the fixtures are far too
// big for a test.

// TestWriteHostileListing writes $TOKEX_HOSTILE_FOLDERS (default 1,000)
// evidence folders under $TOKEX_HOSTILE_LISTING, every one a hard link to
// one of five hostile manifests (and summaries) near their size caps: a
// 15 MiB name, a 15 MiB reason, 7 MiB status and driver, 1,000 runs of
// distinct rates with 12 KiB ids and reasons, and a 30 MiB summary.json
// name with a 1,000-stage table.
func TestWriteHostileListing(t *testing.T) {
	parent := os.Getenv("TOKEX_HOSTILE_LISTING")
	if parent == "" {
		t.Skip("set TOKEX_HOSTILE_LISTING (bench/list-rss.sh does)")
	}
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("TOKEX_HOSTILE_FOLDERS")); err == nil && v > 0 {
		n = v
	}
	must(t, os.MkdirAll(parent, 0o755))
	kinds := hostileListingKinds(t, filepath.Join(parent, ".sources"), 15<<20)
	for i := range n {
		src := kinds[i%len(kinds)]
		dir := filepath.Join(parent, fmt.Sprintf("%04d-%s\x1b]0;pwned\x07", i, filepath.Base(src)))
		must(t, os.Mkdir(dir, 0o755))
		for _, f := range []string{ManifestFile, SummaryJSON} {
			must(t, os.Link(filepath.Join(src, f), filepath.Join(dir, f)))
		}
	}
	t.Logf("%d folders over %d sources", n, len(kinds))
}

// hostileListingKinds writes the five source folders and returns them:
// a name and a reason of size bytes, a status and a driver of half that,
// 1,000 runs with reasons of size/1280 bytes, a summary name twice as long.
func hostileListingKinds(t *testing.T, base string, size int) []string {
	big := func(n int) string { return "\x1b]0;pwned\x07\x1b[2J" + strings.Repeat("A", n) }
	start := time.Unix(1_800_000_000, 0)
	m := Manifest{SchemaVersion: stats.SchemaVersion, CampaignID: "20270115-080000.000-hostile", Name: "hostile", Driver: "local",
		Status: "done", Started: start, Runs: []RunEntry{{ID: "01-r1-10rps", Plan: event.PlannedRun{ID: "01-r1-10rps", TargetRPS: 10}, Status: "done"}}}
	run := &stats.Run{ID: "01-r1-10rps", TargetRPS: 10, Status: stats.StatusDone, Requests: 10, LatencyMs: stats.Latency{P95: 4.2}}
	s := summary.Summary{CampaignID: m.CampaignID, Name: "hostile", Status: "done", ThresholdsPassed: true,
		Stages: []*summary.Stage{{TargetRPS: 10, ReportedRun: run.ID, Runs: []*stats.Run{run}}}}
	many := m
	many.Runs = nil
	for i := range stats.MaxRuns {
		id := fmt.Sprintf("%04d-%s", i, strings.Repeat("r", 120))
		many.Runs = append(many.Runs, RunEntry{ID: id, Plan: event.PlannedRun{ID: id, TargetRPS: float64(i + 1)}, Status: "done", Reason: big(size / 1280)})
	}
	hugeSummary := s
	hugeSummary.Name = big(2 * size)
	for i := range stats.MaxRuns - 1 {
		hugeSummary.Stages = append(hugeSummary.Stages, &summary.Stage{TargetRPS: float64(i + 11)})
	}
	variants := []struct {
		name string
		edit func(*Manifest)
		sum  *summary.Summary
	}{
		{"name", func(m *Manifest) { m.Name = big(size) }, &s},
		{"reason", func(m *Manifest) { m.Reason = big(size) }, &s},
		{"status", func(m *Manifest) { m.Status = summary.CampaignStatus(big(size / 2)); m.Driver = big(size / 2) }, &s},
		{"runs", func(m *Manifest) { *m = many }, &s},
		{"summary", func(*Manifest) {}, &hugeSummary},
	}
	var out []string
	for _, v := range variants {
		dir := filepath.Join(base, v.name)
		must(t, os.MkdirAll(dir, 0o755))
		mv := m
		v.edit(&mv)
		writeJSON(t, filepath.Join(dir, ManifestFile), &mv)
		writeJSON(t, filepath.Join(dir, SummaryJSON), v.sum)
		out = append(out, dir)
	}
	return out
}

func writeJSON(t *testing.T, file string, v any) {
	b, err := json.Marshal(v)
	must(t, err)
	must(t, os.WriteFile(file, b, 0o644))
}

// TestWriteSampleFolder writes to $TOKEX_SAMPLE_FOLDER a finished campaign
// of $TOKEX_SAMPLE_RUNS runs (default 6) whose resources.csv and host.csv
// each hold $TOKEX_SAMPLES samples (default 1,000,000, the readers' cap):
// two engines, the generator and the node sampled 2,500 times a second
// over a 100 s run, with spikes, and the host as often.
func TestWriteSampleFolder(t *testing.T) {
	dir := os.Getenv("TOKEX_SAMPLE_FOLDER")
	if dir == "" {
		t.Skip("set TOKEX_SAMPLE_FOLDER (bench/samples-report.sh does)")
	}
	runs, samples := 6, MaxResourceRows
	if v, err := strconv.Atoi(os.Getenv("TOKEX_SAMPLE_RUNS")); err == nil && v > 0 {
		runs = v
	}
	if v, err := strconv.Atoi(os.Getenv("TOKEX_SAMPLES")); err == nil && v > 0 {
		samples = v
	}
	writeSampleCampaign(t, dir, runs, samples)
}

// writeSampleCampaign writes runs runs of 20 s warmup and 80 s measured at
// 100/s (10,000 rows each), then replaces each run's resources.csv and
// host.csv with samples lines.
func writeSampleCampaign(tb testing.TB, dir string, runs, samples int) {
	th := stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}
	w, err := Create(dir, []byte("name: samples\n"), Manifest{CampaignID: "samples", Name: "samples", Started: time.Unix(1_800_000_000, 0)})
	if err != nil {
		tb.Fatal(err)
	}
	var plan []event.PlannedRun
	for i := range runs {
		plan = append(plan, event.PlannedRun{ID: fmt.Sprintf("%02d-r1-%drps", i+1, 100*(i+1)), Index: i + 1, Round: 1,
			TargetRPS: float64(100 * (i + 1)), Warmup: 20 * time.Second, Duration: 80 * time.Second, Agents: 10})
	}
	if err := w.SetPlan(plan); err != nil {
		tb.Fatal(err)
	}
	rec := NewRecorder(w, nil)
	rng := rand.New(rand.NewPCG(25, 2))
	var done []*stats.Run
	start := time.Unix(1_800_000_000, 0)
	var starts []time.Time
	for _, p := range plan {
		run, err := rec.Begin(p, start)
		if err != nil {
			tb.Fatal(err)
		}
		for k := range 10_000 {
			at := start.Add(time.Duration(k) * 10 * time.Millisecond)
			ph := stats.Measured
			if at.Sub(start) < p.Warmup {
				ph = stats.Warmup
			}
			run.Record(&stats.Request{Agent: k % 10, Seq: int64(k / 10), Phase: ph, ScheduledUS: at.UnixMicro(),
				SendLagUS: int64(rng.IntN(200)), DurationUS: 3000 + int64(rng.ExpFloat64()*2500), Status: 200, Outcome: "ok"})
		}
		for s := 0; s <= 101; s++ {
			w.Consume(event.Resource{At: start.Add(time.Duration(s) * time.Second), Role: "engine", Name: "e1", CPUMillicores: 500,
				CPUSecondsTotal: 10 + float64(s)*0.5, MemoryBytes: 1 << 30})
		}
		meta := stats.RunMeta{ID: p.ID, Round: p.Round, TargetRPS: p.TargetRPS, Started: start,
			MeasuredStart: start.Add(p.Warmup), MeasuredEnd: start.Add(p.Total()), Status: stats.StatusDone}
		st, err := run.End(meta.MeasuredEnd, meta, th)
		if err != nil {
			tb.Fatal(err)
		}
		done = append(done, st)
		starts = append(starts, start)
		start = start.Add(p.Total() + time.Minute)
	}
	s := &summary.Summary{CampaignID: "samples", Name: "samples", Status: "done", Started: time.Unix(1_800_000_000, 0), Finished: start, Thresholds: th}
	summary.BuildSummary(s, done, true)
	if err := rec.Finish(s); err != nil {
		tb.Fatal(err)
	}
	for i, p := range plan {
		writeDenseSamples(tb, filepath.Join(dir, RunsDir, p.ID), starts[i], p.Total(), samples, rng)
	}
}

// writeDenseSamples writes n resource samples (four processes in turn) and
// n host samples spread evenly over span from start, with a spike in one
// sample of 5,000.
func writeDenseSamples(tb testing.TB, runDir string, start time.Time, span time.Duration, n int, rng *rand.Rand) {
	write := func(name, header string, line func(buf []byte, k int, atUS int64) []byte) {
		f, err := os.Create(filepath.Join(runDir, name))
		if err != nil {
			tb.Fatal(err)
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		bw.WriteString(header + "\n")
		var buf []byte
		for k := range n {
			buf = line(buf[:0], k, start.UnixMicro()+int64(k)*span.Microseconds()/int64(n))
			bw.Write(buf)
		}
		if err := bw.Flush(); err != nil {
			tb.Fatal(err)
		}
		if err := f.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	names := [...]struct{ kind, name string }{{"engine", "e1"}, {"engine", "e2"}, {"generator", "tokex"}, {"node", "n1"}}
	write(ResourcesFile, ResourcesHeader, func(buf []byte, k int, at int64) []byte {
		who := names[k%len(names)]
		cpu := 400 + rng.Float64()*200
		if k%5000 == 0 {
			cpu *= 10
		}
		return AppendResource(buf, &sample.Resource{AtUS: at, Kind: who.kind, Name: who.name, CPUMillicores: cpu,
			MemoryBytes: 1<<30 + int64(rng.IntN(1<<20)), CPUSecondsTotal: float64(k) / 1000, Source: "proc"})
	})
	wait := 0.01
	write(HostFile, HostHeader, func(buf []byte, k int, at int64) []byte {
		busy := 1 + rng.Float64()
		if k%5000 == 0 {
			busy = 2
		}
		return AppendHost(buf, &sample.Host{AtUS: at, HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: busy, Runnable: 1 + rng.IntN(4),
			Load1: 1.5, MemTotalBytes: 8 << 30, MemAvailableBytes: 4<<30 + int64(rng.IntN(1<<30)), PSI: &sample.Pressure{CPUSome: rng.Float64() / 10},
			GeneratorLimitCores: 2, GeneratorCPUs: 2, GeneratorCPUsBusyCores: busy, GeneratorWaitCores: &wait}})
	})
}
