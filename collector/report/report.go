package report

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sort"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/table"
	"github.com/tokex-dev/tokex/internal/safefs"
)

//go:embed report.html.tmpl
var pageTemplate string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"wave":  periodLine,
	"stage": stats.StageLabel,
}).Parse(pageTemplate))

// Tile is a headline figure.
type Tile struct {
	Label, Value, Class string
}

// RunView is one run's section.
type RunView struct {
	Run      *stats.Run
	Reported bool
	Flags    []string // invalidating warning codes of the run
	Charts   []template.HTML
	Agents   []agentRow
	Missing  string
}

// View is everything the page shows.
type View struct {
	S             *stats.Summary
	Manifest      *evidence.Manifest
	Tiles         []Tile
	Warnings      []string
	LatencyTable  table.Table
	ScheduleTable table.Table
	ResourceTable table.Table
	SpreadTable   table.Table
	Runs          []RunView
	Recomputed    bool
	// The cost curve: capacity, marginal cost, projection, the probes of a
	// capacity search, and the campaign-level charts.
	CostLines []string
	Probes    *table.Table
	Curve     []template.HTML
}

// Build renders the evidence folder dir as HTML.
func Build(dir string) ([]byte, error) {
	f, err := evidence.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v := &View{Manifest: f.Manifest}
	v.S, err = f.Summary()
	if errors.Is(err, fs.ErrNotExist) {
		if v.S, err = f.Recompute(stats.Thresholds{}); err != nil {
			return nil, err
		}
		v.Recomputed = true
		v.Warnings = append(v.Warnings, "no summary.json (the campaign did not finish): figures recomputed from the rows, thresholds unknown")
	}
	if err != nil {
		return nil, err
	}
	s := v.S
	v.LatencyTable, v.ScheduleTable, v.ResourceTable = s.LatencyTable(), s.ScheduleTable(), s.ResourceTable()
	v.SpreadTable = s.SpreadTable()
	v.tiles()
	v.costView()
	v.Warnings = append(v.Warnings, warnings(s, f.Manifest)...)
	reported := map[string]bool{}
	for _, st := range s.Stages {
		reported[st.ReportedRun] = true
	}
	var runs []*stats.Run
	if s.Sanity != nil {
		runs = append(runs, s.Sanity)
	}
	for _, st := range s.Stages {
		runs = append(runs, st.Runs...)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Index < runs[j].Index })
	for _, r := range runs {
		rv := RunView{Run: r, Reported: reported[r.ID]}
		for _, w := range r.Warnings {
			if w.Code.Invalidating() {
				rv.Flags = append(rv.Flags, string(w.Code))
			}
		}
		notes, err := rv.build(f)
		if err != nil {
			rv.Missing = err.Error()
		}
		v.Warnings = append(v.Warnings, notes...)
		v.Runs = append(v.Runs, rv)
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write renders dir's report into file (default dir/report.html). The file
// is replaced atomically; a link or special file in its place is refused,
// never written through.
func Write(dir, file string) (string, error) {
	if file == "" {
		file = filepath.Join(dir, "report.html")
	}
	b, err := Build(dir)
	if err != nil {
		return "", err
	}
	d, err := safefs.Open(filepath.Dir(file))
	if err != nil {
		return "", err
	}
	defer d.Close()
	return file, d.WriteFile(filepath.Base(file), b, nil)
}

func (v *View) tiles() {
	s := v.S
	verdict, class := "PASSED", "good"
	if !s.ThresholdsPassed {
		verdict, class = "FAILED", "bad"
	}
	if v.Recomputed {
		verdict, class = "unknown", "warn"
	}
	v.Tiles = append(v.Tiles,
		Tile{"thresholds", verdict, class},
		Tile{"exchanges (measured)", stats.Thousands(s.Totals.Exchanges), ""},
		Tile{"success", fmt.Sprintf("%.2f%%", s.Totals.SuccessRatio*100), okClass(s.Totals.SuccessRatio >= 0.99)},
		Tile{"dropped", stats.Thousands(s.Totals.Dropped), okClass(s.Totals.Dropped == 0)})
	if vf := s.Totals.Verified; vf != nil {
		v.Tiles = append(v.Tiles, Tile{fmt.Sprintf("tokens verified (%.4g %% at random)", vf.Sample*100),
			fmt.Sprintf("%s · %s failed", stats.Thousands(vf.Checked), stats.Thousands(vf.Failed)), okClass(vf.Failed == 0)})
	}
	for _, st := range s.Stages {
		if r := st.Reported(); r != nil {
			label, class := "p95 at "+stats.StageLabel(st.TargetRPS), ""
			if len(st.FailedRuns) > 0 {
				label, class = label+" ("+st.Verdict()+")", "bad"
			}
			p95 := "no exchange"
			if r.Requests > 0 {
				p95 = fmt.Sprintf("%.2f ms", r.LatencyMs.P95)
			}
			v.Tiles = append(v.Tiles, Tile{label, fmt.Sprintf("%s · %.2f%% ok", p95, r.SuccessRatio*100), class})
			if r.EngineCPU != nil {
				v.Tiles = append(v.Tiles, Tile{"CPU-ms / exchange at " + stats.StageLabel(st.TargetRPS), fmt.Sprintf("%.2f", r.EngineCPU.CPUMsPerExchange), ""})
			}
		}
	}
}

func okClass(ok bool) string {
	if ok {
		return "good"
	}
	return "bad"
}

// warnings lists what changes the meaning of the numbers.
func warnings(s *stats.Summary, m *evidence.Manifest) []string {
	var out []string
	if m.Status != "done" {
		out = append(out, fmt.Sprintf("the campaign is %s%s", m.Status, suffix(m.Reason)))
	}
	all := append([]*stats.Run{}, s.Sanity)
	for _, st := range s.Stages {
		all = append(all, st.Runs...)
	}
	for _, w := range s.Warnings {
		if w.Run == "" && w.Code != stats.WarnCampaignEnded { // the campaign's status is said above
			out = append(out, w.String())
		}
	}
	for _, r := range all {
		if r == nil {
			continue
		}
		if r.Status != stats.StatusDone {
			out = append(out, fmt.Sprintf("%s was %s%s; it is not reported", r.ID, r.Status, suffix(r.Reason)))
		}
		if r.Dropped > 0 {
			out = append(out, fmt.Sprintf("%s dropped %s arrivals: the generator's in-flight cap was full, so the server saw less than the target", r.ID, stats.Thousands(r.Dropped)))
		}
		if !r.Sanity && r.Status == stats.StatusDone && !r.ThresholdsPassed {
			out = append(out, fmt.Sprintf("%s failed thresholds: %s", r.ID, r.FailedChecks()))
		}
		// The run's coded warnings, computed from the evidence like every
		// figure (generator_late, generator_starved, host_saturated, …).
		for _, w := range r.Warnings {
			if w.Code == stats.WarnDropped {
				continue // said above, with what it means
			}
			if w.Run == "" {
				w.Run = r.ID
			}
			out = append(out, w.String())
		}
	}
	return out
}

func suffix(reason string) string {
	if reason == "" {
		return ""
	}
	return " (" + reason + ")"
}

// build computes the run's charts from its rows and samples, streaming the
// rows; notes say what the charts lack (a truncated file, rows left out).
func (rv *RunView) build(f *evidence.Folder) ([]string, error) {
	r := rv.Run
	start := r.Started.UnixMicro()
	total := r.MeasuredEnd.Sub(r.Started).Seconds()
	warm := r.MeasuredStart.Sub(r.Started).Seconds()
	ser := newSeries(start, r.MeasuredEnd.UnixMicro())
	info, err := f.Requests(r.ID, ser.add)
	if err != nil && info.Rows == 0 {
		return nil, err
	}
	var notes []string
	if err != nil {
		notes = append(notes, fmt.Sprintf("%s: charts and per-agent table stop at row %s: %v", r.ID, stats.Thousands(info.Rows), err))
	}
	if n := info.Note(); n != "" {
		notes = append(notes, r.ID+": "+n+" (charts and per-agent table)")
	}
	notes = append(notes, ser.notes(r.ID)...)
	res, note, err := f.Resources(r.ID)
	if err != nil {
		return notes, err
	}
	if note != "" {
		notes = append(notes, r.ID+": "+note)
	}
	bands := []charts.Band{}
	if warm > 0 {
		bands = append(bands, charts.Band{X0: 0, X1: warm, Label: "warmup"})
	}
	xmax := total + 2
	rv.Charts = append(rv.Charts, loadCharts(ser, r.TargetRPS, total, xmax, bands)...)
	rg := groupResources(res, start, xmax)
	genLines := rv.engineCharts(rg, xmax, bands)
	host, note, err := f.Host(r.ID)
	if err != nil {
		return notes, err
	}
	if note != "" {
		notes = append(notes, r.ID+": "+note)
	}
	hc := hostCharts(host, start, xmax, bands)
	if len(genLines) > 0 {
		genLines = append(genLines, hc.generator...)
		rv.Charts = append(rv.Charts, template.HTML(charts.Chart{Title: "Load generator CPU", YUnit: "millicores", XMax: xmax, Bands: bands, Lines: genLines, Height: 180}.SVG()))
	}
	rv.Charts = append(rv.Charts, hc.charts...)
	if rg.skipped > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d resource samples of processes or pods beyond the first %d are not charted", r.ID, rg.skipped, maxSeries))
	}
	rv.Agents = ser.agentRows()
	return notes, nil
}

// loadCharts are throughput and latency per second of the run.
func loadCharts(ser *series, target, total, xmax float64, bands []charts.Band) []template.HTML {
	var tx, done, drop, mean, p50, p95, p99 []float64
	for _, s := range ser.seconds() {
		if s.t < 0 {
			continue
		}
		x := s.t + 0.5
		tx = append(tx, x)
		done = append(done, float64(s.answered))
		drop = append(drop, float64(s.dropped))
		mean, p50, p95, p99 = append(mean, s.mean), append(p50, s.p50), append(p95, s.p95), append(p99, s.p99)
	}
	return []template.HTML{
		template.HTML(charts.Chart{Title: "Throughput", YUnit: "exchanges / s", XMax: xmax, Bands: bands, Lines: []charts.Line{
			{Name: "target", X: []float64{0, total}, Y: []float64{target, target}, Class: "s0", Dash: true},
			{Name: "achieved", X: tx, Y: done, Class: "s1"},
			{Name: "dropped", X: tx, Y: drop, Class: "s4"},
		}}.SVG()),
		template.HTML(charts.Chart{Title: "Latency per second (from send)", YUnit: "ms", XMax: xmax, Bands: bands, Lines: []charts.Line{
			{Name: "avg", X: tx, Y: mean, Class: "s0", Dash: true},
			{Name: "p50", X: tx, Y: p50, Class: "s1"},
			{Name: "p95", X: tx, Y: p95, Class: "s2"},
			{Name: "p99", X: tx, Y: p99, Class: "s3"},
		}}.SVG()),
	}
}

// resourceGroup is one process's or pod's samples, as chart points.
type resourceGroup struct{ x, cpu, mem []float64 }

// resourceGroups are the run's resource samples by role and name, at most
// maxSeries of them; skipped counts the samples of the others.
type resourceGroups struct {
	byRole  map[string]map[string]*resourceGroup
	skipped int
}

func groupResources(res []stats.ResourceSample, start int64, xmax float64) resourceGroups {
	rg := resourceGroups{byRole: map[string]map[string]*resourceGroup{}}
	series := 0
	for _, smp := range res {
		x := float64(smp.AtUS-start) / 1e6
		if x < 0 || x > xmax {
			continue
		}
		if rg.byRole[smp.Kind] == nil {
			rg.byRole[smp.Kind] = map[string]*resourceGroup{}
		}
		g := rg.byRole[smp.Kind][smp.Name]
		if g == nil {
			if series >= maxSeries {
				rg.skipped++
				continue
			}
			series++
			g = &resourceGroup{}
			rg.byRole[smp.Kind][smp.Name] = g
		}
		g.x, g.cpu, g.mem = append(g.x, x), append(g.cpu, smp.CPUMillicores), append(g.mem, float64(smp.MemoryBytes)/(1<<20))
	}
	return rg
}

// names are a role's members, sorted.
func (rg resourceGroups) names(role string) []string {
	return slices.Sorted(maps.Keys(rg.byRole[role]))
}

// engineCharts adds the engines' CPU (stacked, with the nodes') and memory
// charts, and returns the generator's and agents' CPU lines.
func (rv *RunView) engineCharts(rg resourceGroups, xmax float64, bands []charts.Band) (genLines []charts.Line) {
	var stacked, memLines, nodeLines []charts.Line
	for i, n := range rg.names("engine") {
		g := rg.byRole["engine"][n]
		stacked = append(stacked, charts.Line{Name: n, X: g.x, Y: g.cpu, Class: fmt.Sprintf("s%d", 1+i%7)})
		memLines = append(memLines, charts.Line{Name: n, X: g.x, Y: g.mem, Class: fmt.Sprintf("s%d", 1+i%7)})
	}
	for i, n := range rg.names("node") {
		g := rg.byRole["node"][n]
		nodeLines = append(nodeLines, charts.Line{Name: "node " + n, X: g.x, Y: g.cpu, Class: fmt.Sprintf("s%d", 1+i%7), Dash: true})
	}
	for _, role := range []string{"generator", "agent"} {
		for i, n := range rg.names(role) {
			g := rg.byRole[role][n]
			genLines = append(genLines, charts.Line{Name: n, X: g.x, Y: g.cpu, Class: fmt.Sprintf("s%d", 5+i%3)})
		}
	}
	if len(stacked) > 0 {
		rv.Charts = append(rv.Charts,
			template.HTML(charts.Chart{Title: "Engine CPU (stacked per engine)", YUnit: "millicores", XMax: xmax, Bands: bands, Stacked: stacked, Lines: nodeLines}.SVG()),
			template.HTML(charts.Chart{Title: "Engine memory", YUnit: "MiB", XMax: xmax, Bands: bands, Lines: memLines, Height: 180}.SVG()))
	}
	return genLines
}
