package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/stats"
)

// panelCache keeps each chart panel's lines until its data, size, focus
// or run changes: an event redraws only the panels it feeds.
type panelCache map[panel]cachedPanel

type cachedPanel struct {
	key   panelKey
	lines []string
}

type panelKey struct {
	run          *runState
	state        rowState
	w, h         int
	focus, zoom  bool
	data, others int // versions of what the panel draws
}

// chartPanels are the chart grid's panels, in reading order.
var chartPanels = []panel{panelLatency, panelThroughput, panelEngineCPU, panelEngineMem, panelGenerator, panelStages}

// chartView is the layout of terminals with room: the ladder over the
// errors and warnings on the left, the live figures over a grid of braille
// charts on the right, the results table across the bottom.
func (m *Model) chartView() string {
	w, h := m.width, m.height
	s := m.styles
	header := m.header(w)
	footer := []string{m.status(w), m.helpLine(w)}
	bottom := m.bottom(w, h/3)
	bottomH := min(max(len(bottom), 3), h/3)
	if m.showLogs || m.showAgents || m.help.ShowAll {
		bottomH = h / 3
	}
	midH := h - len(header) - 2 - bottomH - len(footer)
	top := len(header) + 1
	leftW, rightW := ladderWidth, w-ladderWidth-1
	ladderH := min(len(m.runs)+1, max(midH/2, midH-12))
	if m.current == nil && m.campaign == nil {
		ladderH = min(ladderH, 2)
	}
	m.addZone(panelLadder, 0, top, leftW, ladderH)
	m.addZone(panelErrors, 0, top+ladderH, leftW, midH-ladderH)
	left := strings.Split(fit(m.ladder(leftW, ladderH), leftW, ladderH)+"\n"+fit(m.errorsPanel(leftW, midH-ladderH), leftW, midH-ladderH), "\n")
	right := m.rightColumn(rightW, midH, top)
	m.addZone(panelResults, 0, top+midH+1, w, bottomH)
	rule := s.Rule.Render(strings.Repeat("─", w))
	lines := append([]string{}, header...)
	lines = append(lines, rule)
	for i := range midH { // both columns are exactly as wide as they say
		lines = append(lines, left[i]+"│"+right[i])
	}
	lines = append(lines, rule, fit(strings.Join(bottom, "\n"), w, bottomH))
	lines = append(lines, footer...)
	return strings.Join(lines, "\n")
}

// statusRows is the height of the figures above the charts.
const statusRows = 3

// rightColumn is the shown run's figures over the chart grid: exactly h
// lines of w cells.
func (m *Model) rightColumn(w, h, top int) []string {
	if m.current == nil {
		return strings.Split(fit(m.preflight(w), w, h), "\n")
	}
	lines := []string{m.progress(w)}
	r := m.shown()
	if m.selected != nil {
		lines = append(lines, m.viewing())
	} else if warn := m.healthLine(); warn != "" {
		lines = append(lines, m.styles.Bad.Render(warn))
	}
	lines = append(lines, m.figures(r, true)...)
	if len(lines) < statusRows && m.host != nil && m.host.CPUs > 0 {
		h := m.host
		lines = append(lines, m.styles.Dim.Render(fmt.Sprintf("host running the load: %.0f m busy of %d cores · run queue %d", h.BusyCores*1000, h.CPUs, h.Runnable)))
	}
	status := strings.Split(fit(strings.Join(lines, "\n"), w, statusRows), "\n")
	return append(status, m.chartGrid(w, h-statusRows, top+statusRows)...)
}

// chartGrid lays the chart panels out in rows of two or three (or the
// zoomed one alone): exactly h lines of w cells.
func (m *Model) chartGrid(w, h, top int) []string {
	panels := chartPanels
	if m.zoom && m.focus.isChart() {
		panels = []panel{m.focus}
	}
	cols := 2
	if w >= 150 {
		cols = 3
	}
	cols = min(cols, len(panels))
	rows := (len(panels) + cols - 1) / cols
	colW, rowH := (w-(cols-1))/cols, h/rows
	var out []string
	for row := 0; row < rows; row++ {
		ph := rowH
		if row == rows-1 {
			ph = h - rowH*(rows-1)
		}
		lines := make([]string, ph)
		for c := 0; c < cols; c++ {
			i, cw := row*cols+c, colW
			if c == cols-1 {
				cw = w - (colW+1)*(cols-1)
			}
			block := strings.Split(strings.Repeat(strings.Repeat(" ", cw)+"\n", ph-1)+strings.Repeat(" ", cw), "\n")
			if i < len(panels) {
				m.addZone(panels[i], ladderWidth+1+c*(colW+1), top+row*rowH, cw, ph)
				block = m.panelLines(panels[i], cw, ph)
			}
			for y := range lines {
				if c > 0 {
					lines[y] += " "
				}
				lines[y] += block[y]
			}
		}
		out = append(out, lines...)
	}
	return out
}

// panelLines is a panel's exactly w×h lines, from the cache while what it
// draws is unchanged.
func (m *Model) panelLines(p panel, w, h int) []string {
	r := m.shown()
	k := panelKey{run: r, state: r.state, w: w, h: h, focus: m.focus == p, zoom: m.zoom, others: m.sumVer}
	if d := r.data; d != nil {
		switch p {
		case panelLatency, panelThroughput:
			k.data = d.nWin
		case panelEngineCPU, panelEngineMem:
			k.data = d.nEng
		case panelGenerator:
			k.data, k.others = d.nGen, m.hostVer
		}
	}
	if c, ok := m.cache[p]; ok && c.key == k {
		return c.lines
	}
	if m.cache == nil {
		m.cache = panelCache{}
	}
	lines := m.chartPanel(p, r, w, h)
	m.cache[p] = cachedPanel{key: k, lines: lines}
	return lines
}

// chartPanel draws one panel, exactly w×h: a title with the current
// figures over its chart.
func (m *Model) chartPanel(p panel, r *runState, w, h int) []string {
	var text string
	switch {
	case p == panelStages:
		if res, _ := m.curve.Search(); res != nil {
			text = m.searchPanel(w, h)
		} else {
			text = m.stageCurve(w, h)
		}
	case r.data == nil:
		text = m.title(p, chartTitles[p]) + "\n" + m.styles.Dim.Render(wrap(noCharts, w))
	default:
		title, plot := m.chart(p, r)
		if plot.Traces == nil { // nothing measured: say so, draw no empty axes
			text = m.title(p, title)
			break
		}
		plot.Width, plot.Height, plot.Axis = w, h-1, m.styles.Rule
		plot.XMax, plot.Mark = r.plan.Total().Seconds(), r.plan.Warmup.Seconds()
		if out := plot.Render(); out != "" { // exactly w×(h-1) already
			return append([]string{fit(m.title(p, title), w, 1)}, strings.Split(out, "\n")...)
		}
		text = m.title(p, title)
	}
	return strings.Split(fit(text, w, h), "\n")
}

var chartTitles = map[panel]string{
	panelLatency: "latency", panelThroughput: "throughput", panelEngineCPU: "engine CPU",
	panelEngineMem: "engine memory", panelGenerator: "generator CPU", panelStages: "stage curve",
}

// chart is a panel's title and plot for run r.
func (m *Model) chart(p panel, r *runState) (string, charts.Plot) {
	switch p {
	case panelLatency:
		return m.latencyChart(r)
	case panelThroughput:
		return m.throughputChart(r)
	case panelEngineCPU:
		return m.engineChart(r)
	case panelEngineMem:
		return m.memoryChart(r)
	}
	return m.generatorChart(r)
}

// final is a finished run's statistics, nil while it runs.
func (m *Model) final(r *runState) *stats.Run {
	if r == m.current && m.running() {
		return nil
	}
	return r.stats
}

func trace(name string, ts *charts.TimeSeries, st lipgloss.Style) charts.Trace {
	return charts.Trace{Name: name, Points: ts.Points(), Style: st}
}

func (m *Model) latencyChart(r *runState) (string, charts.Plot) {
	s, d := m.styles, r.data
	title := fmt.Sprintf("latency p95 %s ms (p50 %s · p99 %s)", ms(d.p95.Last()), ms(d.p50.Last()), ms(d.p99.Last()))
	if st := m.final(r); st != nil { // the run's own figures, not its last second's
		l := st.LatencyMs
		title = fmt.Sprintf("run latency p95 %s ms (p50 %s · p99 %s)", ms(l.P95), ms(l.P50), ms(l.P99))
	}
	plot := charts.Plot{YMax: 1, Traces: []charts.Trace{trace("p99", &d.p99, s.Warn), trace("p50", &d.p50, s.Dim), trace("p95", &d.p95, s.Spark)}}
	if m.campaign != nil {
		if obj := m.campaign.Thresholds.P95Ms; obj > 0 {
			// The objective is drawn when it is on the chart's scale; far above
			// the latency it would flatten every line to the floor.
			if peak := d.p99.Peak(); obj <= 4*max(peak, 1) {
				plot.Traces = append([]charts.Trace{{Name: "objective", Points: []charts.Point{{T: 0, V: obj}, {T: r.plan.Total().Seconds(), V: obj}}, Style: s.Bad}}, plot.Traces...)
				title += " · objective " + ms(obj) + " ms"
			} else {
				title += " · objective " + ms(obj) + " ms, far above"
			}
		}
	}
	return title, plot
}

func (m *Model) throughputChart(r *runState) (string, charts.Plot) {
	s, d := m.styles, r.data
	title := fmt.Sprintf("achieved %s/s of %s · dropped %s · errors %s",
		charts.Compact(d.achieved.Last()), charts.Compact(d.target.Last()), charts.Compact(d.dropped.Last()), charts.Compact(d.errors.Last()))
	if st := m.final(r); st != nil {
		title = fmt.Sprintf("achieved %s/s of %s · %s dropped · %s errors", charts.Compact(st.AchievedRPS), charts.Compact(r.plan.TargetRPS),
			stats.Thousands(st.Dropped), stats.Thousands(st.Requests-st.OK))
		if st.Retried > 0 {
			title += " · " + stats.Thousands(st.Retried) + " retried"
		}
	}
	return title, charts.Plot{YMax: r.plan.TargetRPS, Traces: []charts.Trace{
		trace("target", &d.target, s.Dim), trace("dropped", &d.dropped, s.Warn), trace("errors", &d.errors, s.Bad), trace("achieved", &d.achieved, s.Good)}}
}

func (m *Model) engineChart(r *runState) (string, charts.Plot) {
	s, d := m.styles, r.data
	engines := d.engineList()
	if len(engines) == 0 {
		return "engine CPU: not measured", charts.Plot{YMax: 100}
	}
	tot, what := d.engineTot.Last(), "engine CPU"
	if st := m.final(r); st != nil && st.EngineCPU != nil {
		tot, what = st.EngineCPU.AvgCores*1000, "engine CPU average"
	}
	title := fmt.Sprintf("%s %s m = %s cores", what, millicores(tot), cores(tot))
	plot := charts.Plot{YMax: 100, YLabel: millicores}
	req, lim := d.sizes()
	switch {
	case req > 0 && lim > 0:
		title += fmt.Sprintf(" · req/lim %s/%s m", millicores(req), millicores(lim))
	case req > 0:
		title += fmt.Sprintf(" · requests %s m", millicores(req))
	case lim > 0:
		title += fmt.Sprintf(" · limits %s m", millicores(lim))
	}
	span := r.plan.Total().Seconds()
	for _, l := range []struct {
		v  float64
		st lipgloss.Style
	}{{req, s.Dim}, {lim, s.Warn}} {
		if l.v > 0 { // a line at the engines' request and at their limit
			plot.Traces = append(plot.Traces, charts.Trace{Points: []charts.Point{{T: 0, V: l.v}, {T: span, V: l.v}}, Style: l.st})
		}
	}
	if len(engines) > 1 {
		title = fmt.Sprintf("%d engines' %s", len(engines), strings.TrimPrefix(title, "engine "))
	}
	for _, e := range engines {
		plot.Traces = append(plot.Traces, trace(e.name, &e.cpu, s.Engine))
	}
	if len(engines) > 1 {
		plot.Traces = append(plot.Traces, trace("total", &d.engineTot, s.Value))
	}
	return title, plot
}

func (m *Model) memoryChart(r *runState) (string, charts.Plot) {
	s, d := m.styles, r.data
	if len(d.engines) == 0 {
		return "engine memory: not measured", charts.Plot{YMax: 1}
	}
	mib := charts.TimeSeries{Cap: seriesCap}
	for _, p := range d.engineMem.Points() {
		mib.Push(p.T, p.V/(1<<20))
	}
	title := "engine memory " + stats.BytesIEC(int64(d.engineMem.Last()))
	return title, charts.Plot{YMax: 1, YLabel: func(v float64) string { return charts.Compact(v) + "Mi" },
		Traces: []charts.Trace{trace("memory", &mib, s.Engine)}}
}

func (m *Model) generatorChart(r *runState) (string, charts.Plot) {
	s, d := m.styles, r.data
	g, what := d.gen.Last(), "generator CPU"
	if st := m.final(r); st != nil && st.GeneratorCPU != nil {
		g, what = st.GeneratorCPU.AvgCores*1000, "generator CPU average"
	}
	title := fmt.Sprintf("%s %s m = %s cores", what, millicores(g), cores(g))
	if h := m.host; h != nil && h.CPUs > 0 {
		title += fmt.Sprintf(" · host busy %s m %s", millicores(h.BusyCores*1000), m.hostNote())
	}
	return title, charts.Plot{YMax: 100, YLabel: millicores,
		Traces: []charts.Trace{trace("host", &d.host, s.Dim), trace("generator", &d.gen, s.Gen)}}
}

// millicores labels a CPU axis: 0, 500, 1000, 2500, 12k.
func millicores(v float64) string {
	if v < 1e4 {
		return fmt.Sprintf("%.0f", v)
	}
	return charts.Compact(v)
}

// cores writes millicores as cores for a newcomer: 320 → 0.32.
func cores(mc float64) string { return fmt.Sprintf("%.2f", mc/1000) }

// ms writes a latency in milliseconds with sensible precision.
func ms(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
