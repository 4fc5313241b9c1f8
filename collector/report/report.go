package report

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/decimate"
	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
	"github.com/tokex-dev/tokex/internal/safefs"
)

//go:embed report.html.tmpl
var pageTemplate string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"wave":   periodLine,
	"stage":  units.StageLabel,
	"stats":  doc.RunTable,
	"errors": doc.ErrorsTable,
	"source": doc.SourceLabel,
}).Parse(pageTemplate))

// RunView is one run's section.
type RunView struct {
	Run      *stats.Run
	Reported bool
	Flags    []string // invalidating warning codes of the run
	Charts   []template.HTML
	Agents   []agentRow
	Missing  string
}

// Build renders the evidence folder dir as HTML, in memory (see Render).
func Build(dir string) ([]byte, error) {
	var buf bytes.Buffer
	if err := Render(&buf, dir); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Render writes the HTML report of the evidence folder dir to w.
func Render(w io.Writer, dir string) error {
	f, err := evidence.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return render(w, f)
}

// render keeps memory bounded whatever the folder holds: each run's rows
// and samples are read into decimated series (collector/decimate), its
// section is rendered and set aside (a temporary file) before the next run
// is read, and the sections follow the campaign's document (collector/doc)
// once every run has added its notes to the warnings there.
func render(w io.Writer, f *evidence.Folder) error {
	pg := &doc.Page{CampaignID: f.Manifest.CampaignID, Status: f.Manifest.Status, Reason: f.Manifest.Reason}
	s, err := f.Summary()
	if errors.Is(err, fs.ErrNotExist) {
		if s, err = f.Recompute(stats.Thresholds{}); err != nil {
			return err
		}
		pg.Recomputed = true
	}
	if err != nil {
		return err
	}
	pg.Curve = CurveCharts(Campaign{Name: s.CampaignID, S: s, Classes: [4]string{"s5", "s1", "s3", "s2"}})
	pg.Agentic = AgenticCharts(s)
	if s.Scaling != nil { // one curve per engine count, and how the counts compare
		pg.Curve = append(ScalingCharts(s), CurveCharts(countCampaigns(s)...)...)
	}
	sections := newSpill()
	defer sections.close()
	if pg.Notes, err = runSections(sections, f, s); err != nil {
		return err
	}
	pg.Runs = sections.copyTo
	if err := page.Execute(w, s); err != nil {
		return err
	}
	if err := doc.Campaign(s, pg).HTML(w); err != nil {
		return err
	}
	return page.ExecuteTemplate(w, "foot", nil)
}

// runSections renders every run's section to out, in plan order, one run
// at a time, and returns what reading the runs' files found.
func runSections(out io.Writer, f *evidence.Folder, s *summary.Summary) ([]string, error) {
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
	var all []string
	for _, r := range runs {
		rv := RunView{Run: r, Reported: reported[r.ID]}
		for _, w := range r.Warnings {
			if w.Code.Invalidating() {
				rv.Flags = append(rv.Flags, string(w.Code))
			}
		}
		notes, err := rv.build(f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			rv.Missing = "this run's files are not in the folder (" + path.Join(evidence.RunsDir, r.ID, evidence.RequestsFile) + ")"
		case err != nil:
			rv.Missing = err.Error()
		}
		all = append(all, notes...)
		if err := page.ExecuteTemplate(out, "run", rv); err != nil {
			return nil, err
		}
	}
	return all, nil
}

// spill holds the runs' sections until the head is written: a temporary
// file, removed at once where the system allows it, or memory when no
// temporary file can be made.
type spill struct {
	f      *os.File
	linked bool // still has a name to remove
	w      *bufio.Writer
	mem    *bytes.Buffer
}

func newSpill() *spill {
	f, err := os.CreateTemp("", "tokex-report-*.html")
	if err != nil {
		return &spill{mem: new(bytes.Buffer)}
	}
	// Unlinked at once, the open file is all that is left of it.
	return &spill{f: f, linked: os.Remove(f.Name()) != nil, w: bufio.NewWriterSize(f, 64<<10)}
}

func (s *spill) Write(p []byte) (int, error) {
	if s.mem != nil {
		return s.mem.Write(p)
	}
	return s.w.Write(p)
}

func (s *spill) copyTo(w io.Writer) error {
	if s.mem != nil {
		_, err := s.mem.WriteTo(w)
		return err
	}
	if err := s.w.Flush(); err != nil {
		return err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, s.f)
	return err
}

func (s *spill) close() {
	if s.f == nil {
		return
	}
	s.f.Close()
	if s.linked {
		_ = os.Remove(s.f.Name())
	}
}

// Write renders dir's report into file (default dir/report.html), as it
// is rendered: the file is replaced atomically; a link or special file in
// its place is refused, never written through.
func Write(dir, file string) (string, error) {
	if file == "" {
		file = filepath.Join(dir, "report.html")
	}
	f, err := evidence.Open(dir)
	if err != nil {
		return "", err
	}
	defer f.Close()
	d, err := safefs.Open(filepath.Dir(file))
	if err != nil {
		return "", err
	}
	defer d.Close()
	a, err := d.CreateAtomic(filepath.Base(file))
	if err != nil {
		return "", err
	}
	bw := bufio.NewWriterSize(a, 64<<10)
	if err := render(bw, f); err != nil {
		a.Abort()
		return "", err
	}
	if err := bw.Flush(); err != nil {
		a.Abort()
		return "", err
	}
	return file, a.Commit()
}

// build computes the run's charts from its rows and samples, streaming
// both: the rows into per-second figures, the samples into decimated
// series, so a run costs the same whatever its files hold. notes say what
// the charts lack (a truncated file, rows left out).
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
		notes = append(notes, fmt.Sprintf("%s: charts and per-agent table stop at row %s: %v", r.ID, units.Thousands(info.Rows), err))
	}
	if n := info.Note(); n != "" {
		notes = append(notes, r.ID+": "+n+" (charts and per-agent table)")
	}
	notes = append(notes, ser.notes(r.ID)...)
	xmax := total + 2
	rg := newResourceGroups(start, xmax)
	note, err := f.EachResource(r.ID, rg.add)
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
	rv.Charts = append(rv.Charts, loadCharts(ser, r.TargetRPS, total, xmax, bands)...)
	genLines := rv.engineCharts(rg, xmax, bands)
	hs := newHostSeries(start, xmax)
	note, err = f.EachHost(r.ID, hs.add)
	if err != nil {
		return notes, err
	}
	if note != "" {
		notes = append(notes, r.ID+": "+note)
	}
	hc := hs.charts(xmax, bands)
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

// loadCharts are throughput and latency per second of the run, each line
// decimated over the seconds charted.
func loadCharts(ser *series, target, total, xmax float64, bands []charts.Band) []template.HTML {
	var lines [6]*decimate.Series
	for i := range lines {
		lines[i] = decimate.New(0, float64(ser.last)+1, decimate.Buckets)
	}
	for _, s := range ser.seconds() {
		if s.t < 0 {
			continue
		}
		x := s.t + 0.5
		for i, y := range [...]float64{float64(s.answered), float64(s.dropped), s.mean, s.p50, s.p95, s.p99} {
			lines[i].Add(x, y)
		}
	}
	return []template.HTML{
		template.HTML(charts.Chart{Title: "Throughput", YUnit: "exchanges / s", XMax: xmax, Bands: bands, Lines: []charts.Line{
			{Name: "target", X: []float64{0, total}, Y: []float64{target, target}, Class: "s0", Dash: true},
			line("achieved", lines[0], "s1", false),
			line("dropped", lines[1], "s4", false),
		}}.SVG()),
		template.HTML(charts.Chart{Title: "Latency per second (from send)", YUnit: "ms", XMax: xmax, Bands: bands, Lines: []charts.Line{
			line("avg", lines[2], "s0", true),
			line("p50", lines[3], "s1", false),
			line("p95", lines[4], "s2", false),
			line("p99", lines[5], "s3", false),
		}}.SVG()),
	}
}

// resourceGroup is one process's or pod's samples, as chart series.
type resourceGroup struct{ cpu, mem *decimate.Series }

// resourceBudget bounds the buckets of one run's resource series: a run of
// a few processes charts each at full resolution, one of maxSeries at
// 64 buckets each.
const resourceBudget = 32 * decimate.Buckets

// resourceGroups are the run's resource samples by role and name, at most
// maxSeries of them, decimated as read; skipped counts the samples of the
// others.
type resourceGroups struct {
	start   int64
	xmax    float64
	set     *decimate.Set
	byRole  map[string]map[string]*resourceGroup
	series  int
	skipped int
}

func newResourceGroups(start int64, xmax float64) *resourceGroups {
	return &resourceGroups{start: start, xmax: xmax, set: decimate.NewSet(0, xmax, resourceBudget), byRole: map[string]map[string]*resourceGroup{}}
}

// add files one sample (the sample is the reader's: names are copied).
func (rg *resourceGroups) add(smp *sample.Resource) {
	x := float64(smp.AtUS-rg.start) / 1e6
	if x < 0 || x > rg.xmax {
		return
	}
	g := rg.byRole[smp.Kind][smp.Name]
	if g == nil {
		if rg.series >= maxSeries {
			rg.skipped++
			return
		}
		rg.series++
		g = &resourceGroup{cpu: rg.set.New(), mem: rg.set.New()}
		role := rg.byRole[smp.Kind]
		if role == nil {
			role = map[string]*resourceGroup{}
			rg.byRole[strings.Clone(smp.Kind)] = role
		}
		role[strings.Clone(smp.Name)] = g
	}
	g.cpu.Add(x, smp.CPUMillicores)
	g.mem.Add(x, float64(smp.MemoryBytes)/(1<<20))
}

// label is a process's or pod's name as a chart shows it (legend and
// tooltip): at most 64 characters, a cut one ending in "…". A name may be
// 64 KiB (a CSV line), and 200 of them in four places would outweigh the
// run's decimated lines.
func label(name string) string {
	i := 0
	for k := range name {
		if i == 64 {
			return name[:k] + "…"
		}
		i++
	}
	return name
}

// names are a role's members, sorted.
func (rg *resourceGroups) names(role string) []string {
	return slices.Sorted(maps.Keys(rg.byRole[role]))
}

// engineCharts adds the engines' CPU (stacked, with the nodes') and memory
// charts, and returns the generator's and agents' CPU lines.
func (rv *RunView) engineCharts(rg *resourceGroups, xmax float64, bands []charts.Band) (genLines []charts.Line) {
	var stacked, memLines, nodeLines []charts.Line
	for i, n := range rg.names("engine") {
		g := rg.byRole["engine"][n]
		stacked = append(stacked, line(label(n), g.cpu, fmt.Sprintf("s%d", 1+i%7), false))
		memLines = append(memLines, line(label(n), g.mem, fmt.Sprintf("s%d", 1+i%7), false))
	}
	for i, n := range rg.names("node") {
		nodeLines = append(nodeLines, line("node "+label(n), rg.byRole["node"][n].cpu, fmt.Sprintf("s%d", 1+i%7), true))
	}
	for _, role := range []string{"generator", "agent"} {
		for i, n := range rg.names(role) {
			genLines = append(genLines, line(label(n), rg.byRole[role][n].cpu, fmt.Sprintf("s%d", 5+i%3), false))
		}
	}
	if len(stacked) > 0 {
		rv.Charts = append(rv.Charts,
			template.HTML(charts.Chart{Title: "Engine CPU (stacked per engine)", YUnit: "millicores", XMax: xmax, Bands: bands, Stacked: stacked, Lines: nodeLines}.SVG()),
			template.HTML(charts.Chart{Title: "Engine memory", YUnit: "MiB", XMax: xmax, Bands: bands, Lines: memLines, Height: 180}.SVG()))
	}
	return genLines
}
