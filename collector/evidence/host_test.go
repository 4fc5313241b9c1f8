package evidence

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

func TestHostRowRoundTrip(t *testing.T) {
	wait, perSlice := 0.125, 2.5
	rows := []sample.Host{
		{AtUS: 1789978138000001, HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: 1.95, StealCores: 0.01, Runnable: 7, Load1: 3.25,
			MemTotalBytes: 8 << 30, MemAvailableBytes: 1 << 30, PSI: &sample.Pressure{CPUSome: 0.9, MemorySome: 0.01, MemoryFull: 0},
			GeneratorLimitCores: 1, GeneratorCPUs: 1, GeneratorCPUsBusyCores: 0.97, GeneratorWaitCores: &wait, GeneratorWaitPerSliceMs: &perSlice}},
		{AtUS: 5, HostMetrics: sample.HostMetrics{CPUs: 64}}, // no PSI, no schedstat, no limit
	}
	for _, r := range rows {
		line := string(AppendHost(nil, &r))
		got, err := ParseHost(strings.TrimSuffix(line, "\n"))
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("round trip of %+v gave %+v", r, got)
		}
	}
	for _, bad := range []string{"", "1,2,3", "1,2,NaN,0,0,0,0,0,,,,0,0,0,,", "1,2,-1,0,0,0,0,0,,,,0,0,0,,", "1,2,Inf,0,0,0,0,0,,,,0,0,0,,",
		"x,2,0,0,0,0,0,0,,,,0,0,0,,", "1,2,0,0,0,0,0,0,,,,0,0,0,,,extra", "1,2,0,0,0,0,0,0,,,,0,0,0,,-2"} {
		if _, err := ParseHost(bad); err == nil {
			t.Errorf("ParseHost(%q) accepted", bad)
		}
	}
}

// A run's host samples land in its host.csv and feed its statistics; the
// samples between runs go to the top-level host.csv.
func TestWriterHostFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	w, err := Create(dir, []byte("name: t\n"), Manifest{CampaignID: "c", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	p := event.PlannedRun{ID: "01-r1-10rps", Round: 1, TargetRPS: 10, Duration: 2 * time.Second, Agents: 1}
	_ = w.SetPlan([]event.PlannedRun{p})
	start := time.Unix(1_800_000_000, 0)
	w.Consume(event.Host{At: start.Add(-time.Second), HostMetrics: sample.HostMetrics{CPUs: 2}})
	rec := NewRecorder(w, nil)
	run, err := rec.Begin(p, start)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		run.Record(&stats.Request{Seq: int64(i), Phase: stats.Measured, ScheduledUS: start.Add(time.Duration(i) * 100 * time.Millisecond).UnixMicro(), DurationUS: 1000, Status: 200, Outcome: "ok"})
	}
	for s := 1; s <= 2; s++ {
		at := start.Add(time.Duration(s)*time.Second - 100*time.Millisecond)
		w.Consume(event.Resource{At: at, Role: "generator", Name: "g", CPUMillicores: 100})
		w.Consume(event.Host{At: at, HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: 2, Runnable: 5}})
	}
	st, err := run.End(start.Add(2*time.Second), stats.RunMeta{ID: p.ID, Round: 1, TargetRPS: 10, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(2 * time.Second), Status: stats.StatusDone}, stats.Thresholds{P95Ms: 10, SuccessRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Consume(event.Host{At: start.Add(3 * time.Second), HostMetrics: sample.HostMetrics{CPUs: 2}})
	if err := rec.Finish(&summary.Summary{CampaignID: "c", Status: "done"}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	inRun, _, err := f.Host(p.ID)
	if err != nil || len(inRun) != 2 || inRun[0].BusyCores != 2 {
		t.Fatalf("run host.csv: %+v %v", inRun, err)
	}
	top, _, err := f.Host("")
	if err != nil || len(top) != 2 {
		t.Fatalf("top host.csv: %+v %v", top, err)
	}
	var codes []stats.WarningCode
	for _, w := range st.Warnings {
		codes = append(codes, w.Code)
	}
	if !reflect.DeepEqual(codes, []stats.WarningCode{stats.WarnEngineCPUUnknown, stats.WarnHostSaturated}) || st.ThresholdsPassed {
		t.Errorf("warnings %v passed %v", codes, st.ThresholdsPassed)
	}
	if missing, _, err := f.Host("01-r1-99rps"); missing != nil || err != nil {
		t.Errorf("missing host.csv: %v %v", missing, err)
	}
	_ = os.WriteFile(filepath.Join(dir, HostFile), []byte("at,x\n"), 0o644)
	if _, _, err := f.Host(""); err == nil {
		t.Error("a wrong header was accepted")
	}
}

func FuzzParseHost(f *testing.F) {
	f.Add("1789978138000001,2,1.95,0.01,7,3.25,8589934592,1073741824,0.9,0.01,0,1,1,0.97,0.125,2.5")
	f.Add("5,64,0,0,0,0,0,0,,,,0,0,0,,")
	f.Fuzz(func(t *testing.T, line string) {
		s, err := ParseHost(line)
		if err != nil {
			return
		}
		// What parses writes back to a line that parses to the same sample.
		again, err := ParseHost(strings.TrimSuffix(string(AppendHost(nil, &s)), "\n"))
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("%q → %+v → %+v (%v)", line, s, again, err)
		}
	})
}

// EachResource and EachHost stream what Resources and Host read, one sample
// at a time: the same samples, the same torn-line note, the same refusals
// (a wrong header, more than MaxResourceRows samples, an id that leaves the
// folder).
func TestEachSampleStreamsWhatTheReadersRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	w := interrupted(t, dir)
	start := time.Unix(1_800_000_000, 0)
	for i := range 5 {
		w.Consume(event.Host{At: start.Add(time.Duration(i) * time.Second), HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: float64(i)}})
		w.Consume(event.Resource{At: start.Add(time.Duration(i) * time.Second), Role: "engine", Name: "e", CPUMillicores: float64(i)})
	}
	must(t, w.Flush())
	id := testPlan[1].ID
	res := filepath.Join(dir, RunsDir, id, ResourcesFile)
	b, err := os.ReadFile(res)
	must(t, err)
	must(t, os.WriteFile(res, append(b, "1800000009000000,engine,e,1"...), 0o644)) // torn by a crash
	f, err := Open(dir)
	must(t, err)
	defer f.Close()
	wantRes, wantNote, err := f.Resources(id)
	must(t, err)
	var gotRes []sample.Resource
	note, err := f.EachResource(id, func(s *sample.Resource) { gotRes = append(gotRes, *s) })
	must(t, err)
	if len(wantRes) != 5 || !reflect.DeepEqual(gotRes, wantRes) || note != wantNote || !strings.Contains(note, "torn") {
		t.Errorf("EachResource: %d samples, note %q; Resources: %d, %q", len(gotRes), note, len(wantRes), wantNote)
	}
	wantHost, _, err := f.Host(id)
	must(t, err)
	var gotHost []sample.Host
	_, err = f.EachHost(id, func(s *sample.Host) { gotHost = append(gotHost, *s) })
	must(t, err)
	if len(wantHost) != 5 || !reflect.DeepEqual(gotHost, wantHost) {
		t.Errorf("EachHost: %d samples; Host: %d", len(gotHost), len(wantHost))
	}
	if _, err := f.EachHost("../x", func(*sample.Host) {}); err == nil {
		t.Error("EachHost took an id that leaves the folder")
	}
	if _, err := f.EachResource("../x", func(*sample.Resource) {}); err == nil {
		t.Error("EachResource took an id that leaves the folder")
	}
	must(t, os.WriteFile(res, []byte("at,x\n"), 0o644))
	if _, err := f.EachResource(id, func(*sample.Resource) {}); err == nil || !strings.Contains(err.Error(), "unexpected header") {
		t.Errorf("a wrong header: %v", err)
	}
	many := []byte(ResourcesHeader + "\n" + strings.Repeat("1800000000000000,engine,e,1,1,1,proc\n", MaxResourceRows+1))
	must(t, os.WriteFile(res, many, 0o644))
	n := 0
	if _, err := f.EachResource(id, func(*sample.Resource) { n++ }); err == nil || n != MaxResourceRows {
		t.Errorf("%d samples over the cap: %v after %d", MaxResourceRows+1, err, n)
	}
}
