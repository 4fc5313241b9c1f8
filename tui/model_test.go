package tui

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/forecast"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

var update = flag.Bool("update", false, "rewrite the golden views")

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii) // golden views without escape codes
	os.Exit(m.Run())
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// script is a small deterministic campaign: sanity, then 100/250/500 in
// one round, the 500 run dropping arrivals and failing its thresholds.
func script(upTo int) []event.Event {
	plan := []event.PlannedRun{{ID: "00-sanity", Sanity: true, TargetRPS: 100, Duration: 5 * time.Second, Agents: 10}}
	for i, r := range []float64{100, 250, 500} {
		plan = append(plan, event.PlannedRun{ID: []string{"01-r1-100rps", "02-r1-250rps", "03-r1-500rps"}[i], Index: i + 1, Round: 1,
			TargetRPS: r, Warmup: 2 * time.Second, Duration: 8 * time.Second, Agents: 10})
	}
	th := stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}
	evs := []event.Event{event.Forecast{At: t0, Stages: []float64{100, 250, 500}, Estimate: forecast.Estimate(forecast.Forecast{
		Cores: 2, GeneratorCores: 2, GeneratorCPUMs: 2.3, ServerCPUMs: 1.4, Server: "embedded server", Method: "200 calibration exchanges"})},
		event.CampaignStarted{At: t0, ID: "20261130-120000-test", Name: "test", Driver: "local",
			Target: "https://127.0.0.1:9031/as/token.oauth2", Runs: plan, Thresholds: th}}
	at := t0
	for _, p := range plan {
		evs = append(evs, event.RunStarted{At: at, Run: p})
		for s := 0; s < int(p.Total().Seconds()); s++ {
			ph := stats.Measured
			if time.Duration(s)*time.Second < p.Warmup {
				ph = stats.Warmup
			} else if time.Duration(s)*time.Second == p.Warmup {
				evs = append(evs, event.PhaseChanged{At: at.Add(p.Warmup), RunID: p.ID, Phase: stats.Measured})
			}
			sec := at.Add(time.Duration(s+1) * time.Second)
			var dropped int64
			if p.TargetRPS == 500 && s%3 == 0 {
				dropped = 4
			}
			lat := 4 + float64(s%4) + p.TargetRPS/100
			evs = append(evs,
				event.Resource{At: sec, Role: "engine", Name: "tokex-serve", CPUMillicores: p.TargetRPS * 3, MemoryBytes: 18 << 20},
				event.Resource{At: sec, Role: "generator", Name: "tokex-generator", CPUMillicores: p.TargetRPS},
				event.Host{At: sec, HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: p.TargetRPS * 0.004, Runnable: int(p.TargetRPS / 100),
					MemTotalBytes: 8 << 30, MemAvailableBytes: 6 << 30, GeneratorLimitCores: 2}},
				event.Window{At: sec, RunID: p.ID, Phase: ph, TargetRPS: p.TargetRPS, Completed: int64(p.TargetRPS) - dropped,
					OK: int64(p.TargetRPS) - dropped, Dropped: dropped, InFlight: 2,
					Latency: stats.Latency{Count: int64(p.TargetRPS), P50: lat / 2, P95: lat, P99: lat * 1.5}})
		}
		for a := 0; a < 10; a++ {
			evs = append(evs, event.AgentStatus{At: at.Add(p.Total()), RunID: p.ID, Agent: a, Name: "perf-agent-" + string(rune('0'+a)),
				State: "finished", Sent: int64(p.TargetRPS), OK: int64(p.TargetRPS)})
		}
		at = at.Add(p.Total())
		st := &stats.Run{ID: p.ID, Index: p.Index, Round: p.Round, Sanity: p.Sanity, Status: stats.StatusDone, TargetRPS: p.TargetRPS,
			Requests: int64(p.TargetRPS * 8), OK: int64(p.TargetRPS * 8), SuccessRatio: 1, AchievedRatio: 1, AchievedRPS: p.TargetRPS,
			LatencyMs: stats.Latency{P50: 2.5, P95: 5 + p.TargetRPS/100, P99: 9}, EngineCPU: &stats.CPU{AvgCores: p.TargetRPS * 0.003, CPUMsPerExchange: 3, Source: "proc"}}
		if p.TargetRPS == 500 {
			st.Dropped = 12
			st.Warnings = []stats.Warning{stats.Warn(stats.WarnHostSaturated, p.ID, "host saturated in 8 of 8 measured seconds")}
		}
		st.ThresholdsPassed = st.Dropped == 0
		evs = append(evs, event.RunFinished{At: at, RunID: p.ID, Status: stats.StatusDone, Stats: st})
		if p.TargetRPS == 250 {
			evs = append(evs, event.Log{At: at, Source: "tokex", Level: "warn", Message: "generator CPU above 80%"})
		}
	}
	m := New(Options{})
	for _, e := range evs {
		m.Apply(e)
	}
	sum := *m.camp.summary
	sum.Status, sum.CampaignID = "done", "20261130-120000-test"
	summary.BuildSummary(&sum, func() []*stats.Run {
		var rs []*stats.Run
		for _, r := range m.camp.runs {
			rs = append(rs, r.stats)
		}
		return rs
	}(), true)
	evs = append(evs, event.CampaignFinished{At: at, Status: "done", Summary: &sum})
	if upTo > 0 && upTo < len(evs) {
		return evs[:upTo]
	}
	return evs
}

func feed(m *Model, evs []event.Event) {
	for _, e := range evs {
		m.Update(EventMsg{Event: e})
	}
}

func TestModelFollowsTheCampaign(t *testing.T) {
	all := script(0)
	// Stop in the middle of the 500/s run.
	cut := 0
	for i, e := range all {
		if w, ok := e.(event.Window); ok && w.RunID == "03-r1-500rps" && w.Phase == stats.Measured {
			cut = i + 5 // through the next second's window
			break
		}
	}
	m := New(Options{Live: true})
	feed(m, all[:cut])
	if m.camp.current == nil || m.camp.current.plan.ID != "03-r1-500rps" || m.camp.current.state != "measuring" {
		t.Fatalf("current run %+v", m.camp.current)
	}
	if m.camp.byID["01-r1-100rps"].state != "done" || m.camp.byID["00-sanity"].state != "done" {
		t.Error("finished runs are not done")
	}
	if d := m.camp.current.data; d.droppedN != 4 || d.p95.Len() != 4 {
		t.Errorf("dropped %d, p95 points %d (warmup too)", d.droppedN, d.p95.Len())
	}
	if m.camp.summary == nil || len(m.camp.summary.Stages) != 2 || m.camp.summary.Stages[1].ReportedRun != "02-r1-250rps" {
		t.Errorf("live summary %+v", m.camp.summary)
	}
	if m.camp.lastWarn == nil || !strings.Contains(m.chrome.status(120, m.quit), "generator CPU") {
		t.Error("the warning is not shown")
	}
	// The saturated host shows live: a badge on the run and why.
	m.SetSize(120, 40)
	if v := m.View(); !strings.Contains(v, "▶ 03-r1-500rps     500/s ⚠") || !strings.Contains(v, "⚠ host_saturated · 500/s exceeds the pre-flight ~430/s: CPU 100% busy") {
		t.Errorf("no live badge:\n%s", v)
	}
	feed(m, all[cut:])
	if m.camp.finished == nil || m.camp.summary.ThresholdsPassed || m.camp.byID["03-r1-500rps"].state != "done" {
		t.Errorf("final state: finished %v summary %+v", m.camp.finished, m.camp.summary)
	}
	// Samples that arrive after the campaign ended are not part of it.
	m.SetSize(120, 40)
	before := m.View()
	feed(m, []event.Event{event.Resource{At: m.camp.now.Add(10 * time.Second), Role: "engine", Name: "tokex-serve", CPUMillicores: 5}})
	if m.View() != before {
		t.Error("an event after CampaignFinished changed the final screen")
	}
}

func TestQuitAsksWhileLiveAndStops(t *testing.T) {
	stopped := 0
	m := New(Options{Live: true, OnStop: func() { stopped++ }})
	m.SetSize(120, 40)
	feed(m, script(10))
	key := func(k string) tea.Cmd {
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
		return cmd
	}
	if cmd := key("q"); cmd != nil || !m.quit.confirm {
		t.Fatal("q quit a live campaign without asking")
	}
	if !strings.Contains(m.View(), "Stop the campaign?") {
		t.Error("no confirmation on screen")
	}
	key("n")
	if m.quit.confirm || stopped != 0 {
		t.Fatal("n did not cancel")
	}
	key("q")
	key("y")
	if stopped != 1 || !m.Stopping() {
		t.Fatal("y did not stop the campaign")
	}
	// The campaign ending closes the dashboard by itself.
	_, cmd := m.Update(EventMsg{Event: event.CampaignFinished{At: t0.Add(time.Minute), Status: "aborted"}})
	if cmd == nil {
		t.Error("the dashboard stayed open after a stop")
	}
	// A replay quits at once.
	r := New(Options{})
	if _, cmd := r.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")}); cmd == nil {
		t.Error("q did not quit a replay")
	}
}

func TestTogglesAndTooSmall(t *testing.T) {
	m := New(Options{})
	feed(m, script(0))
	m.SetSize(120, 40)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("l")})
	if v := m.View(); !strings.Contains(v, "Logs") || !strings.Contains(v, "generator CPU above 80%") {
		t.Error("logs pane not shown")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a")})
	if v := m.View(); !strings.Contains(v, "perf-agent-9") || strings.Contains(v, "Logs —") {
		t.Error("agents pane not shown instead of logs")
	}
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 20})
	if v := m.View(); !strings.Contains(v, "at least 80×24") {
		t.Errorf("too small: %q", v)
	}
}

// midRun cuts the script ten events into the 250/s run's measured phase.
func midRun(all []event.Event) []event.Event {
	for i, e := range all {
		if w, ok := e.(event.Window); ok && w.RunID == "02-r1-250rps" && w.Phase == stats.Measured {
			return all[:i+10]
		}
	}
	panic("no 250/s run")
}

// replayed is what replay emits: every event through the evidence codec.
func replayed(t testing.TB, evs []event.Event) []event.Event {
	out := make([]event.Event, 0, len(evs))
	for i, e := range evs {
		line, err := event.Marshal(uint64(i), e)
		if err != nil {
			t.Fatal(err)
		}
		_, back, err := event.Unmarshal(line)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, back)
	}
	return out
}

var sizes = [][2]int{{80, 24}, {120, 40}, {200, 60}}

// TestGoldenViews: mid-run and final screens at three sizes, live and
// replayed (the replay goldens must equal the live ones).
func TestGoldenViews(t *testing.T) {
	all := script(0)
	for _, c := range []struct {
		name string
		evs  []event.Event
	}{{"running", midRun(all)}, {"final", all}} {
		for _, sz := range sizes {
			live, rep := liveAndReplayed(t, c.evs, sz)
			name := fmt.Sprintf("%s-%dx%d", c.name, sz[0], sz[1])
			golden(t, name, live, sz[0], sz[1])
			golden(t, "replay-"+name, rep, sz[0], sz[1])
			if live != rep {
				t.Errorf("%s: live and replayed screens differ", name)
			}
		}
	}
}

// liveAndReplayed are the screens of size sz after evs, live and replayed.
func liveAndReplayed(t *testing.T, evs []event.Event, sz [2]int) (live, rep string) {
	t.Helper()
	l := New(Options{Live: true})
	l.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
	feed(l, evs)
	r := New(Options{Source: "replay of testdata"})
	r.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
	feed(r, replayed(t, evs))
	return l.View(), r.View()
}

// golden checks a view's size and compares it with testdata/NAME.golden
// (go test ./tui -update rewrites them).
func golden(t *testing.T, name, got string, w, h int) {
	t.Helper()
	lines := strings.Split(got, "\n")
	if len(lines) != h {
		t.Errorf("%s: %d lines, want %d", name, len(lines), h)
	}
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw > w {
			t.Errorf("%s: line %d is %d wide: %q", name, i, lw, l)
		}
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update)", err)
	}
	if got != string(want) {
		t.Errorf("view differs from %s:\n%s", path, got)
	}
}

// A stage whose middle round hit a dead target (0 % success, fastest p95):
// the results table reports the worse passing run, marks the failed one
// and says the stage failed, also at 80 columns.
func TestResultsTableMarksFailedRun(t *testing.T) {
	plan := []event.PlannedRun{}
	for r := 1; r <= 3; r++ {
		plan = append(plan, event.PlannedRun{ID: fmt.Sprintf("%02d-r%d-500rps", r, r), Index: r, Round: r, TargetRPS: 500, Duration: time.Second, Agents: 10})
	}
	m := New(Options{Live: true})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Apply(event.CampaignStarted{At: t0, ID: "c", Runs: plan, Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}})
	for i, p95 := range []float64{9.5, 4.9, 9.8} {
		st := &stats.Run{ID: plan[i].ID, Round: i + 1, TargetRPS: 500, Status: stats.StatusDone, Requests: 150008, OK: 150008, SuccessRatio: 1,
			LatencyMs: stats.Latency{P50: 5, P95: p95, P99: 12}, EngineCPU: &stats.CPU{AvgCores: 2.5, CPUMsPerExchange: 5.01}, ThresholdsPassed: true}
		if i == 1 {
			st.OK, st.SuccessRatio, st.ThresholdsPassed = 0, 0, false
		}
		m.Apply(event.RunFinished{At: t0, RunID: st.ID, Status: stats.StatusDone, Stats: st})
	}
	v := m.View()
	var row string
	for _, l := range strings.Split(v, "\n") {
		if strings.HasPrefix(l, "500/s") {
			row = l
		}
	}
	for _, want := range []string{"9.50 4.90 ✗ [9.80]", "100.0", "9.8", "✗ 1 failed"} {
		if !strings.Contains(row, want) {
			t.Errorf("row lacks %q: %q\n%s", want, row, v)
		}
	}
}

// The live "achieved" is responses per second of the window's own length:
// a half-second last window of a 40/s run shows 40/s (it showed 20/s),
// refused connections are not achieved, and a late warmup response does
// not replace the measured figures.
func TestLiveAchievedIsResponsesOverTheWindow(t *testing.T) {
	run := event.PlannedRun{ID: "01-r1-40rps", Index: 0, Round: 1, TargetRPS: 40, Warmup: time.Second, Duration: 2500 * time.Millisecond, Agents: 2}
	line := func(evs ...event.Event) string {
		m := New(Options{Live: true})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		feed(m, append([]event.Event{event.CampaignStarted{At: t0, ID: "c", Runs: []event.PlannedRun{run}}, event.RunStarted{At: t0, Run: run},
			event.PhaseChanged{At: t0.Add(time.Second), RunID: run.ID, Phase: stats.Measured}}, evs...))
		for _, l := range strings.Split(m.View(), "\n") {
			if i := strings.Index(l, "target 40/s"); i >= 0 {
				return strings.TrimSpace(l[i:])
			}
		}
		return ""
	}
	last := event.Window{At: t0.Add(3 * time.Second), Seconds: 0.5, RunID: run.ID, Phase: stats.Measured, Completed: 20, OK: 20}
	if got := line(last); !strings.Contains(got, "achieved 40/s") {
		t.Errorf("partial window: %q", got)
	}
	refused := event.Window{At: t0.Add(2 * time.Second), Seconds: 1, RunID: run.ID, Phase: stats.Measured, Completed: 40, Errors: 40, NoResponse: 40}
	if got := line(refused); !strings.Contains(got, "achieved 0/s") {
		t.Errorf("refused connections: %q", got)
	}
	late := event.Window{At: t0.Add(3 * time.Second), Seconds: 0, RunID: run.ID, Phase: stats.Warmup, Completed: 1, OK: 1}
	if got := line(last, late); !strings.Contains(got, "achieved 40/s") {
		t.Errorf("late warmup window replaced the measured one: %q", got)
	}
}

// Before the first run, the pre-flight estimate is on screen.
func TestPreflightShownBeforeTheFirstRun(t *testing.T) {
	m := New(Options{Live: true})
	m.SetSize(120, 40)
	feed(m, script(2))
	v := m.View()
	if !strings.Contains(v, "pre-flight: generator 2.30 + embedded server 1.40 CPU-ms per exchange") || !strings.Contains(v, "it cannot drive stage 500/s") {
		t.Errorf("no pre-flight line:\n%s", v)
	}
}

// A campaign stopped for an unreachable target says why in the status line,
// and a long reason never hides how to leave.
func TestFinalStatusKeepsTheReasonAndTheWayOut(t *testing.T) {
	run := event.PlannedRun{ID: "01-r1-5rps", Index: 0, Round: 1, TargetRPS: 5, Duration: 4 * time.Second, Agents: 2}
	m := New(Options{Live: true})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	reason := "target unreachable: no HTTP response for 10s (target.unreachable_after): every request since 21:28:42.469 failed at the connection (6 failed, the last with conn_error: dial tcp 127.0.0.1:1: connect: connection refused)"
	feed(m, []event.Event{event.CampaignStarted{At: t0, ID: "c", Runs: []event.PlannedRun{run}}, event.RunStarted{At: t0, Run: run},
		event.RunFinished{At: t0, RunID: run.ID, Status: stats.StatusFailed, Reason: reason, Stats: &stats.Run{ID: run.ID, TargetRPS: 5, Round: 1, Status: stats.StatusFailed, Reason: reason}},
		event.CampaignFinished{At: t0, Status: "failed", Reason: reason}})
	lines := strings.Split(m.View(), "\n")
	status := lines[len(lines)-2]
	if !strings.HasPrefix(status, "campaign failed: target unreachable: no HTTP response for 10s") || !strings.HasSuffix(status, "— press q to exit") {
		t.Errorf("status line %q", status)
	}
}

// A k6 agent's send lag includes minting the subject token (~3.3 ms with
// RS256): live, it is not called late; the run's end judges k6's start lag.
func TestLiveLateRuleSkipsK6Agents(t *testing.T) {
	run := event.PlannedRun{ID: "01-r1-500rps", Index: 0, Round: 1, TargetRPS: 500, Warmup: time.Second, Duration: 5 * time.Second, Agents: 10}
	for driver, late := range map[string]bool{"local": true, "kube (ctx/ns)": false} {
		m := New(Options{Live: true})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		feed(m, []event.Event{event.CampaignStarted{At: t0, ID: "c", Driver: driver, Runs: []event.PlannedRun{run}}, event.RunStarted{At: t0, Run: run},
			event.PhaseChanged{At: t0.Add(time.Second), RunID: run.ID, Phase: stats.Measured},
			event.Window{At: t0.Add(2 * time.Second), Seconds: 1, RunID: run.ID, Phase: stats.Measured, TargetRPS: 500, Completed: 500, OK: 500,
				Latency: stats.Latency{Count: 500, P50: 9}, SendLagP99: 6}})
		if got := slices.Contains(m.camp.health.Codes(), stats.WarnGeneratorLate); got != late {
			t.Errorf("%s: late %v, want %v", driver, got, late)
		}
	}
}

// TestHostileTextIsDrawnNeverObeyed is issue 9 item 17 for the dashboard:
// names, targets, logs, reasons and warnings from evidence or from live
// server and pod logs reach the screen without their control sequences.
func TestHostileTextIsDrawnNeverObeyed(t *testing.T) {
	const a = "\x1b]0;pwned\x07\x1b[2J\u009b31m\u202ex\rPASSED"
	plan := []event.PlannedRun{{ID: "01-r1-10rps" + a, Round: 1, TargetRPS: 10, Duration: time.Second, Agents: 1}}
	s := &summary.Summary{CampaignID: a, Name: a, Status: "failed", Warnings: []stats.Warning{stats.Warn(stats.WarnNote, a, a)}}
	r := &stats.Run{ID: plan[0].ID, Status: stats.StatusFailed, Reason: a, Warnings: []stats.Warning{stats.Warn(stats.WarnHostSaturated, a, a)}, Errors: map[string]int64{a: 1}}
	summary.BuildSummary(s, []*stats.Run{r}, false)
	evs := []event.Event{
		event.CampaignStarted{At: t0, ID: a, Name: a, Driver: a, Target: a, Runs: plan},
		event.RunStarted{At: t0, Run: plan[0]},
		event.AgentStatus{At: t0, RunID: plan[0].ID, Name: a, State: a},
		event.Resource{At: t0, Role: "engine", Name: a, CPUMillicores: 5},
		event.Log{At: t0, Source: a, Level: "error", Message: a},
		event.RunFinished{At: t0, RunID: plan[0].ID, Status: stats.StatusFailed, Reason: a, Stats: r},
		event.CampaignFinished{At: t0, Status: "failed", Reason: a, Summary: s},
	}
	for _, keys := range [][]string{nil, {"l"}, {"a"}} {
		m := New(Options{})
		m.SetSize(120, 40)
		for _, e := range evs[:len(evs)-1] {
			m.Apply(e)
		}
		for _, k := range keys {
			m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
		}
		views := []string{m.View()}
		m.Apply(evs[len(evs)-1])
		views = append(views, m.View())
		for _, v := range views {
			for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e", "\r"} {
				if strings.Contains(v, bad) {
					t.Errorf("keys %v: the view holds %q:\n%q", keys, bad, v)
				}
			}
		}
	}
	if evs[4].(event.Log).Message != a {
		t.Error("the event itself was changed (other consumers share it)")
	}
}

// FuzzApply feeds any event stream to the dashboard and draws it in every
// pane: no panic, whatever the evidence holds.
func FuzzApply(f *testing.F) {
	f.Fuzz(func(t *testing.T, stream []byte) {
		m := New(Options{})
		m.SetSize(100, 30)
		for _, line := range bytes.Split(stream, []byte("\n")) {
			if _, e, err := event.Unmarshal(line); err == nil {
				m.Apply(e)
			}
		}
		for _, k := range []string{"", "l", "a", "?"} {
			if k != "" {
				m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
			}
			_ = m.View()
		}
	})
}
