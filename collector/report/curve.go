package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// Campaign is one campaign's curve on a chart: a name for the legend and
// the series' colours.
type Campaign struct {
	Name string
	S    *summary.Summary
	// Classes: p50, p95, p99 and cores series (s1…s7).
	Classes [4]string
}

// CurveCharts are the campaign-level charts of one or more campaigns (an
// overlay for compare): latency against rate with the spread between
// rounds as whiskers and the objective, and engine cores against rate with
// the fitted line and the engine at rest; the capacity bracket marked.
func CurveCharts(cs ...Campaign) []template.HTML {
	if len(cs) == 0 || !hasCurve(cs) {
		return nil
	}
	return []template.HTML{template.HTML(latencyCurve(cs).SVG()), template.HTML(coresCurve(cs).SVG())}
}

func hasCurve(cs []Campaign) bool {
	for _, c := range cs {
		if len(c.S.Stages) > 1 || c.S.Capacity != nil {
			return true
		}
	}
	return false
}

func latencyCurve(cs []Campaign) charts.XYChart {
	ch := charts.XYChart{Title: "Latency against rate (reported run; whiskers: spread between rounds)", XUnit: "exchanges/s (target rate)", YUnit: "ms"}
	obj := cs[0].S.Thresholds.P95Ms
	if obj > 0 {
		ch.Refs = append(ch.Refs, charts.Ref{Y: obj, Label: fmt.Sprintf("objective p95 < %g ms", obj), Class: "s4"})
	}
	if k := cs[0].S.Capacity; k != nil && k.Objective.P99Ms > 0 {
		ch.Refs = append(ch.Refs, charts.Ref{Y: k.Objective.P99Ms, Label: fmt.Sprintf("objective p99 < %g ms", k.Objective.P99Ms), Class: "s4"})
	}
	// A broken probe's seconds of backlog would flatten the rest: clip at
	// three times the objective, or the highest passing p99.
	clip := 0.0
	for _, c := range cs {
		for _, st := range c.S.Stages {
			if r := st.Reported(); r != nil && st.ThresholdsPassed {
				clip = math.Max(clip, r.LatencyMs.P99*1.2)
			}
		}
		ch.Bands = append(ch.Bands, capacityBand(c)...)
	}
	ch.YMax = math.Max(clip, 3*obj)
	for _, c := range cs {
		for i, q := range []struct {
			name string
			get  func(stats.Latency) float64
		}{{"p50", func(l stats.Latency) float64 { return l.P50 }}, {"p95", func(l stats.Latency) float64 { return l.P95 }}, {"p99", func(l stats.Latency) float64 { return l.P99 }}} {
			s := charts.XYSeries{Name: legend(c, q.name, len(cs)), Class: c.Classes[i], Join: true, Markers: true, Dash: i != 1}
			for _, st := range c.S.Stages {
				if p, ok := stagePoint(c.S, st, q.get); ok {
					s.Points = append(s.Points, p)
				}
			}
			ch.Series = append(ch.Series, s)
		}
	}
	return ch
}

// stagePoint is the reported run's figure at the stage's rate, with the
// lowest and highest of its finished rounds as the whisker, noted with
// the stage's verdict (a probe's: the search's).
func stagePoint(s *summary.Summary, st *summary.Stage, get func(stats.Latency) float64) (charts.XYPoint, bool) {
	r := st.Reported()
	if r == nil || r.Requests == 0 {
		return charts.XYPoint{}, false
	}
	p := charts.XYPoint{X: st.TargetRPS, Y: get(r.LatencyMs), Lo: math.Inf(1), Hi: math.Inf(-1), Note: doc.VerdictText(s, st)}
	for _, x := range st.Runs {
		if x.Status == stats.StatusDone && x.Requests > 0 {
			v := get(x.LatencyMs)
			p.Lo, p.Hi = math.Min(p.Lo, v), math.Max(p.Hi, v)
		}
	}
	return p, true
}

func coresCurve(cs []Campaign) charts.XYChart {
	ch := charts.XYChart{Title: "Engine cores against rate (one point per run; dashed: the fit; at 0: the engine at rest)", XUnit: "exchanges/s (served)", YUnit: "cores"}
	for _, c := range cs {
		ch.Bands = append(ch.Bands, capacityBand(c)...)
		runs := charts.XYSeries{Name: legend(c, "runs", len(cs)), Class: c.Classes[3], Markers: true}
		var all []*stats.Run
		for _, st := range c.S.Stages {
			all = append(all, st.Runs...)
		}
		slices.SortFunc(all, func(a, b *stats.Run) int { return a.Index - b.Index })
		cost := c.S.Cost
		leftOut := map[string]bool{}
		if cost != nil {
			for _, l := range cost.LeftOut {
				leftOut[l.Run] = true
			}
		}
		ceiling := charts.XYSeries{Name: legend(c, "runs at the ceiling, left out of the fit", len(cs)), Class: "s0", Markers: true}
		maxRate := 0.0
		for _, r := range all {
			if p, ok := summary.CostPoint(r); ok {
				pt := charts.XYPoint{X: p.Rate, Y: p.Cores, Note: r.ID}
				if leftOut[r.ID] {
					ceiling.Points = append(ceiling.Points, pt)
					continue
				}
				runs.Points = append(runs.Points, pt)
				maxRate = math.Max(maxRate, p.Rate)
			}
		}
		ch.Series = append(ch.Series, runs)
		if len(ceiling.Points) > 0 {
			ch.Series = append(ch.Series, ceiling)
		}
		if cost == nil {
			continue
		}
		if cost.Curve.Bent() {
			ch.Series = append(ch.Series, segmentSeries(c, len(cs))...)
		} else if cost.Fit.OK() {
			f := cost.Fit
			ch.Series = append(ch.Series, charts.XYSeries{Name: legend(c, fmt.Sprintf("fit %.3f CPU-ms/exchange", f.MarginalCPUMs), len(cs)), Class: c.Classes[3], Join: true, Dash: true,
				Points: []charts.XYPoint{{X: 0, Y: f.FixedCores}, {X: maxRate, Y: f.Cores(maxRate)}}})
		}
		if cost.Idle != nil {
			ch.Series = append(ch.Series, charts.XYSeries{Name: legend(c, "at rest", len(cs)), Class: "s0", Markers: true,
				Points: []charts.XYPoint{{X: 0, Y: cost.Idle.Cores, Note: "the engine at rest"}}})
		}
	}
	return ch
}

// segmentSeries draws a bent cost curve: each segment's straight line over
// the rates it holds for, named by its marginal cost.
func segmentSeries(c Campaign, n int) []charts.XYSeries {
	var out []charts.XYSeries
	for _, s := range c.S.Cost.Curve.Segments {
		if s.Marginal == nil {
			continue
		}
		name := fmt.Sprintf("%s: %.3f CPU-ms/exchange", curve.RangeLabel(s.From, s.To), s.Marginal.CPUMs)
		out = append(out, charts.XYSeries{Name: legend(c, name, n), Class: c.Classes[3], Join: true, Dash: true,
			Points: []charts.XYPoint{{X: s.From, Y: s.Cores(s.From)}, {X: s.To, Y: s.Cores(s.To)}}})
	}
	return out
}

// capacityBand marks a search's bracket.
func capacityBand(c Campaign) []charts.Band {
	k := c.S.Capacity
	if k == nil || k.Capacity <= 0 {
		return nil
	}
	hi := k.Upper
	if hi <= 0 {
		hi = k.Capacity
	}
	return []charts.Band{{X0: k.Capacity, X1: hi, Label: legend(c, "capacity "+k.Bracket(), 1)}}
}

func legend(c Campaign, what string, n int) string {
	if n > 1 {
		return c.Name + " " + what
	}
	return what
}

// periodLine is a run's latency wave in words, or "".
func periodLine(p *curve.Period) string {
	if p == nil {
		return ""
	}
	return p.Line()
}
