package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// The results: a hint until a run finishes, then a row per stage; once
// the campaign ended the verdict, and the runs whose figures are not the
// server's alone. As many lines as that: the chart layout sizes the
// bottom by them.
func TestResultsPanel(t *testing.T) {
	all := script(0)
	if lines := newResultsPanel(fed(all[:3])).lines(); len(lines) != 2 || lines[1] != "the table fills in as runs finish" {
		t.Errorf("before any run: %q", lines)
	}
	mid := newResultsPanel(fed(midRun(all)))
	mid.SetSize(120, 10)
	if lines := mid.lines(); len(lines) != 3 || !strings.HasPrefix(lines[2], "100/s") || strings.Contains(strings.Join(lines, " "), "thresholds") {
		t.Errorf("mid-run: %q", lines)
	}
	end := newResultsPanel(fed(all))
	lines := sized(t, end, 120, 10)
	if n := len(end.lines()); n != 7 {
		t.Errorf("final: %d lines", n)
	}
	for _, want := range []string{"500/s", "thresholds FAILED · 6,800 exchanges · 100.00% success · 12 dropped", "⚠ host_saturated in 1 run: not the server's figures alone"} {
		if row(lines, want) == "" {
			t.Errorf("final lacks %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	search := searchScript()
	if lines := sized(t, newResultsPanel(fed(search)), 120, 14); row(lines, "a probe per rate") == "" || row(lines, "capacity ≥ 338/s, < 350/s · 8,252 exchanges") == "" {
		t.Errorf("search:\n%s", strings.Join(lines, "\n"))
	}
	// One panel through the campaign: drawn again as runs finish, and at
	// the end.
	com := fed(midRun(all))
	p := newResultsPanel(com)
	p.SetSize(120, 10)
	before := len(p.lines())
	for _, e := range all[len(midRun(all)):] {
		com.camp.apply(e, nil)
	}
	if n := len(p.lines()); before != 3 || n != 7 {
		t.Errorf("%d lines mid-run, %d at the end", before, n)
	}
	var none []event.Event
	for _, e := range all {
		if _, ok := e.(event.CampaignFinished); !ok {
			none = append(none, e)
		}
	}
	if row(newResultsPanel(fed(none)).lines(), "thresholds") != "" {
		t.Error("a verdict before the campaign ended")
	}
}

// The results panel under a workload of chains and a baseline (issue 30):
// the exchange premium in a line, then each hop's p95, token size and CPU.
func TestResultsPanelShowsHopsAndPremium(t *testing.T) {
	var runs []*stats.Run
	var plan []event.PlannedRun
	for rd := 1; rd <= 2; rd++ {
		for i, v := range []struct {
			chain    int
			step, cc bool
			cpu      float64
		}{{2, false, false, 1.5 + 0.1*float64(rd)}, {1, true, false, 1.2 + 0.1*float64(rd)}, {0, false, true, 0.8}} {
			id := fmt.Sprintf("%02d-r%d-100rps-%d", len(plan)+1, rd, i)
			p := event.PlannedRun{ID: id, Index: len(plan) + 1, Round: rd, TargetRPS: 100, Duration: time.Second, Agents: 1, Chain: v.chain, Step: v.step}
			r := &stats.Run{ID: id, Round: rd, TargetRPS: 100, Status: stats.StatusDone, Chain: v.chain, Step: v.step,
				Requests: 100, OK: 100, SuccessRatio: 1, ThresholdsPassed: true, MeasuredSeconds: 1, LatencyMs: stats.Latency{Count: 100, P95: 3},
				EngineCPU: &stats.CPU{CPUMsPerExchange: v.cpu, Exchanges: 100}}
			if v.cc {
				p.Grant, r.Grant = "client_credentials", "client_credentials"
			}
			plan = append(plan, p)
			for k := 1; k <= v.chain; k++ {
				r.Hops = append(r.Hops, stats.HopStats{Hop: k, Requests: 50, OK: 50, SuccessRatio: 1, LatencyMs: stats.Latency{P95: 2 + float64(k)},
					TokenBytes: stats.Sizes{Count: 50, Avg: 700 + 60*float64(k), Max: 700 + 60*int64(k)}})
			}
			runs = append(runs, r)
		}
	}
	sum := &summary.Summary{CampaignID: "c", Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}}
	summary.BuildSummary(sum, runs, true)
	evs := []event.Event{event.CampaignStarted{At: t0, ID: "c", Runs: plan, Thresholds: sum.Thresholds}}
	for _, r := range runs {
		evs = append(evs, event.RunFinished{At: t0, RunID: r.ID, Status: r.Status, Stats: r})
	}
	evs = append(evs, event.CampaignFinished{At: t0, Status: summary.CampaignDone, Summary: sum})
	lines := sized(t, newResultsPanel(fed(evs)), 160, 16)
	for _, want := range []string{"Premium over every stage: an exchange costs", "CPU-ms (95 % CI)", "820", "+60", "p95 at 100/s"} {
		if row(lines, want) == "" {
			t.Errorf("lacks %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	// The chart: hop 2's bar (p95 4 ms) is the full width, hop 1's (3 ms) three quarters of it.
	h1, h2 := strings.TrimSpace(ansi.Strip(row(lines, "hop 1 █"))), strings.TrimSpace(ansi.Strip(row(lines, "hop 2 █")))
	b1, b2 := strings.Count(h1, "█"), strings.Count(h2, "█")
	if !strings.HasSuffix(h1, " 3 ms") || !strings.HasSuffix(h2, " 4 ms") || b2 != 160-32 || b1 != 96 {
		t.Errorf("p95 bars %q (%d) and %q (%d)", h1, b1, h2, b2)
	}
}
