package stats

import (
	"sort"

	"github.com/tokex-dev/tokex/collector/curve"
)

// CurveModel is the cost curve as a dashboard draws it while a campaign
// runs: a point per finished run (latency and engine cores against rate),
// the marginal-cost fit so far, and a capacity search's bracket narrowing.
// Feed it event.RunFinished's Stats (AddRun) and event.Search (SetSearch);
// it is what the report's curve shows, live.
type CurveModel struct {
	Objective float64 // the p95 limit, ms (0: unknown)
	runs      []*Run
	search    *curve.Result
	next      float64
}

// CurvePoint is one finished run on the curve.
type CurvePoint struct {
	Run            string
	TargetRPS      float64
	Rate           float64 // served (0: engine CPU unknown)
	P50, P95, P99  float64
	Cores          float64 // engine cores (0: unknown)
	Passed, Broken bool    // Broken: a finished run that failed its thresholds
}

// AddRun files a finished run (the sanity run and unfinished runs aside).
func (m *CurveModel) AddRun(r *Run) {
	if r == nil || r.Sanity || r.Status != StatusDone {
		return
	}
	for i, x := range m.runs {
		if x.ID == r.ID {
			m.runs[i] = r
			return
		}
	}
	m.runs = append(m.runs, r)
}

// SetSearch records a capacity search's state and the rate it tries next
// (0: done).
func (m *CurveModel) SetSearch(r curve.Result, next float64) { m.search, m.next = &r, next }

// Points are the runs by target rate, then round.
func (m *CurveModel) Points() []CurvePoint {
	out := make([]CurvePoint, 0, len(m.runs))
	for _, r := range m.runs {
		p := CurvePoint{Run: r.ID, TargetRPS: r.TargetRPS, P50: r.LatencyMs.P50, P95: r.LatencyMs.P95, P99: r.LatencyMs.P99,
			Passed: r.ThresholdsPassed, Broken: !r.ThresholdsPassed}
		if c, ok := CostPoint(r); ok {
			p.Rate, p.Cores = c.Rate, c.Cores
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].TargetRPS < out[j].TargetRPS })
	return out
}

// Fit is the marginal-cost fit over the runs so far (nil: none yet).
func (m *CurveModel) Fit() *curve.Fit { return MarginalCost(m.runs) }

// Curve is the cost curve over the runs so far (nil: fewer than two rates
// or three runs with engine CPU).
func (m *CurveModel) Curve() *curve.Curve {
	_, c := CostCurve(m.runs)
	return c
}

// Search is the capacity search so far (nil: not a search) and its next rate.
func (m *CurveModel) Search() (*curve.Result, float64) { return m.search, m.next }

// Bracket is the search's bracket ("≥ 610/s, < 640/s"), "" when none.
func (m *CurveModel) Bracket() string {
	if m.search == nil {
		return ""
	}
	return m.search.Bracket()
}
