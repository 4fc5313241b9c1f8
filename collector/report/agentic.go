package report

import (
	"fmt"
	"html/template"
	"math"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
)

// seriesClasses colour one series per stage (s0 is the engine at rest's).
var seriesClasses = []string{"s1", "s3", "s2", "s5", "s6", "s7", "s4"}

// AgenticCharts are the charts of the section on chains, actor tokens and
// the premium (issue 30): against the hop, each hop's p95 (the reported
// run) and its CPU-ms (mean of the rounds, the 95 % interval as the
// whisker), one series per stage; for a mix, each grant's p95 against the
// rate. None for a campaign of single exchanges.
func AgenticCharts(s *summary.Summary) []template.HTML {
	a := s.Agentic
	if a == nil {
		return nil
	}
	var out []template.HTML
	for _, ch := range []charts.XYChart{hopLatencyChart(a), hopCPUChart(a), kindLatencyChart(a)} {
		if hasPoints(ch) {
			out = append(out, template.HTML(ch.SVG()))
		}
	}
	return out
}

func hasPoints(ch charts.XYChart) bool {
	for _, s := range ch.Series {
		if len(s.Points) > 0 {
			return true
		}
	}
	return false
}

func hopLatencyChart(a *summary.Agentic) charts.XYChart {
	ch := charts.XYChart{Title: "Each hop's latency (reported run per stage: p95 marked, p50 to p99 as the whisker)", XUnit: "hop", YUnit: "ms", Height: 220, XStep: 1}
	for i, st := range a.Stages {
		s := charts.XYSeries{Name: units.StageLabel(st.TargetRPS) + " p95", Class: seriesClasses[i%len(seriesClasses)], Join: true, Markers: true}
		for _, h := range st.Hops {
			if h.Requests > 0 {
				s.Points = append(s.Points, charts.XYPoint{X: float64(h.Hop), Y: h.P95Ms, Lo: h.P50Ms, Hi: h.P99Ms,
					Note: fmt.Sprintf("p50 %.3g ms, p99 %.3g ms, %.0f token bytes", h.P50Ms, h.P99Ms, h.TokenBytes)})
			}
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// hopCPUChart draws the interval's part above zero; the tooltip gives it
// whole (a hop's CPU is a difference of two runs' and may dip below).
func hopCPUChart(a *summary.Agentic) charts.XYChart {
	ch := charts.XYChart{Title: "Each hop's engine CPU (mean of the rounds; whisker: its 95 % interval)", XUnit: "hop", YUnit: "CPU-ms", Height: 220, XStep: 1}
	for i, st := range a.Stages {
		s := charts.XYSeries{Name: units.StageLabel(st.TargetRPS), Class: seriesClasses[i%len(seriesClasses)], Join: true, Markers: true}
		for _, h := range st.Hops {
			iv := h.CPUMs
			if iv == nil || !iv.Shown() || math.IsNaN(iv.Mean) {
				continue
			}
			s.Points = append(s.Points, charts.XYPoint{X: float64(h.Hop), Y: math.Max(iv.Mean, 0), Lo: math.Max(iv.CI[0], 0), Hi: math.Max(iv.CI[1], 0),
				Note: fmt.Sprintf("%.3f CPU-ms, 95 %% CI %.3f–%.3f over %d rounds", iv.Mean, iv.CI[0], iv.CI[1], iv.N)})
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

func kindLatencyChart(a *summary.Agentic) charts.XYChart {
	ch := charts.XYChart{Title: "Each grant of the mix: p95 against rate (reported run per stage)", XUnit: "arrivals/s (target rate)", YUnit: "ms", Height: 220}
	byKind := map[string]int{}
	for _, st := range a.Stages {
		for _, k := range st.Kinds {
			if k.Requests == 0 {
				continue
			}
			i, ok := byKind[string(k.Kind)]
			if !ok {
				i = len(ch.Series)
				byKind[string(k.Kind)] = i
				ch.Series = append(ch.Series, charts.XYSeries{Name: string(k.Kind), Class: seriesClasses[i%len(seriesClasses)], Join: true, Markers: true})
			}
			ch.Series[i].Points = append(ch.Series[i].Points, charts.XYPoint{X: st.TargetRPS, Y: k.LatencyMs.P95,
				Note: fmt.Sprintf("%d requests, success %.2f %%", k.Requests, 100*k.SuccessRatio)})
		}
	}
	return ch
}
