package report

import (
	"html/template"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/stats"
)

// hostView is what host.csv adds to a run's section: the generator's limit
// and wait (drawn on its CPU chart), the host's CPU, and its pressure.
type hostView struct {
	generator []charts.Line
	charts    []template.HTML
}

func hostCharts(host []stats.HostSample, startUS int64, xmax float64, bands []charts.Band) hostView {
	var v hostView
	var x, busy, steal, runnable, cpus, limit, wait, psiCPU, psiMemSome, psiMemFull, memAvail []float64
	var waitX, psiX []float64
	for _, h := range host {
		t := float64(h.AtUS-startUS) / 1e6
		if t < 0 || t > xmax {
			continue
		}
		x = append(x, t)
		busy, steal = append(busy, h.BusyCores), append(steal, h.StealCores)
		runnable, cpus = append(runnable, float64(h.Runnable)), append(cpus, float64(h.CPUs))
		limit = append(limit, h.GeneratorLimitCores*1000)
		if h.GeneratorWaitCores != nil {
			waitX, wait = append(waitX, t), append(wait, *h.GeneratorWaitCores*1000)
		}
		if h.MemTotalBytes > 0 {
			memAvail = append(memAvail, 100*float64(h.MemAvailableBytes)/float64(h.MemTotalBytes))
		}
		if p := h.PSI; p != nil {
			psiX = append(psiX, t)
			psiCPU, psiMemSome, psiMemFull = append(psiCPU, 100*p.CPUSome), append(psiMemSome, 100*p.MemorySome), append(psiMemFull, 100*p.MemoryFull)
		}
	}
	if len(x) == 0 {
		return v
	}
	v.generator = append(v.generator, charts.Line{Name: "may use", X: x, Y: limit, Class: "s0", Dash: true})
	if len(wait) > 0 {
		v.generator = append(v.generator, charts.Line{Name: "waiting for a CPU", X: waitX, Y: wait, Class: "s4"})
	}
	v.charts = append(v.charts, template.HTML(charts.Chart{Title: "Host CPU (the machine running the generator)", YUnit: "cores, threads", XMax: xmax, Bands: bands, Height: 180,
		Lines: []charts.Line{
			{Name: "CPUs", X: x, Y: cpus, Class: "s0", Dash: true},
			{Name: "busy", X: x, Y: busy, Class: "s1"},
			{Name: "steal", X: x, Y: steal, Class: "s4"},
			{Name: "runnable threads", X: x, Y: runnable, Class: "s3"},
		}}.SVG()))
	lines := []charts.Line{}
	if len(memAvail) == len(x) {
		lines = append(lines, charts.Line{Name: "memory available", X: x, Y: memAvail, Class: "s6"})
	}
	if len(psiX) > 0 {
		lines = append(lines,
			charts.Line{Name: "CPU stalls (some)", X: psiX, Y: psiCPU, Class: "s1"},
			charts.Line{Name: "memory stalls (some)", X: psiX, Y: psiMemSome, Class: "s2"},
			charts.Line{Name: "memory stalls (full)", X: psiX, Y: psiMemFull, Class: "s4"})
	}
	if len(lines) > 0 {
		v.charts = append(v.charts, template.HTML(charts.Chart{Title: "Host memory and pressure", YUnit: "% (of memory, of time)", XMax: xmax, Bands: bands, Height: 180, Lines: lines}.SVG()))
	}
	return v
}
