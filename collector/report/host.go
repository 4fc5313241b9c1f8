package report

import (
	"html/template"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/decimate"
	"github.com/tokex-dev/tokex/collector/sample"
)

// hostView is what host.csv adds to a run's section: the generator's limit
// and wait (drawn on its CPU chart), the host's CPU, and its pressure.
type hostView struct {
	generator []charts.Line
	charts    []template.HTML
}

// hostSeries are a run's host samples as decimated series, filled as
// host.csv is read.
type hostSeries struct {
	startUS int64
	xmax    float64
	// samples in the run's span, and those of them that know the memory
	samples, withMem                                   int
	busy, steal, runnable, cpus, limit, wait, memAvail *decimate.Series
	psiCPU, psiMemSome, psiMemFull                     *decimate.Series
}

func newHostSeries(startUS int64, xmax float64) *hostSeries {
	h := &hostSeries{startUS: startUS, xmax: xmax}
	for _, s := range []**decimate.Series{&h.busy, &h.steal, &h.runnable, &h.cpus, &h.limit, &h.wait, &h.memAvail, &h.psiCPU, &h.psiMemSome, &h.psiMemFull} {
		*s = decimate.New(0, xmax, decimate.Buckets)
	}
	return h
}

func (h *hostSeries) add(s *sample.Host) {
	t := float64(s.AtUS-h.startUS) / 1e6
	if t < 0 || t > h.xmax {
		return
	}
	h.samples++
	h.busy.Add(t, s.BusyCores)
	h.steal.Add(t, s.StealCores)
	h.runnable.Add(t, float64(s.Runnable))
	h.cpus.Add(t, float64(s.CPUs))
	h.limit.Add(t, s.GeneratorLimitCores*1000)
	if s.GeneratorWaitCores != nil {
		h.wait.Add(t, *s.GeneratorWaitCores*1000)
	}
	if s.MemTotalBytes > 0 {
		h.withMem++
		h.memAvail.Add(t, 100*float64(s.MemAvailableBytes)/float64(s.MemTotalBytes))
	}
	if p := s.PSI; p != nil {
		h.psiCPU.Add(t, 100*p.CPUSome)
		h.psiMemSome.Add(t, 100*p.MemorySome)
		h.psiMemFull.Add(t, 100*p.MemoryFull)
	}
}

func line(name string, s *decimate.Series, class string, dash bool) charts.Line {
	x, y := s.Points()
	return charts.Line{Name: name, X: x, Y: y, Class: class, Dash: dash}
}

func (h *hostSeries) charts(xmax float64, bands []charts.Band) hostView {
	var v hostView
	if h.samples == 0 {
		return v
	}
	v.generator = append(v.generator, line("may use", h.limit, "s0", true))
	if h.wait.Kept() > 0 {
		v.generator = append(v.generator, line("waiting for a CPU", h.wait, "s4", false))
	}
	v.charts = append(v.charts, template.HTML(charts.Chart{Title: "Host CPU (the machine running the generator)", YUnit: "cores, threads", XMax: xmax, Bands: bands, Height: 180,
		Lines: []charts.Line{
			line("CPUs", h.cpus, "s0", true),
			line("busy", h.busy, "s1", false),
			line("steal", h.steal, "s4", false),
			line("runnable threads", h.runnable, "s3", false),
		}}.SVG()))
	lines := []charts.Line{}
	if h.withMem == h.samples {
		lines = append(lines, line("memory available", h.memAvail, "s6", false))
	}
	if h.psiCPU.Kept() > 0 {
		lines = append(lines,
			line("CPU stalls (some)", h.psiCPU, "s1", false),
			line("memory stalls (some)", h.psiMemSome, "s2", false),
			line("memory stalls (full)", h.psiMemFull, "s4", false))
	}
	if len(lines) > 0 {
		v.charts = append(v.charts, template.HTML(charts.Chart{Title: "Host memory and pressure", YUnit: "% (of memory, of time)", XMax: xmax, Bands: bands, Height: 180, Lines: lines}.SVG()))
	}
	return v
}
