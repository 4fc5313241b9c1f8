package tui

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// keyMsg is the message of a key by its name: tab, up, enter… or runes.
func keyMsg(k string) tea.KeyMsg {
	named := map[string]tea.KeyType{"tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab, "up": tea.KeyUp, "down": tea.KeyDown,
		"enter": tea.KeyEnter, "esc": tea.KeyEsc}
	if t, ok := named[k]; ok {
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

func press(m *Model, keys ...string) {
	for _, k := range keys {
		m.Update(keyMsg(k))
		_ = m.View() // as the program does after every message
	}
}

func emptyRows(view string) int {
	n := 0
	for _, l := range strings.Split(view, "\n") {
		if strings.TrimSpace(l) == "" {
			n++
		}
	}
	return n
}

// A 120×40 screen mid-run uses its rows: at most 3 are empty.
func TestMidRunScreenUsesItsRows(t *testing.T) {
	all := script(0)
	for _, cut := range []int{len(midRun(all)), len(midRun(all)) - 30, len(all) - 40} {
		m := New(Options{Live: true})
		m.SetSize(120, 40)
		feed(m, all[:cut])
		if n := emptyRows(m.View()); n > 3 {
			t.Errorf("%d events in: %d empty rows:\n%s", cut, n, m.View())
		}
	}
}

// Charts at 120×40 and up, sparklines below; braille either way only where
// charts are drawn.
func TestChartsGrowWithTheTerminal(t *testing.T) {
	m := New(Options{Live: true})
	feed(m, midRun(script(0)))
	braille := func() int {
		n := 0
		for _, r := range m.View() {
			if r > 0x2800 && r <= 0x28ff {
				n++
			}
		}
		return n
	}
	m.SetSize(80, 24)
	small := braille()
	m.SetSize(120, 40)
	mid := braille()
	m.SetSize(200, 60)
	big := braille()
	if small != 0 || mid == 0 || big <= mid {
		t.Errorf("braille cells: %d at 80×24, %d at 120×40, %d at 200×60", small, mid, big)
	}
	v := m.View()
	for _, want := range []string{"latency p95 6.50 ms", "engine CPU 750 m = 0.75 cores", "generator CPU 250 m = 0.25 cores", "engine memory 18.0 MiB",
		"achieved 250/s of 250", "p95 ms per stage", "Errors & warnings"} {
		if !strings.Contains(v, want) {
			t.Errorf("200×60 lacks %q:\n%s", want, v)
		}
	}
}

// Tab and Shift-Tab walk every panel on screen and come back; a chart with
// the focus zooms to fill the chart area.
func TestFocusCyclesAndZooms(t *testing.T) {
	m := New(Options{Live: true})
	m.SetSize(120, 40)
	feed(m, midRun(script(0)))
	_ = m.View()
	seen := map[panel]bool{}
	for i := 0; i < len(m.zones); i++ {
		seen[m.focus] = true
		press(m, "tab")
	}
	if len(seen) != 9 || m.focus != panelLadder {
		t.Errorf("tab visited %v, back on %v", seen, m.focus)
	}
	press(m, "shift+tab")
	if m.focus != panelResults {
		t.Errorf("shift+tab from the ladder went to %v", m.focus)
	}
	press(m, "tab", "tab", "tab") // ladder, errors, latency
	if m.focus != panelLatency {
		t.Fatalf("focus %v", m.focus)
	}
	press(m, "z")
	v := m.View()
	if !m.grid.zoom || strings.Contains(v, "engine memory") || !strings.Contains(v, "▸ latency p95") {
		t.Errorf("zoom: %v\n%s", m.grid.zoom, v)
	}
	press(m, "z")
	if m.grid.zoom || !strings.Contains(m.View(), "engine memory") {
		t.Error("z did not unzoom")
	}
}

// History: a finished run selected in the ladder shows its own charts and
// figures while the live run's progress stays on screen; f returns to it,
// and events keep flowing into the live run meanwhile.
func TestSelectAFinishedRunThenFollowLive(t *testing.T) {
	all := script(0)
	mid := midRun(all)
	m := New(Options{Live: true})
	m.SetSize(120, 40)
	feed(m, mid[:len(mid)-4])
	press(m, "up", "enter") // 01-r1-100rps
	if m.com.selected == nil || m.com.selected.plan.ID != "01-r1-100rps" {
		t.Fatalf("selected %+v", m.com.selected)
	}
	feed(m, mid[len(mid)-4:])
	v := m.View()
	for _, want := range []string{"» showing 01-r1-100rps ✓ done", "02-r1-250rps measuring", "engine CPU average 300 m = 0.30 cores", "run latency p95 6.00 ms", "»✓ 01-r1-100rps", "target 100/s"} {
		if !strings.Contains(v, want) {
			t.Errorf("history view lacks %q:\n%s", want, v)
		}
	}
	press(m, "up", "enter") // the sanity run
	if m.com.selected.plan.ID != "00-sanity" {
		t.Errorf("selected %s", m.com.selected.plan.ID)
	}
	press(m, "f")
	v = m.View()
	if m.com.selected != nil || !strings.Contains(v, "engine CPU 750 m") || strings.Contains(v, "» showing") || m.ladder.cursor != 2 {
		t.Errorf("f did not follow live (cursor %d):\n%s", m.ladder.cursor, v)
	}
	// Enter on a pending run changes nothing; Enter on the live run follows it.
	press(m, "down", "enter")
	if m.com.selected != nil {
		t.Error("a pending run was selected")
	}
	press(m, "up", "up", "enter", "down", "enter")
	if m.com.selected != nil {
		t.Error("enter on the live run did not follow it")
	}
	// The same in the compact layout.
	m.SetSize(80, 24)
	press(m, "up", "enter")
	if v := m.View(); !strings.Contains(v, "» showing 01-r1-100rps") || !strings.Contains(v, "target 100/s") {
		t.Errorf("80×24 history:\n%s", v)
	}
}

// A click on a ladder row shows that run; a click on a chart focuses it;
// the wheel over the ladder moves the cursor.
func TestMouse(t *testing.T) {
	m := New(Options{Live: true})
	m.SetSize(120, 40)
	feed(m, midRun(script(0)))
	_ = m.View()
	click := func(x, y int) {
		m.Update(tea.MouseMsg{X: x, Y: y, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
		_ = m.View()
	}
	click(5, 5) // header 2 + rule + title: row 4 is 00-sanity, row 5 01-r1-100rps
	if m.com.selected == nil || m.com.selected.plan.ID != "01-r1-100rps" {
		t.Fatalf("click on the ladder selected %+v", m.com.selected)
	}
	click(100, 12) // the throughput chart
	if m.focus != panelThroughput {
		t.Errorf("focus %v after a click on the throughput chart", m.focus)
	}
	m.Update(tea.MouseMsg{X: 5, Y: 6, Button: tea.MouseButtonWheelDown, Action: tea.MouseActionPress})
	if m.focus != panelLadder || m.ladder.cursor != 2 {
		t.Errorf("wheel: focus %v cursor %d", m.focus, m.ladder.cursor)
	}
}

// Resizing re-lays out at once and keeps selection, focus and zoom; below
// 80×24 a clear message, and back again the same state.
func TestResizeKeepsState(t *testing.T) {
	m := New(Options{Live: true})
	m.SetSize(120, 40)
	feed(m, midRun(script(0)))
	press(m, "up", "enter", "tab", "z")
	before := m.View()
	for _, sz := range [][2]int{{200, 60}, {60, 20}, {80, 24}, {79, 40}, {120, 40}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		v := m.View()
		if sz[0] < 80 || sz[1] < 24 {
			if !strings.Contains(v, "at least 80×24") {
				t.Errorf("%v: %q", sz, v)
			}
			continue
		}
		if got := len(strings.Split(v, "\n")); got != sz[1] {
			t.Errorf("%v: %d lines", sz, got)
		}
	}
	if after := m.View(); after != before {
		t.Errorf("state lost in resizing:\n%s\n---\n%s", before, after)
	}
}

// The errors panel names the live run's error codes as windows bring them,
// the warnings its samples raise, and each finished run's coded warnings.
func TestErrorsPanelLive(t *testing.T) {
	run := event.PlannedRun{ID: "01-r1-50rps", Round: 1, TargetRPS: 50, Warmup: 0, Duration: 10e9, Agents: 1}
	m := New(Options{Live: true})
	m.SetSize(120, 40)
	feed(m, []event.Event{
		event.CampaignStarted{At: t0, ID: "c", Runs: []event.PlannedRun{run}},
		event.RunStarted{At: t0, Run: run},
		event.Window{At: t0, Seconds: 1, RunID: run.ID, Phase: stats.Measured, TargetRPS: 50, Completed: 50, OK: 40, Errors: 10,
			ErrorKinds: map[string]int64{"oauth_error:invalid_grant": 7, "timeout": 3}},
		event.Window{At: t0.Add(1e9), Seconds: 1, RunID: run.ID, Phase: stats.Measured, TargetRPS: 50, Completed: 50, OK: 45, Errors: 5,
			ErrorKinds: map[string]int64{"oauth_error:invalid_grant": 5}},
		event.Host{At: t0.Add(1e9), HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: 2, StealCores: 0}},
	})
	v := m.View()
	for _, want := range []string{"✗ 12×", "oauth_error:invalid_grant", "✗ 3× timeout", "⚠ host_saturated"} {
		if !strings.Contains(v, want) {
			t.Errorf("errors panel lacks %q:\n%s", want, v)
		}
	}
	if strings.Index(v, "invalid_grant") > strings.Index(v, "3× timeout") {
		t.Error("errors are not most common first")
	}
	// Focused, a panel with more than fits scrolls; it stops at its last line.
	for i := range 20 {
		m.camp.warnings = append(m.camp.warnings, stats.Warn(stats.WarnDropped, fmt.Sprintf("run-%d", i), "dropped arrivals"))
	}
	m.SetSize(100, 32)
	press(m, "tab", "down")
	if v := m.View(); m.focus != panelErrors || !strings.Contains(v, "▸ Errors & warnings ↑1") || strings.Contains(v, "12×") {
		t.Errorf("scrolled errors panel (focus %v):\n%s", m.focus, v)
	}
	press(m, "down", "down", "down", "down", "down", "down", "down", "down")
	last := m.errors.scroll
	press(m, strings.Split(strings.Repeat("down ", 100), " ")[:100]...)
	if m.errors.scroll == last || !strings.Contains(m.View(), "run-0: dropped arrivals") {
		t.Errorf("the last line is not reachable (scroll %d):\n%s", m.errors.scroll, m.View())
	}
	before := m.errors.scroll
	press(m, "down")
	if m.errors.scroll != before {
		t.Error("scrolled past the end")
	}
}

// Colours follow lipgloss's profile, which NO_COLOR makes plain text: no
// escape code anywhere, the progress bar's included.
func TestNoColor(t *testing.T) {
	defer lipgloss.SetColorProfile(termenv.Ascii)
	view := func(p termenv.Profile) string {
		lipgloss.SetColorProfile(p)
		m := New(Options{Live: true})
		m.SetSize(120, 40)
		feed(m, midRun(script(0)))
		return m.View()
	}
	if v := view(termenv.TrueColor); !strings.Contains(v, "\x1b[") {
		t.Fatal("no colour with a colour terminal")
	}
	env := termenv.WithEnvironment(environ{"NO_COLOR": "1", "TERM": "xterm-256color", "COLORTERM": "truecolor"})
	p := termenv.NewOutput(os.Stdout, env, termenv.WithTTY(true)).EnvColorProfile()
	if v := view(p); strings.Contains(v, "\x1b") {
		t.Errorf("NO_COLOR (profile %v) still colours:\n%q", p, v)
	}
}

type environ map[string]string

func (e environ) Environ() []string {
	var out []string
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}
func (e environ) Getenv(k string) string { return e[k] }

// The footer names every key, also at 80 columns.
func TestFooterListsEveryKey(t *testing.T) {
	m := New(Options{Live: true})
	m.SetSize(80, 24)
	feed(m, midRun(script(0)))
	lines := strings.Split(m.View(), "\n")
	footer := lines[len(lines)-1]
	for _, b := range m.ShortHelp() {
		if !strings.Contains(footer, b.Help().Key+" "+b.Help().Desc) {
			t.Errorf("footer %q lacks %q", footer, b.Help().Key)
		}
	}
	press(m, "?")
	for _, want := range []string{"tab, shift+tab", "up/k, down/j", "enter", "f/esc", "q/ctrl+c", "y stops it"} {
		if v := m.View(); !strings.Contains(v, want) {
			t.Errorf("? help lacks %q:\n%s", want, v)
		}
	}
}

// Engine Pods with CPU requests and limits: the engine chart says both, in
// millicores, and draws them as lines.
func TestEngineRequestsAndLimits(t *testing.T) {
	run := event.PlannedRun{ID: "01-r1-50rps", Round: 1, TargetRPS: 50, Duration: 10e9, Agents: 1}
	m := New(Options{Live: true})
	m.SetSize(200, 60)
	evs := []event.Event{event.CampaignStarted{At: t0, ID: "c", Driver: "kube (ctx/ns)", Runs: []event.PlannedRun{run}}, event.RunStarted{At: t0, Run: run}}
	for s := 1; s <= 5; s++ {
		for _, pod := range []string{"pf-engine-0", "pf-engine-1"} {
			evs = append(evs, event.Resource{At: t0.Add(time.Duration(s) * time.Second), Role: "engine", Name: pod, CPUMillicores: 300,
				MemoryBytes: 1 << 30, RequestMillicores: 500, LimitMillicores: 1000})
		}
	}
	feed(m, evs)
	v := m.View()
	if !strings.Contains(v, "2 engines' CPU 600 m = 0.60 cores · req/lim 1000/2000 m") {
		t.Errorf("engine chart title:\n%s", v)
	}
	// One engine without a limit: the engines have no limit together.
	feed(m, []event.Event{event.Resource{At: t0.Add(6 * time.Second), Role: "engine", Name: "pf-engine-2", CPUMillicores: 300, RequestMillicores: 500}})
	if v := m.View(); !strings.Contains(v, "3 engines' CPU 900 m = 0.90 cores · requests 1500 m") {
		t.Errorf("without a limit:\n%s", v)
	}
}
