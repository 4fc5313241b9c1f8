package report

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
)

// writeCampaign writes a small finished campaign: sanity plus two stages,
// the 200/s run with dropped arrivals.
func writeCampaign(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "c")
	// Allowed warnings are reported all the same; they do not fail a run.
	th := stats.Thresholds{P95Ms: 50, SuccessRatio: 0.99, AllowWarnings: []stats.WarningCode{stats.WarnGeneratorLate, stats.WarnHostSaturated}}
	w, err := evidence.Create(dir, []byte("name: t\n"), evidence.Manifest{CampaignID: "c", Name: "t", Started: time.Unix(1_800_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	plan := []event.PlannedRun{
		{ID: "00-sanity", Sanity: true, TargetRPS: 100, Duration: 2 * time.Second, Agents: 2},
		{ID: "01-r1-100rps", Index: 1, Round: 1, TargetRPS: 100, Warmup: time.Second, Duration: 4 * time.Second, Agents: 2},
		{ID: "02-r1-200rps", Index: 2, Round: 1, TargetRPS: 200, Warmup: time.Second, Duration: 4 * time.Second, Agents: 2},
	}
	_ = w.SetPlan(plan)
	rec := evidence.NewRecorder(w, nil)
	start := time.Unix(1_800_000_000, 0)
	var runs []*stats.Run
	for _, p := range plan {
		run, err := rec.Begin(p, start)
		if err != nil {
			t.Fatal(err)
		}
		n := int(p.TargetRPS * p.Total().Seconds())
		for k := 0; k < n; k++ {
			at := start.Add(time.Duration(float64(k) / p.TargetRPS * float64(time.Second)))
			r := stats.Request{Agent: k % 2, Seq: int64(k / 2), Phase: stats.Measured, ScheduledUS: at.UnixMicro(), SendLagUS: 50, DurationUS: int64(2000 + k%7*300), Status: 200, Outcome: "ok"}
			if at.Sub(start) < p.Warmup {
				r.Phase = stats.Warmup
			}
			if p.TargetRPS == 100 && !p.Sanity && k%20 == 0 {
				r.SendLagUS = 8000 // p99 8 ms: late for a 2–4 ms server (the old fixed 10 ms check said nothing)
			}
			if p.TargetRPS == 200 && k%50 == 0 {
				r.Outcome, r.Status, r.SendLagUS, r.DurationUS = "dropped", 0, 0, 0
			}
			run.Record(&r)
		}
		for s := 0; s <= int(p.Total().Seconds())+1; s++ {
			at := start.Add(time.Duration(s)*time.Second + 200*time.Millisecond)
			for _, e := range []string{"pf-engine-0", "pf-engine-1"} {
				w.Consume(event.Resource{At: at, Role: "engine", Name: e, CPUMillicores: p.TargetRPS * 2, MemoryBytes: 1 << 30})
			}
			w.Consume(event.Resource{At: at, Role: "generator", Name: "gen", CPUMillicores: 50})
			wait := 0.01
			h := sample.HostMetrics{CPUs: 2, BusyCores: 0.9, Runnable: 1, MemTotalBytes: 8 << 30, MemAvailableBytes: 5 << 30,
				PSI: &sample.Pressure{CPUSome: 0.1}, GeneratorLimitCores: 2, GeneratorWaitCores: &wait}
			if p.TargetRPS == 200 {
				h.BusyCores, h.Runnable = 2, 6 // saturated by something else
			}
			w.Consume(event.Host{At: at, HostMetrics: h})
		}
		st, err := run.End(start.Add(p.Total()), stats.RunMeta{ID: p.ID, Index: p.Index, Round: p.Round, Sanity: p.Sanity, TargetRPS: p.TargetRPS, Agents: 2,
			Started: start, MeasuredStart: start.Add(p.Warmup), MeasuredEnd: start.Add(p.Total()), Status: stats.StatusDone}, th)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, st)
		start = start.Add(p.Total() + 5*time.Second)
	}
	s := &summary.Summary{CampaignID: "c", Name: "t", Status: "done", Started: time.Unix(1_800_000_000, 0), Finished: start, Thresholds: th}
	summary.BuildSummary(s, runs, true)
	if err := rec.Finish(s); err != nil {
		t.Fatal(err)
	}
	return dir
}

func find(n *html.Node, match func(*html.Node) bool, out *[]*html.Node) {
	if match(n) {
		*out = append(*out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		find(c, match, out)
	}
}

func attr(n *html.Node, k string) string {
	for _, a := range n.Attr {
		if a.Key == k {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.TrimSpace(b.String())
}

func TestReportStructureMatchesSummary(t *testing.T) {
	dir := writeCampaign(t)
	b, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, forbidden := range []string{"<script src", "<link ", "@import", `src="http`, `href="http`, "url("} {
		if bytes.Contains(b, []byte(forbidden)) {
			t.Errorf("the report loads external resources (%s)", forbidden)
		}
	}
	tree, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var sum summary.Summary
	raw, _ := os.ReadFile(filepath.Join(dir, evidence.SummaryJSON))
	_ = json.Unmarshal(raw, &sum)

	byID := func(id string) *html.Node {
		var ns []*html.Node
		find(tree, func(n *html.Node) bool { return n.Type == html.ElementNode && attr(n, "id") == id }, &ns)
		if len(ns) != 1 {
			t.Fatalf("#%s: %d elements", id, len(ns))
		}
		return ns[0]
	}
	rows := func(table *html.Node) [][]string {
		var trs []*html.Node
		find(table, func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == "tr" }, &trs)
		var out [][]string
		for _, tr := range trs[1:] {
			var tds []*html.Node
			find(tr, func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == "td" }, &tds)
			var cells []string
			for _, td := range tds {
				cells = append(cells, text(td))
			}
			out = append(out, cells)
		}
		return out
	}
	lat := rows(byID("latency"))
	if len(lat) != len(sum.Stages) {
		t.Fatalf("latency table has %d rows for %d stages", len(lat), len(sum.Stages))
	}
	for i, st := range sum.Stages {
		want := doc.LatencyTable(&sum).Rows[i].Cells
		if strings.Join(lat[i], "|") != strings.Join(want, "|") {
			t.Errorf("latency row %d = %v, summary.json gives %v", i, lat[i], want)
		}
		if rep := st.Reported(); rep == nil || !strings.Contains(text(byID("run-"+rep.ID)), "reported run") {
			t.Errorf("stage %v: reported run not marked", st.TargetRPS)
		}
	}
	res := rows(byID("resources"))
	if len(res) != 2 || res[1][3] != doc.ResourceTable(&sum).Rows[1].Cells[3] {
		t.Errorf("resource table %v", res)
	}
	// Charts: throughput, latency, engine CPU, memory, generator, host CPU
	// and host pressure for every run, and the cost curve of the campaign
	// (latency and engine cores against rate).
	var svgs []*html.Node
	find(tree, func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == "svg" }, &svgs)
	if len(svgs) != 3*7+2 {
		t.Errorf("%d charts, want 23", len(svgs))
	}
	if cost := text(byID("cost")); !strings.Contains(cost, sum.Cost.Fit.Line()) {
		t.Errorf("cost section %q lacks the fit %q", cost, sum.Cost.Fit.Line())
	}
	if run := text(byID("run-02-r1-200rps")); !strings.Contains(run, "Host CPU") || !strings.Contains(run, "runnable threads") ||
		!strings.Contains(run, "waiting for a CPU") || !strings.Contains(run, "⚠ host_saturated") {
		t.Errorf("run section lacks the host: %s", run)
	}
	var areas []*html.Node
	find(byID("run-01-r1-100rps"), func(n *html.Node) bool { return n.Data == "polygon" }, &areas)
	if len(areas) != 2 {
		t.Errorf("engine CPU is not stacked per engine: %d areas", len(areas))
	}
	// The warnings, one item per code (where it hit, its worst figure),
	// each run's in full folded under it.
	w := text(byID("warnings"))
	if !strings.Contains(w, "dropped_arrivals in 1 of 2 runs, up to 16 arrivals in a run") || !strings.Contains(w, "02-r1-200rps: 16 arrivals dropped") {
		t.Errorf("warnings: %s", w)
	}
	// The report says what stats.json says, by code, not checks of its own.
	for _, want := range []string{"01-r1-100rps: send lag p99 8.0 ms exceeds 5.0 ms", "generator_late in 1 of 2 runs, send lag p99 up to 8.0 ms (allowed by the thresholds)",
		"02-r1-200rps: host saturated in 4 of 4 measured seconds", "host_saturated in 1 of 2 runs, other processes up to 1.15 of 2 cores"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q: %s", want, w)
		}
	}
	if strings.Contains(w, "sent late") || strings.Contains(w, "may have been starved") {
		t.Errorf("ad-hoc checks are back: %s", w)
	}
	tiles := text(byID("tiles"))
	if v := text(byID("verdict")); v != "FAILED — 16 arrivals dropped at 200/s (at most 0 allowed) (1 of 2 runs failed)" {
		t.Errorf("verdict: %s", v)
	}
	if !strings.Contains(tiles, units.Thousands(sum.Totals.Exchanges)) {
		t.Errorf("tiles: %s", tiles)
	}
	// The failed stage says so in its tile (with success next to p95), the
	// spread table, the tables and the warnings.
	if !strings.Contains(tiles, "p95 at 200/s (✗ 1/1 failed)") || !strings.Contains(tiles, "ms · 100.00% ok") {
		t.Errorf("tiles do not flag the failed stage: %s", tiles)
	}
	if sp := rows(byID("spread")); len(sp) != 2 || sp[1][3] != "✗ 1/1 failed" || !strings.HasSuffix(sp[1][1], "✗") || sp[0][3] != "✓ 1/1 passed" {
		t.Errorf("spread table %v", sp)
	}
	if l := lat[1]; l[len(l)-1] != "✗ 1/1 failed" {
		t.Errorf("latency row %v", l)
	}
	if !strings.Contains(w, "stage_has_failed_run in 1 of 2 stages") || !strings.Contains(w, "200/s: 1 of 1 run failed: 02-r1-200rps (dropped <= 0 (was 16))") {
		t.Errorf("warnings lack the failed stage: %s", w)
	}
}

func TestReportOfUnfinishedCampaign(t *testing.T) {
	dir := writeCampaign(t)
	_ = os.Remove(filepath.Join(dir, evidence.SummaryJSON))
	b, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("no summary.json")) {
		t.Error("an unfinished campaign is not flagged")
	}
	if _, err := Build(t.TempDir()); err == nil {
		t.Error("built a report of a folder that is not evidence")
	}
}

// The throughput chart's "achieved" counts responses, and responses after
// the measured end count in the run's last second, not in a stray one.
func TestPerSecondAchieved(t *testing.T) {
	start := time.Unix(1_800_000_000, 0).UnixMicro()
	var rows []stats.Request
	for k := 0; k < 20; k++ {
		r := stats.Request{Phase: stats.Measured, ScheduledUS: start + int64(k)*100_000, DurationUS: 5000, Outcome: "ok"}
		if k%2 == 1 {
			r.Outcome = "conn_error"
		}
		if k == 19 {
			r.DurationUS = 300_000 // answered after the end
		}
		rows = append(rows, r)
	}
	ser := newSeries(start, start+2_000_000)
	for i := range rows {
		ser.add(&rows[i])
	}
	secs := ser.seconds()
	if len(secs) != 2 || secs[0].answered != 5 || secs[1].answered != 5 || secs[1].completed != 10 {
		for _, s := range secs {
			t.Logf("%+v", *s)
		}
		t.Fatalf("%d seconds", len(secs))
	}
}

// Each run's section lists its most common errors with what the server
// said, escaped like every other text.
func TestReportListsTopErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	w, err := evidence.Create(dir, []byte("name: t\n"), evidence.Manifest{CampaignID: "c", Name: "t", Started: time.Unix(1_800_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	p := event.PlannedRun{ID: "01-r1-10rps", Index: 1, Round: 1, TargetRPS: 10, Duration: 2 * time.Second, Agents: 1}
	_ = w.SetPlan([]event.PlannedRun{p})
	start := time.Unix(1_800_000_000, 0)
	rec := evidence.NewRecorder(w, nil)
	run, err := rec.Begin(p, start)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 20; k++ {
		run.Record(&stats.Request{Seq: int64(k), Phase: stats.Measured, ScheduledUS: start.Add(time.Duration(k) * 100 * time.Millisecond).UnixMicro(),
			DurationUS: 900, Status: 401, Outcome: "oauth_error", Detail: "invalid_client"})
	}
	th := stats.Thresholds{P95Ms: 50, SuccessRatio: 0.99}
	st, err := run.End(start.Add(2*time.Second), stats.RunMeta{ID: p.ID, Index: 1, Round: 1, TargetRPS: 10, Agents: 1, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(2 * time.Second),
		Status: stats.StatusDone, ErrorDescriptions: []sample.ErrorDescription{{Error: "oauth_error:invalid_client", Text: "client <b>authentication</b> failed", Count: 20}}}, th)
	if err != nil {
		t.Fatal(err)
	}
	s := &summary.Summary{CampaignID: "c", Status: "done", Thresholds: th}
	summary.BuildSummary(s, []*stats.Run{st}, true)
	if err := rec.Finish(s); err != nil {
		t.Fatal(err)
	}
	b, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := html.Parse(bytes.NewReader(b))
	var tables []*html.Node
	find(doc, func(n *html.Node) bool { return n.Data == "table" && attr(n, "class") == "errors" }, &tables)
	if len(tables) != 1 || !strings.Contains(text(tables[0]), "oauth_error:invalid_client20client <b>authentication</b> failed (20)") {
		t.Fatalf("errors table: %d %q", len(tables), func() string {
			if len(tables) > 0 {
				return text(tables[0])
			}
			return ""
		}())
	}
}

// editJSON rewrites one JSON file of the folder.
func editJSON(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ = json.Marshal(m)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReportOfAHostileFolder: issue 9 items 9–11 and 15 as the report meets
// them. Every case ends in a clear error or a warning, never in a read
// outside the folder, an unbounded read or a silently partial chart.
func TestReportOfAHostileFolder(t *testing.T) {
	cases := []struct {
		name    string
		damage  func(t *testing.T, dir string)
		err     string // Build fails with this
		warning string // or the report warns with this
	}{
		{"run id leaves the folder (item 10)", func(t *testing.T, dir string) {
			outside := filepath.Join(filepath.Dir(dir), "elsewhere")
			_ = os.MkdirAll(outside, 0o755)
			_ = os.Rename(filepath.Join(dir, evidence.RunsDir, "01-r1-100rps"), filepath.Join(outside, "01-r1-100rps"))
			editJSON(t, filepath.Join(dir, evidence.SummaryJSON), func(m map[string]any) {
				m["stages"].([]any)[0].(map[string]any)["runs"].([]any)[0].(map[string]any)["id"] = "../../elsewhere/01-r1-100rps"
			})
		}, "not a valid campaign or run id", ""},
		{"requests file is a link out (item 9)", func(t *testing.T, dir string) {
			p := filepath.Join(dir, evidence.RunsDir, "01-r1-100rps", evidence.RequestsFile)
			outside := filepath.Join(filepath.Dir(dir), "outside.csv.gz")
			_ = os.Rename(p, outside)
			_ = os.Symlink(outside, p)
		}, "", "refused: a symbolic link"},
		{"runs folder is a link out (item 9)", func(t *testing.T, dir string) {
			outside := filepath.Join(filepath.Dir(dir), "outside-runs")
			_ = os.Rename(filepath.Join(dir, evidence.RunsDir), outside)
			_ = os.Symlink(outside, filepath.Join(dir, evidence.RunsDir))
		}, "", "refused: a symbolic link"},
		{"200,000 runs in summary.json (item 11)", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, evidence.SummaryJSON), func(m map[string]any) {
				st := m["stages"].([]any)[0].(map[string]any)
				many := make([]any, 200_000) // 11 MB, as in the issue
				for i := range many {
					many[i] = map[string]any{"id": fmt.Sprintf("%06d-r%d", i, i), "status": "done", "requests": i}
				}
				st["runs"] = many
			})
		}, "refused: more than 1000 runs", ""},
		{"truncated requests (item 15)", func(t *testing.T, dir string) {
			p := filepath.Join(dir, evidence.RunsDir, "02-r1-200rps", evidence.RequestsFile)
			b, _ := os.ReadFile(p)
			_ = os.WriteFile(p, b[:len(b)*2/3], 0o644)
		}, "", "02-r1-200rps: requests.csv.gz is truncated after"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeCampaign(t)
			c.damage(t, dir)
			b, err := Build(dir)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			doc, _ := html.Parse(bytes.NewReader(b))
			var ns []*html.Node
			find(doc, func(n *html.Node) bool { return attr(n, "id") == "warnings" || attr(n, "class") == "warn" }, &ns)
			var all []string
			for _, n := range ns {
				all = append(all, text(n))
			}
			if !strings.Contains(strings.Join(all, "\n"), c.warning) {
				t.Errorf("the report does not say %q:\n%s", c.warning, strings.Join(all, "\n"))
			}
		})
	}
}

// FuzzBuild renders a folder whose summary.json and one run's requests
// (plain CSV, compressed here) are arbitrary: an error or a page, never a
// panic.
func FuzzBuild(f *testing.F) {
	f.Fuzz(func(t *testing.T, summary, requests []byte) {
		dir := writeSmallCampaign(t)
		_ = os.WriteFile(filepath.Join(dir, evidence.SummaryJSON), summary, 0o644)
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(requests)
		_ = zw.Close()
		_ = os.WriteFile(filepath.Join(dir, evidence.RunsDir, "01-r1-10rps", evidence.RequestsFile), buf.Bytes(), 0o644)
		_, _ = Build(dir)
	})
}

// writeSmallCampaign is one finished run of ten rows (fast, for fuzzing).
func writeSmallCampaign(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "c")
	w, err := evidence.Create(dir, nil, evidence.Manifest{CampaignID: "c", Started: time.Unix(1_800_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	p := event.PlannedRun{ID: "01-r1-10rps", Round: 1, TargetRPS: 10, Duration: time.Second, Agents: 1}
	_ = w.SetPlan([]event.PlannedRun{p})
	start := time.Unix(1_800_000_000, 0)
	rec := evidence.NewRecorder(w, nil)
	run, err := rec.Begin(p, start)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		run.Record(&stats.Request{Seq: int64(i), Phase: stats.Measured, ScheduledUS: start.Add(time.Duration(i) * 100 * time.Millisecond).UnixMicro(), DurationUS: 1000, Status: 200, Outcome: "ok"})
	}
	st, err := run.End(start.Add(time.Second), stats.RunMeta{ID: p.ID, Round: 1, TargetRPS: 10, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(time.Second), Status: stats.StatusDone}, stats.Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	s := &summary.Summary{CampaignID: "c", Status: "done"}
	summary.BuildSummary(s, []*stats.Run{st}, true)
	if err := rec.Finish(s); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReportSaysWhatPrometheusWasAsked: a run measured by PromQL shows the
// queries exactly as sent, escaped, and the sampled figure beside it.
func TestReportSaysWhatPrometheusWasAsked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	w, err := evidence.Create(dir, []byte("name: t\n"), evidence.Manifest{CampaignID: "c", Name: "t", Started: time.Unix(1_800_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	p := event.PlannedRun{ID: "01-r1-10rps", Index: 1, Round: 1, TargetRPS: 10, Duration: 2 * time.Second, Agents: 1}
	_ = w.SetPlan([]event.PlannedRun{p})
	start := time.Unix(1_800_000_000, 0)
	rec := evidence.NewRecorder(w, nil)
	run, err := rec.Begin(p, start)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 20; k++ {
		run.Record(&stats.Request{Seq: int64(k), Phase: stats.Measured, ScheduledUS: start.Add(time.Duration(k) * 100 * time.Millisecond).UnixMicro(),
			DurationUS: 900, Status: 200, Outcome: "ok"})
	}
	q := `sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="perf",pod=~"engine-0<script>"}[2s]))`
	th := stats.Thresholds{P95Ms: 50, SuccessRatio: 0.99}
	st, err := run.End(start.Add(2*time.Second), stats.RunMeta{ID: p.ID, Index: 1, Round: 1, TargetRPS: 10, Agents: 1, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(2 * time.Second),
		Status: stats.StatusDone, PromQL: &sample.PromQL{Server: "http://prom:9090", Queries: []sample.PromQuery{{Name: "cpu", Query: q}},
			Members: []sample.PromMember{{Name: "engine-0", Cores: 0.5, Samples: 2}}}}, th)
	if err != nil {
		t.Fatal(err)
	}
	s := &summary.Summary{CampaignID: "c", Status: "done", Thresholds: th}
	summary.BuildSummary(s, []*stats.Run{st}, true)
	if err := rec.Finish(s); err != nil {
		t.Fatal(err)
	}
	b, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := html.Parse(bytes.NewReader(b))
	var got []*html.Node
	find(doc, func(n *html.Node) bool { return n.Data == "details" && attr(n, "id") == "promql-01-r1-10rps" }, &got)
	if len(got) != 1 || !strings.Contains(text(got[0]), "cpu: "+q) || !strings.Contains(text(got[0]), "promql 0.5 cores (engine-0) from http://prom:9090") {
		t.Fatalf("PromQL section: %d %q", len(got), func() string {
			if len(got) > 0 {
				return text(got[0])
			}
			return ""
		}())
	}
	if bytes.Contains(b, []byte("engine-0<script>")) {
		t.Error("the query reached the page unescaped")
	}
}
