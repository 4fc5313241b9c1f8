package report

import (
	"fmt"
	"html/template"
	"math"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
)

// countClasses colour engine counts on the overlaid curves.
var countClasses = [][4]string{{"s5", "s1", "s3", "s2"}, {"s6", "s4", "s7", "s4"}, {"s3", "s2", "s5", "s6"}, {"s7", "s6", "s1", "s7"}}

// countCampaigns are a campaign over engine counts as one curve per count,
// overlaid like compare's campaigns.
func countCampaigns(s *summary.Summary) []Campaign {
	var out []Campaign
	for i, p := range s.Scaling.Counts {
		one, ok := s.OfReplicas(p.Replicas)
		if !ok {
			continue
		}
		out = append(out, Campaign{Name: fmt.Sprintf("%d engine(s):", p.Replicas), S: one, Classes: countClasses[i%len(countClasses)]})
	}
	return out
}

// ScalingCharts are capacity and CPU-ms per exchange against the engine
// count (nil without a campaign over engine counts).
func ScalingCharts(s *summary.Summary) []template.HTML {
	sc := s.Scaling
	if sc == nil || len(sc.Counts) == 0 {
		return nil
	}
	var out []template.HTML
	if ch, ok := capacityChart(sc); ok {
		out = append(out, template.HTML(ch.SVG()))
	}
	return append(out, template.HTML(costChart(sc).SVG()))
}

// capacityChart: each count's capacity (whisker: the search's bracket) and
// the line N × capacity(base) ÷ base that perfect scaling would give.
func capacityChart(sc *summary.Scaling) (charts.XYChart, bool) {
	ch := charts.XYChart{Title: "Capacity against engines (whiskers: the search's bracket; dashed: perfect scaling from the smallest count)",
		XUnit: "engines", YUnit: "exchanges/s", Height: 220}
	got := charts.XYSeries{Name: "capacity", Class: "s1", Join: true, Markers: true}
	ideal := charts.XYSeries{Name: "N × capacity of one", Class: "s0", Join: true, Dash: true}
	per, top := 0.0, 0
	for _, p := range sc.Counts {
		c := p.Capacity
		if c == nil || c.Capacity <= 0 {
			continue
		}
		if per == 0 {
			per = c.Capacity / float64(p.Replicas)
		}
		hi := c.Upper
		if hi <= 0 {
			hi = c.Capacity
		}
		note := fmt.Sprintf("%d engine(s): %s", p.Replicas, c.Bracket())
		if p.Efficiency != nil {
			note += ", efficiency " + p.Efficiency.String()
		}
		got.Points = append(got.Points, charts.XYPoint{X: float64(p.Replicas), Y: c.Capacity, Lo: c.Capacity, Hi: hi, Note: note})
		top = max(top, p.Replicas)
	}
	if len(got.Points) == 0 {
		return ch, false
	}
	ideal.Points = []charts.XYPoint{{X: 0, Y: 0}, {X: float64(top), Y: per * float64(top)}}
	ch.Series = []charts.XYSeries{got, ideal}
	return ch, true
}

// costChart: each count's observed CPU-ms per exchange per stage and its
// marginal cost with the 95 % interval.
func costChart(sc *summary.Scaling) charts.XYChart {
	ch := charts.XYChart{Title: "CPU-ms per exchange against engines (observed per stage; marginal with its 95 % CI)",
		XUnit: "engines", YUnit: "CPU-ms", Height: 220}
	byRate := map[float64]*charts.XYSeries{}
	var rates []float64
	marginal := charts.XYSeries{Name: "marginal", Class: "s2", Join: true, Markers: true, Dash: true}
	for _, p := range sc.Counts {
		for _, st := range p.Stages {
			if st.CPUMs <= 0 {
				continue
			}
			s := byRate[st.TargetRPS]
			if s == nil {
				s = &charts.XYSeries{Name: "observed at " + units.StageLabel(st.TargetRPS), Class: fmt.Sprintf("s%d", 3+len(rates)%5), Join: true, Markers: true}
				byRate[st.TargetRPS] = s
				rates = append(rates, st.TargetRPS)
			}
			s.Points = append(s.Points, charts.XYPoint{X: float64(p.Replicas), Y: st.CPUMs, Note: fmt.Sprintf("%d engine(s) at %s", p.Replicas, units.StageLabel(st.TargetRPS))})
		}
		if m := p.Marginal; m != nil {
			marginal.Points = append(marginal.Points, charts.XYPoint{X: float64(p.Replicas), Y: m.Value, Lo: m.Range[0], Hi: m.Range[1],
				Note: fmt.Sprintf("%d engine(s): marginal %.3f (95%% CI %.3f–%.3f)", p.Replicas, m.Value, m.Range[0], m.Range[1])})
		}
	}
	for _, r := range rates {
		ch.Series = append(ch.Series, *byRate[r])
	}
	if len(marginal.Points) > 0 {
		ch.Series = append(ch.Series, marginal)
	}
	ymax := 0.0
	for _, s := range ch.Series {
		for _, p := range s.Points {
			ymax = math.Max(ymax, math.Max(p.Y, p.Hi))
		}
	}
	ch.YMax = ymax * 1.1
	return ch
}
