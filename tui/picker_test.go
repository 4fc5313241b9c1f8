package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tokex-dev/tokex/collector/evidence"
)

func listings() []evidence.Listing {
	return []evidence.Listing{
		{Dir: "tokex-evidence/20261130-154030.417-article", ID: "20261130-154030.417-article", Name: "article", Status: "done", Verdict: "passed",
			Started: time.Date(2026, 11, 30, 15, 40, 30, 0, time.UTC), Runs: 9, Done: 9, Report: "tokex-evidence/20261130-154030.417-article/report.html",
			Stages: []evidence.ListedStage{{TargetRPS: 100, P95Ms: 4.1, Reported: true}, {TargetRPS: 250, P95Ms: 6.2, Reported: true}, {TargetRPS: 500, P95Ms: 9.5, Reported: true}}},
		{Dir: "tokex-evidence/20261130-120000.001-quick", ID: "20261130-120000.001-quick", Name: "quick", Status: "aborted",
			Started: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Runs: 9, Done: 4,
			Stages: []evidence.ListedStage{{TargetRPS: 25, P95Ms: 15.76, Reported: true}, {TargetRPS: 50, P95Ms: 45.3, Reported: true}, {TargetRPS: 100, P95Ms: 0, Reported: false}}},
		{Dir: "tokex-evidence/20261129-090000.000-dex", ID: "20261129-090000.000-dex", Name: "dex\x1b]0;x\x07", Status: "done", Verdict: "failed",
			Started: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC), Runs: 3, Done: 3,
			Stages: []evidence.ListedStage{{TargetRPS: 50, P95Ms: 120, Reported: true}}},
	}
}

func TestPickerGoldens(t *testing.T) {
	for _, sz := range sizes {
		p := NewPicker("tokex-evidence", listings(), 1)
		p.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		v := p.View()
		if strings.Contains(v, "\x1b") || strings.Contains(v, "\x07") {
			t.Errorf("control sequences drawn: %q", v)
		}
		golden(t, fmt.Sprintf("picker-%dx%d", sz[0], sz[1]), v, sz[0], sz[1])
	}
}

func typeKeys(p *Picker, keys ...string) tea.Cmd {
	var last tea.Cmd
	for _, k := range keys {
		_, last = p.Update(keyMsg(k))
		if k != "enter" || p.Choice().Dir == "" {
			run(p, last, 4)
		}
	}
	return last
}

// run executes cmd as the program would (the list filters in a command) and
// feeds what it returns back, depth levels deep; timers are not waited for.
func run(p *Picker, cmd tea.Cmd, depth int) {
	if cmd == nil || depth == 0 {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		if batch, ok := msg.(tea.BatchMsg); ok {
			for _, c := range batch {
				run(p, c, depth-1)
			}
			return
		}
		if msg != nil {
			_, next := p.Update(msg)
			run(p, next, depth-1)
		}
	case <-time.After(100 * time.Millisecond): // a blink or a status timer
	}
}

// Enter replays the campaign under the cursor; o asks for its report; the
// filter narrows the list and Enter then picks from what it kept.
func TestPickerChooses(t *testing.T) {
	p := NewPicker("tokex-evidence", listings(), 0)
	p.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if cmd := typeKeys(p, "down", "enter"); cmd == nil || p.Choice() != (PickerChoice{Dir: "tokex-evidence/20261130-120000.001-quick"}) {
		t.Errorf("enter: %+v", p.Choice())
	}
	p = NewPicker("tokex-evidence", listings(), 0)
	p.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if typeKeys(p, "o"); p.Choice() != (PickerChoice{Dir: "tokex-evidence/20261130-154030.417-article", Report: true}) {
		t.Errorf("o: %+v", p.Choice())
	}
	p = NewPicker("tokex-evidence", listings(), 0)
	p.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	typeKeys(p, "/", "d", "e", "x")
	// "o" and "q" while typing a filter are text, not commands.
	if p.Choice().Dir != "" {
		t.Fatal("a key typed into the filter chose a campaign")
	}
	typeKeys(p, "enter") // accept the filter
	if v := p.View(); strings.Contains(v, "article") || !strings.Contains(v, "dex") {
		t.Errorf("filter kept:\n%s", v)
	}
	typeKeys(p, "enter")
	if p.Choice().Dir != "tokex-evidence/20261129-090000.000-dex" {
		t.Errorf("enter after filtering: %+v", p.Choice())
	}
	// Nothing to list: the list says so and enter picks nothing.
	p = NewPicker("empty", nil, 0)
	p.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	typeKeys(p, "enter")
	if p.Choice().Dir != "" || !strings.Contains(p.View(), "No campaigns") {
		t.Errorf("empty picker: %+v\n%s", p.Choice(), p.View())
	}
	p.Update(tea.WindowSizeMsg{Width: 60, Height: 20})
	if !strings.Contains(p.View(), "at least 80×24") {
		t.Error("picker below 80×24")
	}
}
