package headless

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/search"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

func TestPrinterLinesAndTable(t *testing.T) {
	var b bytes.Buffer
	p := New(&b)
	p.Every = 2
	t0 := time.Unix(1_800_000_000, 0)
	run := event.PlannedRun{ID: "01-r1-100rps", Index: 1, Round: 1, TargetRPS: 100, Warmup: time.Second, Duration: 2 * time.Second, Agents: 2}
	p.Consume(event.CampaignStarted{At: t0, ID: "c", Name: "n", Driver: "local", Target: "https://t", Runs: []event.PlannedRun{{ID: "00-sanity", Sanity: true}, run}})
	p.Consume(event.RunStarted{At: t0, Run: run})
	p.Consume(event.Resource{At: t0, Role: "engine", Name: "e", CPUMillicores: 250})
	for i := 1; i <= 4; i++ {
		p.Consume(event.Window{At: t0.Add(time.Duration(i) * time.Second), RunID: run.ID, Phase: stats.Measured, Completed: 100, OK: 99, Errors: 1,
			Latency: stats.Latency{P95: 7.5, P99: 9.7}})
	}
	p.Consume(event.Log{At: t0, Source: "server", Level: "info", Message: "quiet"})
	p.Consume(event.Log{At: t0, Source: "tokex", Level: "warn", Message: "loud"})
	p.Consume(event.Log{At: t0, Source: event.CoolDownSource, Level: "info", Message: "cooling down before 50/s: 3 s of at most 60 s"})
	st := &stats.Run{ID: run.ID, Round: 1, TargetRPS: 100, Status: stats.StatusDone, Requests: 200, OK: 198, SuccessRatio: 0.99, AchievedRatio: 1,
		LatencyMs: stats.Latency{P95: 7.5}, EngineCPU: &stats.CPU{AvgCores: 0.25, CPUMsPerExchange: 2.5}, ThresholdsPassed: true, Retried: 12}
	p.Consume(event.RunFinished{At: t0, RunID: run.ID, Status: stats.StatusDone, Stats: st})
	s := &summary.Summary{Status: "done", Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}}
	summary.BuildSummary(s, []*stats.Run{st}, true)
	p.Consume(event.CampaignFinished{At: t0, Status: "done", Summary: s})
	out := b.String()
	for _, want := range []string{"tokex campaign c (n) · driver local · 2 runs", "[2/2] 01-r1-100rps round 1: 100/s",
		"ok  99.00%  p95    7.50 ms", "engine  250 m", "warn: [tokex] loud", "note: cooling down before 50/s: 3 s of at most 60 s", "done ✓: 200 exchanges", "Latency by stage",
		"Per-run p95: 100/s: 7.50 ms", "✓ 1/1 passed", "PASSED",
		"[2/2]   12× retried (not an error): sent again on a new connection", "0 dropped, 12 retried after a keep-alive race (not errors) · campaign done"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "quiet") {
		t.Error("info log lines are printed")
	}
	if n := strings.Count(out, "p95    7.50 ms"); n != 2 {
		t.Errorf("%d progress lines for 4 windows every 2", n)
	}
}

// An interrupted run says it was cut short instead of printing a "% of
// target" over part of a plan; a window where nothing completed shows no
// success rate; achieved is the responses over the window's own length.
func TestPrinterAbortedRunAndEmptyWindow(t *testing.T) {
	var b bytes.Buffer
	p := New(&b)
	p.Every = 1
	t0 := time.Unix(1_800_000_000, 0)
	run := event.PlannedRun{ID: "01-r1-40rps", Index: 0, Round: 1, TargetRPS: 40, Duration: 30 * time.Second, Agents: 2}
	p.Consume(event.CampaignStarted{At: t0, ID: "c", Runs: []event.PlannedRun{run}})
	p.Consume(event.RunStarted{At: t0, Run: run})
	p.Consume(event.Window{At: t0, RunID: run.ID, Phase: stats.Measured, Seconds: 1})
	p.Consume(event.Window{At: t0.Add(time.Second), RunID: run.ID, Phase: stats.Measured, Seconds: 0.5, Completed: 22, OK: 20, Errors: 2, NoResponse: 2})
	st := &stats.Run{ID: run.ID, Round: 1, TargetRPS: 40, Status: stats.StatusAborted, Reason: "interrupted", Requests: 251, OK: 251, SuccessRatio: 1,
		AchievedRatio: 1.004, MeasuredSeconds: 6.26, LatencyMs: stats.Latency{P95: 4}}
	st.TopErrors = []stats.ErrorKind{{Error: "conn_error", Count: 1, Descriptions: []sample.ErrorDescription{{Text: "connection reset by peer", Count: 1}}}}
	p.Consume(event.RunFinished{At: t0, RunID: run.ID, Status: stats.StatusAborted, Reason: "interrupted", Stats: st})
	out := b.String()
	for _, want := range []string{`error: conn_error ×1 ("connection reset by peer")`, "    0/s  ok      —  p95", "   40/s  ok  90.91%", "01-r1-40rps aborted after 6.3 of 30 s measured: 251 exchanges, success 100.00%, dropped 0, p95 4.00 ms; not reported"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"100.4", "of target", "ok 100.00%"} {
		if strings.Contains(out, bad) {
			t.Errorf("output has %q:\n%s", bad, out)
		}
	}
}

// TestPrinterSanitisesOnce: a hostile text in an event reaches the output
// on its own line, without its controls: a newline in it cannot start a
// line of its own (a forged verdict), an escape cannot colour or move.
func TestPrinterSanitisesOnce(t *testing.T) {
	var out bytes.Buffer
	p := New(&out)
	t0 := time.Unix(1_800_000_000, 0)
	p.Consume(event.CampaignStarted{At: t0, ID: "c", Name: "n\x1b[2J", Driver: "local", Target: "https://t\r"})
	p.Consume(event.Log{At: t0, Source: "server", Level: "warn", Message: "boom\nPASSED\x1b[31m\x07"})
	got := out.String()
	if strings.ContainsAny(got, "\x1b\x07\r") {
		t.Fatalf("control characters printed: %q", got)
	}
	if !strings.Contains(got, "warn: [server] boom PASSED[31m\n") || strings.Contains(got, "\nPASSED") {
		t.Errorf("the log's newline split its line: %q", got)
	}
}

// FuzzConsume feeds any event stream (events.jsonl lines, as replay reads
// them) to the printer: no panic, and nothing but text and newlines out.
func FuzzConsume(f *testing.F) {
	f.Fuzz(func(t *testing.T, stream []byte) {
		var out bytes.Buffer
		p := New(&out)
		for _, line := range bytes.Split(stream, []byte("\n")) {
			if _, e, err := event.Unmarshal(line); err == nil {
				p.Consume(e)
			}
		}
		if bytes.ContainsAny(out.Bytes(), "\x1b\x07\r") {
			t.Fatalf("control characters printed: %q", out.Bytes())
		}
	})
}

// In a capacity search the printer says so from the start, a probe's run is
// not judged by the thresholds, and each judged probe prints the search's
// verdict: a probe broken by p99 whose run passed the thresholds is ✗.
func TestPrinterSearch(t *testing.T) {
	var b bytes.Buffer
	p := New(&b)
	t0 := time.Unix(1_800_000_000, 0)
	obj := curve.Objective{P95Ms: 50, P99Ms: 50, SuccessRatio: 0.99}
	run := event.PlannedRun{ID: "01-p1-r1-75rps", Index: 1, Round: 1, TargetRPS: 75, Warmup: time.Second, Duration: 2 * time.Second}
	p.Consume(event.CampaignStarted{At: t0, ID: "c", Name: "n", Driver: "local", Runs: []event.PlannedRun{{ID: "00-sanity", Sanity: true}},
		Search: &search.Spec{Policy: curve.Policy{Start: 75}, Objective: obj}})
	p.Consume(event.RunStarted{At: t0, Run: run})
	st := &stats.Run{ID: run.ID, Round: 1, TargetRPS: 75, Status: stats.StatusDone, Requests: 150, OK: 150, SuccessRatio: 1, AchievedRatio: 1,
		LatencyMs: stats.Latency{P95: 9, P99: 72.8}, ThresholdsPassed: true}
	p.Consume(event.RunFinished{At: t0, RunID: run.ID, Status: stats.StatusDone, Stats: st})
	p.Consume(event.Search{At: t0, Next: 37.5, Result: curve.Result{Status: curve.StatusRunning, Objective: obj, Upper: 75,
		Probes: []curve.Probe{{Rate: 75, Verdict: curve.Broken, Broken: []string{"p99 72.8 ms vs 50 ms"}}}}})
	out := b.String()
	for _, want := range []string{"capacity search: the highest rate with p95 < 50 ms, p99 < 50 ms",
		"done (a probe's round: the search judges it): 150 exchanges",
		"probe #1 75/s ✗ broken: p99 72.8 ms vs 50 ms · capacity < 75/s · next 37.5/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "✓") {
		t.Errorf("a probe judged by the thresholds:\n%s", out)
	}
}

// A busy machine is said at once, before the first run; a wait for a
// quiet one every ten seconds and when it ends (issue 27 item 2); a quiet
// machine is not (the evidence records it).
func TestHostCheckSaidAtOnce(t *testing.T) {
	var b bytes.Buffer
	p := New(&b)
	at := time.Unix(1_800_000_000, 0)
	h := event.HostCheck{At: at, State: event.HostQuiet, CPUs: 2, OthersCores: 0.2, Sampled: 2 * time.Second, QuietBelow: 1}
	p.Consume(h)
	h.State, h.OthersCores, h.WaitLimit = event.HostWaiting, 1.6, time.Minute
	for s := 0; s <= 25; s++ {
		h.Waited = time.Duration(s)*time.Second + 3*time.Millisecond
		p.Consume(h)
	}
	h.State, h.OthersCores, h.Waited = event.HostQuiet, 0.4, 26*time.Second
	p.Consume(h)
	want := "waiting for a quiet machine: other processes use 1.6 of 2 cores, quiet is below 1.0 (waited 0s of 1m0s)\n" +
		"waiting for a quiet machine: other processes use 1.6 of 2 cores, quiet is below 1.0 (waited 10s of 1m0s)\n" +
		"waiting for a quiet machine: other processes use 1.6 of 2 cores, quiet is below 1.0 (waited 20s of 1m0s)\n" +
		"the machine is quiet now: other processes use 0.4 of 2 cores (after waiting 26s)\n"
	if b.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	p.Consume(event.HostCheck{At: at, State: event.HostBusy, CPUs: 2, OthersCores: 1.62, QuietBelow: 1})
	if want := "this machine is busy: other processes use 1.6 of 2 cores; figures will likely carry host_saturated (--wait-quiet 10m waits for a quiet machine)\n"; b.String() != want {
		t.Errorf("printed %q", b.String())
	}
}
