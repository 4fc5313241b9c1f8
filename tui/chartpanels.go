package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/units"
)

// The chart grid's charts: each a title with the figures now (a finished
// run's own figures once it ended) over a plot of the run's series.

var chartTitles = map[panel]string{
	panelLatency: "latency", panelThroughput: "throughput", panelEngineCPU: "engine CPU",
	panelEngineMem: "engine memory", panelGenerator: "generator CPU", panelStages: "stage curve",
}

// chart is a panel's title and plot for run r.
func (g *chartGrid) chart(p panel, r *runState) (string, charts.Plot) {
	switch p {
	case panelLatency:
		return g.latencyChart(r)
	case panelThroughput:
		return g.throughputChart(r)
	case panelEngineCPU:
		return g.engineChart(r)
	case panelEngineMem:
		return g.memoryChart(r)
	}
	return g.generatorChart(r)
}

func trace(name string, ts *charts.TimeSeries, st lipgloss.Style) charts.Trace {
	return charts.Trace{Name: name, Points: ts.Points(), Style: st}
}

func (g *chartGrid) latencyChart(r *runState) (string, charts.Plot) {
	s, c, d := g.com.styles, g.com.camp, r.data
	title := fmt.Sprintf("latency p95 %s ms (p50 %s · p99 %s)", ms(d.p95.Last()), ms(d.p50.Last()), ms(d.p99.Last()))
	if st := c.final(r); st != nil { // the run's own figures, not its last second's
		l := st.LatencyMs
		title = fmt.Sprintf("run latency p95 %s ms (p50 %s · p99 %s)", ms(l.P95), ms(l.P50), ms(l.P99))
	}
	plot := charts.Plot{YMax: 1, Traces: []charts.Trace{trace("p99", &d.p99, s.Warn), trace("p50", &d.p50, s.Dim), trace("p95", &d.p95, s.Spark)}}
	if c.started != nil {
		if obj := c.started.Thresholds.P95Ms; obj > 0 {
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

// requestRate is the requests a second a run's plan asks for: its arrival
// rate, times the hops of a chain (the chart counts requests).
func requestRate(p event.PlannedRun) float64 { return p.TargetRPS * float64(hopsOf(p)) }

// hopsOf is the requests of one of the run's arrivals when it is an
// exchange: a chain's hops, else 1.
func hopsOf(p event.PlannedRun) int {
	if p.Grant != "" {
		return 1
	}
	return max(p.Chain, 1)
}

func (g *chartGrid) throughputChart(r *runState) (string, charts.Plot) {
	s, d := g.com.styles, r.data
	title := fmt.Sprintf("achieved %s/s of %s · dropped %s · errors %s",
		charts.Compact(d.achieved.Last()), charts.Compact(d.target.Last()), charts.Compact(d.dropped.Last()), charts.Compact(d.errors.Last()))
	if st := g.com.camp.final(r); st != nil {
		title = fmt.Sprintf("achieved %s/s of %s · %s dropped · %s errors", charts.Compact(st.AchievedRPS), charts.Compact(requestRate(r.plan)),
			units.Thousands(st.Dropped), units.Thousands(st.Requests-st.OK))
		if st.Retried > 0 {
			title += " · " + units.Thousands(st.Retried) + " retried"
		}
	}
	return title, charts.Plot{YMax: requestRate(r.plan), Traces: []charts.Trace{
		trace("target", &d.target, s.Dim), trace("dropped", &d.dropped, s.Warn), trace("errors", &d.errors, s.Bad), trace("achieved", &d.achieved, s.Good)}}
}

func (g *chartGrid) engineChart(r *runState) (string, charts.Plot) {
	s, d := g.com.styles, r.data
	engines := d.engineList()
	if len(engines) == 0 {
		return "engine CPU: not measured", charts.Plot{YMax: 100}
	}
	tot, what := d.engineTot.Last(), "engine CPU"
	if st := g.com.camp.final(r); st != nil && st.EngineCPU != nil {
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

func (g *chartGrid) memoryChart(r *runState) (string, charts.Plot) {
	s, d := g.com.styles, r.data
	if len(d.engines) == 0 {
		return "engine memory: not measured", charts.Plot{YMax: 1}
	}
	mib := charts.TimeSeries{Cap: seriesCap}
	for _, p := range d.engineMem.Points() {
		mib.Push(p.T, p.V/(1<<20))
	}
	title := "engine memory " + units.BytesIEC(int64(d.engineMem.Last()))
	return title, charts.Plot{YMax: 1, YLabel: func(v float64) string { return charts.Compact(v) + "Mi" },
		Traces: []charts.Trace{trace("memory", &mib, s.Engine)}}
}

func (g *chartGrid) generatorChart(r *runState) (string, charts.Plot) {
	s, d := g.com.styles, r.data
	gen, what := d.gen.Last(), "generator CPU"
	if st := g.com.camp.final(r); st != nil && st.GeneratorCPU != nil {
		gen, what = st.GeneratorCPU.AvgCores*1000, "generator CPU average"
	}
	title := fmt.Sprintf("%s %s m = %s cores", what, millicores(gen), cores(gen))
	if h := g.com.camp.host; h != nil && h.CPUs > 0 {
		title += fmt.Sprintf(" · host busy %s m %s", millicores(h.BusyCores*1000), hostNote(&h.HostMetrics))
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
