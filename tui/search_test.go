package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/search"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
)

// searchScript is a capacity campaign as the runner emits it: each probe
// round a run planned as it is decided, then a capacity_search event with
// the search so far; the search is a real curve.Search against a server
// whose p95 grows as 5 ms / (1 − rate/400) and p99 is 1.5 × p95, objective
// p95 < 50 ms and p99 < 50 ms; the run thresholds have no p99, so a probe
// broken by p99 has runs that passed them.
func searchScript() []event.Event {
	obj := curve.Objective{P95Ms: 50, P99Ms: 50, SuccessRatio: 0.99}
	spec := search.Spec{Policy: curve.Policy{Start: 50, Min: 10, Max: 2000, Rounds: 1, Resolution: 0.05, CoolDown: time.Second}, Objective: obj}
	s := curve.NewSearch(spec.Policy, obj)
	th := stats.Thresholds{P95Ms: 50, SuccessRatio: 0.99}
	spec.Thresholds = th
	evs := []event.Event{event.CampaignStarted{At: t0, ID: "20261130-120000-cap", Name: "cap", Driver: "local",
		Target: "https://127.0.0.1:9031/as/token.oauth2", Thresholds: th, Search: &spec}}
	at, probe := t0, 0
	var runs []*stats.Run
	for i := 0; i < 30; i++ {
		step := s.Next()
		if step.Done {
			break
		}
		if step.Round == 1 {
			probe++
		}
		p := event.PlannedRun{ID: fmt.Sprintf("%02d-p%d-r%d-%grps", i, probe, step.Round, step.Rate), Index: i, Round: step.Round,
			TargetRPS: step.Rate, Warmup: time.Second, Duration: 4 * time.Second, Agents: 4}
		p95 := 500.0
		if rho := step.Rate / 400; rho < 1 {
			p95 = 5 / (1 - rho)
		}
		evs = append(evs, event.RunStarted{At: at, Run: p})
		for sec := 1; sec <= 5; sec++ {
			ph := stats.Measured
			if sec == 1 {
				ph = stats.Warmup
			}
			evs = append(evs, event.Window{At: at.Add(time.Duration(sec) * time.Second), RunID: p.ID, Phase: ph, TargetRPS: step.Rate,
				Completed: int64(step.Rate), OK: int64(step.Rate), Latency: stats.Latency{Count: int64(step.Rate), P50: p95 / 2, P95: p95, P99: p95 * 1.5}})
		}
		at = at.Add(p.Total())
		st := &stats.Run{ID: p.ID, Index: i, Round: step.Round, Status: stats.StatusDone, TargetRPS: step.Rate,
			Requests: int64(step.Rate * 4), OK: int64(step.Rate * 4), SuccessRatio: 1, AchievedRatio: 1, AchievedRPS: step.Rate,
			LatencyMs: stats.Latency{P50: p95 / 2, P95: p95, P99: p95 * 1.5}, ThresholdsPassed: p95 < 50}
		runs = append(runs, st)
		evs = append(evs, event.RunFinished{At: at, RunID: p.ID, Status: stats.StatusDone, Stats: st})
		s.Observe(search.Round(st, th))
		if next := s.Next(); next.Done || next.Round == 1 {
			evs = append(evs, event.Search{At: at, Result: s.Result(), Next: next.Rate})
		}
	}
	res := s.Result()
	sum := &summary.Summary{CampaignID: "20261130-120000-cap", Name: "cap", Status: "done", Thresholds: th, Capacity: &res}
	summary.BuildSummary(sum, runs, true)
	return append(evs, event.CampaignFinished{At: at, Status: "done", Summary: sum})
}

// searchAfter cuts the script after its n-th capacity_search event.
func searchAfter(evs []event.Event, n int) []event.Event {
	for i, e := range evs {
		if _, ok := e.(event.Search); ok {
			if n--; n == 0 {
				return evs[:i+1]
			}
		}
	}
	panic("too few searches")
}

// TestModelFollowsTheSearch: the model keeps the latest bracket and next
// rate, and a finished campaign's summary gives the search as it ended
// (a replay of evidence without the events too).
func TestModelFollowsTheSearch(t *testing.T) {
	all := searchScript()
	m := New(Options{Live: true})
	feed(m, searchAfter(all, 4)) // 50, 100, 200 passed; 400 broke
	if res, next := m.camp.search, m.camp.next; res == nil || res.Bracket() != "≥ 200/s, < 400/s" || next != 300 || len(res.Probes) != 4 {
		t.Fatalf("after four probes: %+v next %v", res, next)
	}
	feed(m, all[len(searchAfter(all, 4)):])
	res, next := m.camp.search, m.camp.next
	if res.Status != curve.StatusFound || next != 0 || res.Upper-res.Capacity > 0.05*res.Capacity {
		t.Errorf("at the end: %s next %v", res.Line(), next)
	}
	// Without the capacity_search events, the summary's capacity.
	var noSearch []event.Event
	for _, e := range all {
		if _, ok := e.(event.Search); !ok {
			noSearch = append(noSearch, e)
		}
	}
	r := New(Options{})
	feed(r, noSearch)
	if got := r.camp.search; got == nil || got.Line() != res.Line() {
		t.Errorf("from the summary: %+v", got)
	}
}

// TestSearchPanel: the stage-curve panel of a capacity campaign shows the
// bracket and the next rate, each probe with its verdict and what broke,
// and the compact layout the bracket in one line.
func TestSearchPanel(t *testing.T) {
	m := New(Options{Live: true})
	m.SetSize(120, 40)
	feed(m, searchAfter(searchScript(), 4))
	v := m.View()
	for _, want := range []string{"capacity ≥ 200/s, < 400/s · next 300/s", "#1     50/s ✓ pass", "#4    400/s ✗ broken  p99 750 ms vs 50 ms", "▾"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q in\n%s", want, v)
		}
	}
	m.SetSize(80, 24)
	if v := m.View(); !strings.Contains(v, "✗ capacity ≥ 200/s, < 400/s · next 300/s") {
		t.Errorf("compact view without the bracket:\n%s", v)
	}
}

// TestSearchGoldenViews: a capacity campaign mid-search and at its end at
// three sizes; the replayed screens equal the live ones.
func TestSearchGoldenViews(t *testing.T) {
	all := searchScript()
	for _, c := range []struct {
		name string
		evs  []event.Event
	}{{"search-running", searchAfter(all, 5)}, {"search-final", all}} {
		for _, sz := range sizes {
			live, rep := liveAndReplayed(t, c.evs, sz)
			name := fmt.Sprintf("%s-%dx%d", c.name, sz[0], sz[1])
			golden(t, name, live, sz[0], sz[1])
			if live != rep {
				t.Errorf("%s: live and replayed screens differ:\n%s\n%s", name, live, rep)
			}
		}
	}
}

// A probe broken by p99 whose run passed the thresholds (no p99 in them) is
// ✗ in the results table and the ladder, live, replayed and at the end;
// never ✓.
func TestResultsJudgeProbesBySearch(t *testing.T) {
	all := searchScript()
	var rate, run string
	for _, e := range all {
		if v, ok := e.(event.RunFinished); ok && v.Stats.ThresholdsPassed && v.Stats.LatencyMs.P99 >= 50 {
			rate, run = units.StageLabel(v.Stats.TargetRPS), v.RunID
			break
		}
	}
	if rate == "" {
		t.Fatal("the script has no probe broken by p99 alone")
	}
	for _, evs := range [][]event.Event{searchAfter(all, 6), all} {
		live, rep := liveAndReplayed(t, evs, [2]int{200, 60})
		for _, v := range []string{live, rep} {
			row, ladder := "", ""
			for _, l := range strings.Split(v, "\n") {
				if f := strings.Fields(l); len(f) > 0 && f[0] == rate {
					row = l
				}
				if left, _, _ := strings.Cut(l, "│"); strings.Contains(left, run) {
					ladder = left
				}
			}
			if !strings.Contains(row, "✗ broken: p99") || strings.Contains(row, "✓") {
				t.Errorf("%s: results row %q in\n%s", rate, row, v)
			}
			if !strings.Contains(ladder, "✗") || strings.Contains(ladder, "✓") {
				t.Errorf("%s: ladder row %q in\n%s", run, ladder, v)
			}
		}
	}
}

// The campaign-start event says a campaign is a capacity search: the panel
// shows it before the first probe is judged. Evidence written before the
// event said so shows the stage curve until the first capacity_search.
func TestSearchFromTheStart(t *testing.T) {
	all := searchScript()
	m := New(Options{Live: true})
	m.SetSize(120, 40)
	feed(m, all[:2]) // started, and the first probe's round under way
	if v := m.View(); !strings.Contains(v, "capacity search · first 50/s") {
		t.Errorf("not a search from the start:\n%s", v)
	}
	old := all[0].(event.CampaignStarted)
	old.Search = nil
	r := New(Options{Live: true})
	r.SetSize(120, 40)
	feed(r, append([]event.Event{old}, all[1]))
	if v := r.View(); strings.Contains(v, "capacity search") {
		t.Errorf("old evidence read as a search:\n%s", v)
	}
	feed(r, searchAfter(all, 1)[2:])
	if v := r.View(); !strings.Contains(v, "capacity < 50/s") && !strings.Contains(v, "capacity ≥ 50/s") {
		t.Errorf("the first capacity_search did not make it a search:\n%s", v)
	}
}

// TestSearchShowsTheCoolDown: a cool-down after a broken probe shows as
// progress in the search's title until the next run starts (issue 23).
func TestSearchShowsTheCoolDown(t *testing.T) {
	m := New(Options{Live: true})
	m.SetSize(200, 40)
	evs := searchAfter(searchScript(), 4)
	feed(m, evs)
	line := "cooling down before 300/s: engine 0.93 cores (≤ 0.11, at rest 0.01), probe request 1.84 s (≤ 13.0 ms); 12 s of at most 60 s"
	feed(m, []event.Event{event.Log{At: t0, Source: event.CoolDownSource, Level: "info", Message: line}})
	if v := m.View(); !strings.Contains(v, "cooling down before 300/s: engine 0.93 cores") {
		t.Errorf("no cool-down in\n%s", v)
	}
	m.SetSize(80, 24)
	if v := m.View(); !strings.Contains(v, "✗ cooling down before 300/s") {
		t.Errorf("compact view without the cool-down:\n%s", v)
	}
	feed(m, []event.Event{event.RunStarted{At: t0, Run: event.PlannedRun{ID: "09-p5-r1-300rps", Index: 9, Round: 1, TargetRPS: 300}}})
	if v := m.View(); strings.Contains(v, "cooling down") {
		t.Errorf("the cool-down outlived the next run's start:\n%s", v)
	}
}

// TestSearchPanelRedrawsTheCoolDown: the chart grid draws a panel again
// only when what it shows changed; the cool-down is what the search panel
// shows after a broken probe, so a frame drawn before the cool-down line
// arrived must not hide it (on main the panel stayed as it was until the
// next run started: the line never showed at 120×40 and up).
func TestSearchPanelRedrawsTheCoolDown(t *testing.T) {
	m := New(Options{Live: true})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	feed(m, searchAfter(searchScript(), 4))
	if v := m.View(); strings.Contains(v, "cooling down") {
		t.Fatalf("a cool-down before any:\n%s", v)
	}
	for _, sec := range []int{2, 12} {
		line := fmt.Sprintf("cooling down before 300/s: %d s of at most 60 s", sec)
		feed(m, []event.Event{event.Log{At: t0, Source: event.CoolDownSource, Level: "info", Message: line}})
		if v := m.View(); !strings.Contains(v, fmt.Sprintf("%d s of at most 60 s", sec)) {
			t.Errorf("after %q the panel shows:\n%s", line, v)
		}
	}
}
