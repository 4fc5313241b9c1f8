package report

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// writeDenseRun writes one finished run of 45 minutes (a request a
// second) whose resources.csv and host.csv hold samples samples each: the
// engine at 100-200 millicores and 1 GiB with one spike to 50,000
// millicores and one dip to 0 bytes, the host with one sample of 999
// runnable threads.
func writeDenseRun(t *testing.T, samples int) string {
	dir := filepath.Join(t.TempDir(), "dense")
	w, err := evidence.Create(dir, nil, evidence.Manifest{CampaignID: "dense", Started: time.Unix(1_800_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	p := event.PlannedRun{ID: "01-r1-1rps", Round: 1, TargetRPS: 1, Duration: 45 * time.Minute, Agents: 1}
	_ = w.SetPlan([]event.PlannedRun{p})
	start := time.Unix(1_800_000_000, 0)
	rec := evidence.NewRecorder(w, nil)
	run, err := rec.Begin(p, start)
	if err != nil {
		t.Fatal(err)
	}
	for i := range int(p.Duration.Seconds()) {
		run.Record(&stats.Request{Seq: int64(i), Phase: stats.Measured, ScheduledUS: start.Add(time.Duration(i) * time.Second).UnixMicro(),
			DurationUS: 1000 + int64(i%7)*100, Status: 200, Outcome: "ok"})
	}
	st, err := run.End(start.Add(p.Duration), stats.RunMeta{ID: p.ID, Round: 1, TargetRPS: 1, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(p.Duration),
		Status: stats.StatusDone}, stats.Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	s := &summary.Summary{CampaignID: "dense", Status: "done"}
	summary.BuildSummary(s, []*stats.Run{st}, true)
	if err := rec.Finish(s); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, evidence.RunsDir, p.ID)
	step := p.Duration.Microseconds() / int64(samples)
	writeLines(t, filepath.Join(runDir, evidence.ResourcesFile), evidence.ResourcesHeader, samples, func(buf []byte, k int) []byte {
		smp := sample.Resource{AtUS: start.UnixMicro() + int64(k)*step, Kind: "engine", Name: "e1", CPUMillicores: float64(100 + k%101), MemoryBytes: 1 << 30, Source: "proc"}
		switch k {
		case samples / 3:
			smp.CPUMillicores = 50_000
		case samples * 2 / 3:
			smp.MemoryBytes = 0
		}
		return evidence.AppendResource(buf, &smp)
	})
	writeLines(t, filepath.Join(runDir, evidence.HostFile), evidence.HostHeader, samples, func(buf []byte, k int) []byte {
		h := sample.Host{AtUS: start.UnixMicro() + int64(k)*step, HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: 1, Runnable: 1 + k%3,
			MemTotalBytes: 8 << 30, MemAvailableBytes: 4 << 30, GeneratorLimitCores: 2}}
		if k == samples/2 {
			h.Runnable = 999
		}
		return evidence.AppendHost(buf, &h)
	})
	return dir
}

func writeLines(t *testing.T, file, header string, n int, line func([]byte, int) []byte) {
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	bw.WriteString(header + "\n")
	var buf []byte
	for k := range n {
		buf = line(buf[:0], k)
		bw.Write(buf)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// chart is one chart of the page: its title, its highest Y tick, and the
// points of each of its lines and of each of its areas.
type chart struct {
	title        string
	ytop         float64
	lines, areas [][]string
}

func chartsOf(t *testing.T, page []byte) []chart {
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var svgs []*html.Node
	find(doc, func(n *html.Node) bool { return n.Data == "svg" }, &svgs)
	var out []chart
	for _, s := range svgs {
		c := chart{title: attr(s, "aria-label")}
		var ns []*html.Node
		find(s, func(n *html.Node) bool {
			return attr(n, "class") == "tick" && attr(n, "text-anchor") == "end" || n.Data == "polyline" || n.Data == "polygon"
		}, &ns)
		for _, n := range ns {
			if n.Data == "text" {
				v, _ := strconv.ParseFloat(text(n), 64)
				c.ytop = max(c.ytop, v)
				continue
			}
			if n.Data == "polygon" {
				c.areas = append(c.areas, strings.Fields(attr(n, "points")))
				continue
			}
			c.lines = append(c.lines, strings.Fields(attr(n, "points")))
		}
		out = append(out, c)
	}
	return out
}

// TestReportDecimatesDenseRuns is issue 25 item 2: the report drew every
// sample (one run of a million resource and host samples: 872 MB and a
// 127 MB page). Each line now holds at most two points per bucket of a
// fixed grid (1,024 buckets), so the page is bounded per run, and each
// bucket's min and max are kept: a one-sample spike or dip still shows.
func TestReportDecimatesDenseRuns(t *testing.T) {
	const samples = 100_000
	b, err := Build(writeDenseRun(t, samples))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 1<<20 {
		t.Errorf("the page of one run is %d bytes", len(b))
	}
	seen := map[string]chart{}
	for _, c := range chartsOf(t, b) {
		seen[c.title] = c
		for i, l := range c.lines {
			if len(l) > 2*1024 {
				t.Errorf("%s: line %d has %d points", c.title, i, len(l))
			}
		}
		for i, a := range c.areas { // an area is its top and its bottom
			if len(a) > 2*2*1024 {
				t.Errorf("%s: area %d has %d points", c.title, i, len(a))
			}
		}
	}
	for title, top := range map[string]float64{
		"Engine CPU (stacked per engine)":              50_000,
		"Host CPU (the machine running the generator)": 999,
	} {
		if c, ok := seen[title]; !ok || c.ytop < top {
			t.Errorf("%s: the axis tops at %v, the spike is at %v (charts: %v)", title, c.ytop, top, len(seen))
		}
	}
	mem, ok := seen["Engine memory"]
	dip := false
	for _, l := range mem.lines {
		for _, p := range l {
			dip = dip || strings.HasSuffix(p, ",146.0") // the plot's bottom: 0 MiB
		}
	}
	if !ok || !dip {
		t.Error("the engine memory's one-sample dip to 0 is not drawn")
	}
}
