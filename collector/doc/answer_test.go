package doc

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/exchange"
)

// busyRun is a counted run computed by collector/stats from rows and host
// samples: the machine's CPUs busy at busy cores each second, tokex's
// generator and engine using little of it, and (lagMs > 0) every request
// sent lagMs late. Its warnings are the ones stats writes, word for word.
func busyRun(t *testing.T, id string, round int, rate, busy, lagMs float64, th ...stats.Thresholds) *stats.Run {
	t.Helper()
	start := time.Unix(1_800_000_000, 0)
	var rows []stats.Request
	n := int(rate * 10)
	for k := range n {
		at := start.Add(time.Duration(k) * time.Second / time.Duration(rate))
		rows = append(rows, stats.Request{Seq: int64(k), Phase: stats.Measured, ScheduledUS: at.UnixMicro(), SendLagUS: int64(lagMs * 1000),
			DurationUS: 3000, Outcome: exchange.OutcomeOK})
	}
	var res []sample.Resource
	var host []sample.Host
	for sec := 1; sec <= 10; sec++ {
		at := start.Add(time.Duration(sec) * time.Second).UnixMicro()
		res = append(res, sample.Resource{AtUS: at, Kind: "generator", Name: "tokex", CPUMillicores: 50},
			sample.Resource{AtUS: at, Kind: "engine", Name: "engine", CPUMillicores: 20 + rate, Source: "proc"})
		host = append(host, sample.Host{AtUS: at, HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: busy, Runnable: 3}})
	}
	limits := stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}
	if len(th) > 0 {
		limits = th[0]
	}
	return stats.ComputeRun(stats.RunMeta{ID: id, Round: round, TargetRPS: rate, Status: stats.StatusDone, Started: start, MeasuredStart: start,
		MeasuredEnd: start.Add(10 * time.Second)}, rows, res, limits, host...)
}

// TestVerdictSaysWhy: the answer is one sentence that says why, in words,
// for every way a campaign ends. On main the report had a tile saying
// "FAILED" and fifty warning lines under it.
func TestVerdictSaysWhy(t *testing.T) {
	t.Parallel()
	th := stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}
	allowed := stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99, AllowWarnings: []stats.WarningCode{stats.WarnHostSaturated}}
	build := func(th stats.Thresholds, runs ...*stats.Run) *summary.Summary {
		s := &summary.Summary{Status: summary.CampaignDone, Thresholds: th}
		summary.BuildSummary(s, runs, true)
		return s
	}
	// At 100/s tokex's generator uses 0.05 cores and the engine 0.12: the
	// others used what is left of the busy cores.
	var busy []*stats.Run
	for i, others := range []float64{1.66, 1.7, 1.75, 1.79, 1.68, 1.72, 1.77, 1.7} {
		busy = append(busy, busyRun(t, fmt.Sprintf("%02d-r%d-100rps", i+1, i+1), i+1, 100, 0.17+others, 0))
	}
	quiet := busyRun(t, "09-r9-100rps", 9, 100, 0.3, 0)
	late := busyRun(t, "01-r1-100rps", 1, 100, 0.3, 40)
	slow := busyRun(t, "01-r1-100rps", 1, 100, 0.3, 0)
	slow.ThresholdsPassed, slow.Thresholds = false, []stats.ThresholdResult{{Name: "p95_ms <", Limit: 2, Actual: 3, Passed: false}}
	allowedBusy := busyRun(t, "01-r1-100rps", 1, 100, 1.95, 0, allowed)
	search := build(th, quiet)
	search.Capacity = &curve.Result{Status: curve.StatusFound, Capacity: 400, Upper: 450, Objective: curve.Objective{P95Ms: 500, P99Ms: 12, SuccessRatio: 0.99}}
	cases := []struct {
		name string
		s    *summary.Summary
		page Page
		want string
	}{
		{"busy machine", build(th, append(busy, quiet)...), Page{},
			"FAILED — the figures are this machine's, not the server's: other processes used 1.7–1.8 of 2 cores in 8 of 9 runs"},
		{"passed", build(th, quiet), Page{}, "PASSED — p95 3.0 ms at 100/s, 1.20 CPU-ms per exchange"},
		{"passed, the machine's share allowed", build(allowed, allowedBusy, quiet), Page{},
			"PASSED — p95 3.0 ms at 100/s, 1.20 CPU-ms per exchange; allowed, so the figures are partly the machine's or the generator's: host_saturated (1 of 2 runs)"},
		{"the generator late", build(th, late), Page{},
			"FAILED — the figures are the load generator's, not the server's: it fell behind its schedule in 1 of 1 runs (send lag p99 up to 40.0 ms)"},
		{"a threshold missed", build(stats.Thresholds{P95Ms: 2, SuccessRatio: 0.99}, slow), Page{}, "FAILED — p95 3.0 ms at 100/s is not below 2 ms (1 of 1 runs failed)"},
		{"interrupted", build(th, quiet, &stats.Run{ID: "10-r10-100rps", TargetRPS: 100, Round: 10, Status: stats.StatusAborted}),
			Page{Status: summary.CampaignAborted, Reason: "interrupted"}, "INTERRUPTED — the campaign was stopped (interrupted) after 1 of 2 runs; tokex run --resume continues it"},
		{"failed", build(th), Page{Status: summary.CampaignFailed, Reason: "target unreachable: no HTTP response for 10s"},
			"FAILED — the campaign stopped: target unreachable: no HTTP response for 10s"},
		{"no summary.json", build(stats.Thresholds{}, quiet), Page{Status: summary.CampaignRunning, Recomputed: true},
			"UNKNOWN — the campaign did not finish (no summary.json): the figures are recomputed from the rows, without thresholds"},
		{"a capacity search", search, Page{}, "PASSED — capacity ≥ 400/s, < 450/s (p95 < 500 ms, p99 < 12 ms, success ≥ 99%, dropped ≤ 0)"},
	}
	for _, c := range cases {
		page := c.page
		if page.Status == "" {
			page.Status = summary.CampaignDone
		}
		if got := CampaignVerdict(c.s, &page, Groups(c.s, &page)).String(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
		// The terminal, summary.md and the report open with it.
		d := Campaign(c.s, &page)
		var h bytes.Buffer
		if err := d.HTML(&h); err != nil {
			t.Fatal(err)
		}
		word, why, _ := strings.Cut(c.want, " — ")
		for medium, got := range map[string]string{"terminal": d.Text(), "summary.md": d.Markdown(), "report": h.String()} {
			first := map[string]string{"terminal": c.want + "\n", "summary.md": "# tokex campaign \n\n**" + word + "** — " + why + "\n",
				"report": "<strong>" + word + "</strong>"}[medium]
			if medium != "report" && !strings.HasPrefix(got, first) || medium == "report" && !strings.Contains(got[:min(len(got), 600)], first) {
				t.Errorf("%s: %s does not open with the verdict:\n%s", c.name, medium, got[:min(len(got), 600)])
			}
		}
	}
}

// TestWarningsGroupedByCode: a busy machine's nine runs, each with
// host_saturated and generator_late, and their stages failed: the terminal
// says each code once (where it hit, its worst figure, what it means, what
// to do) before the tables; summary.md says the same with every run's
// warning nested under its code; the report folds them into <details>.
func TestWarningsGroupedByCode(t *testing.T) {
	t.Parallel()
	// The others used busy − 0.05 (generator) − 0.02 − rate/1000 (engine)
	// cores: at most 1.875 − 0.17 = 1.705 (at 100/s).
	var runs []*stats.Run
	for i := range 9 {
		rate := []float64{100, 200, 500}[i%3]
		runs = append(runs, busyRun(t, fmt.Sprintf("%02d-r%d-%.0frps", i+1, i/3+1, rate), i/3+1, rate, 1.8+float64(i%4)/40, 20))
	}
	s := &summary.Summary{Status: summary.CampaignDone, Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}}
	summary.BuildSummary(s, runs, true)
	if len(s.Warnings) < 20 {
		t.Fatalf("%d warnings: the runs were meant to be busy", len(s.Warnings))
	}
	d := Campaign(s, &Page{Report: "/tmp/x/report.html"})
	text := d.Text()
	before, _, ok := strings.Cut(text, "Latency by stage")
	if !ok {
		t.Fatalf("no latency table:\n%s", text)
	}
	want := []string{
		"  - host_saturated in 9 of 9 runs, other processes up to 1.71 of 2 cores: latency and CPU per exchange include waiting for this machine → ",
		"  - generator_late in 9 of 9 runs, send lag p99 up to 20.0 ms: latency includes tokex's own delay in sending → ",
		"  - stage_has_failed_run in 3 of 3 stages: those stages did not pass → ",
	}
	var items []string
	for _, l := range strings.Split(before, "\n") {
		if strings.HasPrefix(l, "  - ") {
			items = append(items, l)
		}
	}
	if len(items) != len(want) {
		t.Fatalf("%d warning lines before the tables, want one per code (%d):\n%s", len(items), len(want), before)
	}
	for i, w := range want {
		if !strings.HasPrefix(items[i], w) {
			t.Errorf("line %d:\n got %s\nwant %s…", i, items[i], w)
		}
	}
	for _, l := range []string{"FAILED — the figures are this machine's", "100/s: p95 3.0 ms", "report: /tmp/x/report.html",
		"Warnings — every run's details in summary.md:"} {
		if !strings.Contains(before, l) {
			t.Errorf("the answer lacks %q:\n%s", l, before)
		}
	}
	md := d.Markdown()
	mdWarn := md[strings.Index(md, "## Warnings"):]
	if n := strings.Count(mdWarn, "\n  - 0"); n != 2*9+0 {
		t.Errorf("summary.md nests %d run warnings, want 18:\n%s", n, mdWarn)
	}
	if !strings.Contains(mdWarn, "- **host_saturated** in 9 of 9 runs") || !strings.Contains(mdWarn, "\n  - 03-r1-500rps: host saturated in 10 of 10 measured seconds") {
		t.Errorf("summary.md's warnings:\n%s", mdWarn)
	}
	var h bytes.Buffer
	if err := d.HTML(&h); err != nil {
		t.Fatal(err)
	}
	page := h.String()
	if n := strings.Count(page, "<details><summary>9 details</summary>"); n != 2 {
		t.Errorf("%d folded lists of nine runs, want 2:\n%s", n, page)
	}
	// The verdict and the latency table come before the warnings.
	if v, l, w := strings.Index(page, `id="verdict"`), strings.Index(page, `id="latency"`), strings.Index(page, `id="warnings"`); v < 0 || !(v < l && l < w) {
		t.Errorf("verdict at %d, latency at %d, warnings at %d", v, l, w)
	}
}

// The host_saturated and generator_late figures come from the details
// collector/stats writes; a detail that does not carry them (older
// evidence, a hand-written summary) gives a group without a worst figure,
// never a wrong one.
func TestWorstFigureOnlyWhenSaid(t *testing.T) {
	t.Parallel()
	s := &summary.Summary{Status: summary.CampaignDone, Stages: []*summary.Stage{{TargetRPS: 10, Runs: []*stats.Run{{ID: "a"}, {ID: "b"}}}}}
	for _, c := range []struct {
		w    stats.Warning
		want string
	}{
		{stats.Warn(stats.WarnHostSaturated, "a", "host saturated (CPU ≥ 90% busy in 3 s)"), ""},
		{stats.Warn(stats.WarnHostSaturated, "a", "…up to 5 runnable threads on 2 CPUs; processes other than the generator and the engine used 1.25 cores on average)…"),
			"other processes up to 1.25 of 2 cores"},
		{stats.Warn(stats.WarnGeneratorLate, "b", "k6 start lag p99 (minting excluded) 31.5 ms exceeds 5.0 ms (…)"), "k6 start lag p99 (minting excluded) up to 31.5 ms"},
		{stats.Warn(stats.WarnGeneratorLate, "b", "lag 31.5ms exceeds"), ""},
		{stats.Warn(stats.WarnDropped, "b", "1234 arrivals dropped: the in-flight cap was full"), "up to 1,234 arrivals in a run"},
		{stats.Warn(stats.WarnDropped, "b", "many arrivals dropped"), ""},
	} {
		s.Warnings = []stats.Warning{c.w}
		if g := Groups(s, &Page{Status: summary.CampaignDone}); len(g) != 1 || g[0].Worst != c.want {
			t.Errorf("%q: worst %q, want %q", c.w.Detail, g[0].Worst, c.want)
		}
	}
}
