package kube

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/config"
)

// keepOutput files rows as evidence only, as the runner's Keep does.
type keepOutput struct{ run *evidence.Run }

func (o *keepOutput) Emit(event.Event)        {}
func (o *keepOutput) Record(r *stats.Request) { o.run.Record(r) }
func (o *keepOutput) Keep(r *stats.Request)   { o.run.Record(r) }

// BenchmarkCopyFile is the coordinator's cost of one agent's evidence file
// at the 50,000/s plan (250/s for 330 s: 82,500 lines, gzipped as the
// wrapper does): decompressing, parsing and matching every line, and
// filing the half the log stream lost (the worst case has the stream
// lose a whole rotated file of 95,000 lines).
func BenchmarkCopyFile(b *testing.B) {
	const lines, agents = 82_500, 200
	p := event.PlannedRun{ID: "01-r1-50000rps", Index: 1, Round: 1, TargetRPS: 50000, Warmup: 30 * time.Second, Duration: 300 * time.Second, Agents: agents}
	period := float64(agents) / p.TargetRPS * 1e6
	start := int64(1_796_064_356_000_000)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	var stream []string
	for i := 0; i < lines; i++ {
		ph, slot := stats.Warmup, int64(i)
		if w := int(30 * 1e6 / period); i >= w {
			ph, slot = stats.Measured, int64(i-w)
		}
		l := fmt.Sprintf("tokex3,7,%s,%d,%d,%d,%d,200,ok,,%d,%d,%d", ph, slot, start+int64(math.Round(float64(i)*period)), 4000+i%900, 3000+i%5000, 1000+i%700, 3300, slot)
		fmt.Fprintln(zw, l)
		if i%2 == 0 {
			stream = append(stream, l)
		}
	}
	_ = zw.Close()
	cfg := config.Article()
	cfg.Agents.Count = agents
	b.ReportAllocs()
	b.SetBytes(int64(zb.Len()))
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "copy")
		w, err := evidence.Create(dir, []byte("name: copy\n"), evidence.Manifest{CampaignID: "copy", Started: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.SetPlan([]event.PlannedRun{p}); err != nil {
			b.Fatal(err)
		}
		run, err := evidence.NewRecorder(w, nil).Begin(p, time.UnixMicro(start))
		if err != nil {
			b.Fatal(err)
		}
		r := &kubeRun{d: &Driver{Cfg: cfg}, p: p, out: &keepOutput{run: run}, pods: map[string]*podState{}, period: period,
			mStartUS: math.MaxInt64, wStartUS: math.MaxInt64}
		ps := &podState{name: "agent-7", index: 7, counts: map[stats.Phase]int64{}, slots: map[stats.Phase]*phaseSlots{}}
		for _, l := range stream {
			r.record(ps, l)
		}
		cpu0 := cpuTime()
		b.StartTimer()
		added, err := r.mergeFile(ps, bytes.NewReader(zb.Bytes()))
		if err != nil || added != lines-len(stream) {
			b.Fatalf("%d added (%v)", added, err)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuTime() - cpu0
	}
	b.ReportMetric(float64(b.N*lines)/cpu.Seconds(), "lines/cpu-s")
	b.ReportMetric(float64(zb.Len())/lines, "gz-B/line")
}
