package event

import (
	"bytes"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/forecast"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/search"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

func TestCodecRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 123000000, time.UTC)
	wait := 0.25
	evs := []Event{
		CampaignStarted{At: at, ID: "c", Runs: []PlannedRun{{ID: "r", TargetRPS: 500, Warmup: 30 * time.Second}}},
		RunStarted{At: at, Run: PlannedRun{ID: "r"}},
		PhaseChanged{At: at, RunID: "r", Phase: stats.Measured},
		Window{At: at, RunID: "r", Completed: 500, Latency: stats.Latency{P95: 9.5}},
		Resource{At: at, Role: "engine", Name: "pf-engine-0", CPUMillicores: 1300},
		Host{At: at, HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: 1.9, PSI: &sample.Pressure{CPUSome: 0.5}, GeneratorLimitCores: 1, GeneratorWaitCores: &wait}},
		Forecast{At: at, Stages: []float64{100, 500}, Estimate: forecast.Forecast{Cores: 2, GeneratorCPUMs: 2.3, SustainableRPS: 430}},
		AgentStatus{At: at, RunID: "r", Agent: 3, Name: "perf-agent-3"},
		Log{At: at, Source: "tokex", Level: "warn", Message: "m"},
		RunFinished{At: at, RunID: "r", Status: stats.StatusDone, Stats: &stats.Run{ID: "r", Requests: 150008}},
		CampaignFinished{At: at, Status: "done", Summary: &summary.Summary{CampaignID: "c"}},
		Idle{At: at, Idle: summary.Idle{Start: at, End: at.Add(30 * time.Second), Cores: 0.012, Method: "cumulative", Samples: 31}},
		Search{At: at, Next: 300, Result: curve.Result{Status: curve.StatusRunning, Capacity: 200, Upper: 400,
			Probes: []curve.Probe{{Rate: 200, Verdict: curve.Pass, Rounds: []curve.Round{{RunID: "01-p1-r1-200rps", P95Ms: 4}}}}}},
		HostCheck{At: at, State: HostWaiting, CPUs: 2, OthersCores: 1.62, Sampled: 2 * time.Second, QuietBelow: 1, Waited: 12 * time.Second, WaitLimit: 10 * time.Minute},
	}
	for i, e := range evs {
		line, err := Marshal(uint64(i+1), e)
		if err != nil {
			t.Fatal(err)
		}
		seq, back, err := Unmarshal(line)
		if err != nil || seq != uint64(i+1) {
			t.Fatalf("%s: %v", e.Kind(), err)
		}
		if !reflect.DeepEqual(back, e) {
			t.Errorf("%s: round trip gave %+v", e.Kind(), back)
		}
		if !Time(back).Equal(at) {
			t.Errorf("%s: Time() = %v", e.Kind(), Time(back))
		}
	}
	if _, _, err := Unmarshal([]byte(`{"seq":1,"kind":"nope","data":{}}`)); err == nil {
		t.Error("unknown kind accepted")
	}
}

// TestOldForecastKind: evidence written before the pre-flight estimate was
// renamed calls its event "capacity"; it reads as a Forecast, written
// again under its new kind.
func TestOldForecastKind(t *testing.T) {
	line := `{"seq":4,"kind":"capacity","data":{"at":"2026-11-30T12:00:00Z","stages":[100,500],` +
		`"estimate":{"cores":2,"generator_cpu_ms":2.3,"method":"200 calibration exchanges","sustainable_rps":430}}}`
	seq, e, err := Unmarshal([]byte(line))
	f, ok := e.(Forecast)
	if err != nil || seq != 4 || !ok || f.Estimate.SustainableRPS != 430 || !f.Estimate.Exceeds(500) {
		t.Fatalf("%d %#v %v", seq, e, err)
	}
	again, err := Marshal(seq, f)
	if err != nil || !bytes.Contains(again, []byte(`"kind":"forecast"`)) {
		t.Errorf("written again as %s (%v)", again, err)
	}
}

// FuzzUnmarshal: any line decodes to an event or an error, never a panic,
// and a decoded event encodes again.
func FuzzUnmarshal(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		seq, e, err := Unmarshal(line)
		if err != nil {
			return
		}
		_ = Time(e)
		if _, err := Marshal(seq, e); err != nil {
			t.Fatalf("%s decoded but does not encode: %v", e.Kind(), err)
		}
	})
}

// TestReadsWindowsWrittenAsDigest: events.jsonl written while a window's
// latency was an event.Digest ("mean" for the average; testdata from a
// real campaign) still reads, the average in Avg, and writes back as a
// stats.Latency.
func TestReadsWindowsWrittenAsDigest(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/events-digest.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []stats.Latency{
		{Count: 20, Avg: 1.684, P50: 1.681, P90: 1.966, P95: 2.017, P99: 2.211, Max: 2.26},
		{Count: 7, Avg: 1.593, P50: 1.4, P90: 2.31, P95: 2.689, P99: 2.992, Max: 3.068},
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) != len(want) {
		t.Fatalf("%d lines", len(lines))
	}
	for i, line := range lines {
		seq, e, err := Unmarshal(line)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := e.(Window)
		if !ok || w.Latency != want[i] || w.RunID != "01-r1-20rps" || w.Completed != want[i].Count {
			t.Fatalf("line %d: %+v", i+1, e)
		}
		again, err := Marshal(seq, w)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(again, []byte(`"avg":`)) || bytes.Contains(again, []byte(`"mean"`)) {
			t.Errorf("written back: %s", again)
		}
		if _, back, err := Unmarshal(again); err != nil || back.(Window).Latency != want[i] {
			t.Errorf("round trip: %+v %v", back, err)
		}
	}
}

// CampaignStarted says a campaign is a capacity search from its first
// line; evidence written before the field replays as a campaign of stages.
func TestCampaignStartedSearch(t *testing.T) {
	t.Parallel()
	spec := &search.Spec{Policy: curve.Policy{Start: 100, Max: 1600, Resolution: 0.05},
		Objective: curve.Objective{P95Ms: 10, P99Ms: 50, SuccessRatio: 0.99}}
	e := CampaignStarted{At: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), ID: "c", Search: spec}
	line, err := Marshal(1, e)
	if err != nil {
		t.Fatal(err)
	}
	if _, back, err := Unmarshal(line); err != nil || !reflect.DeepEqual(back, e) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	old := `{"seq":1,"kind":"campaign_started","data":{"at":"2026-11-30T12:00:00Z","id":"c","name":"n","driver":"local","target":"t","runs":[],"thresholds":{}}}`
	_, back, err := Unmarshal([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if cs, ok := back.(CampaignStarted); !ok || cs.ID != "c" || cs.Search != nil {
		t.Errorf("old evidence: %+v", back)
	}
}

// A host check says what it found in words, and what it means for the
// figures, before the first run.
func TestHostCheckLine(t *testing.T) {
	t.Parallel()
	h := HostCheck{CPUs: 2, OthersCores: 1.62, Sampled: 2 * time.Second, QuietBelow: 1, WaitLimit: 10 * time.Minute}
	for _, c := range []struct {
		state  HostState
		waited time.Duration
		want   string
	}{
		{HostBusy, 0, "this machine is busy: other processes use 1.6 of 2 cores; figures will likely carry host_saturated (--wait-quiet 10m waits for a quiet machine)"},
		{HostWaiting, 12 * time.Second, "waiting for a quiet machine: other processes use 1.6 of 2 cores, quiet is below 1.0 (waited 12s of 10m0s)"},
		{HostStillBusy, 10 * time.Minute, "this machine is still busy after 10m0s: other processes use 1.6 of 2 cores; running anyway, figures will likely carry host_saturated"},
		{HostQuiet, 0, "the machine is quiet: other processes use 1.6 of 2 cores (sampled 2s)"},
		{HostQuiet, 42 * time.Second, "the machine is quiet now: other processes use 1.6 of 2 cores (after waiting 42s)"},
	} {
		h.State, h.Waited = c.state, c.waited
		if got := h.Line(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.state, got, c.want)
		}
		if h.Busy() != (c.state != HostQuiet) {
			t.Errorf("%s: busy %v", c.state, h.Busy())
		}
	}
}
