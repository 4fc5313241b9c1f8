// Package search is the capacity search seen from its evidence: how a
// campaign searches (Spec, recorded in its manifest), a finished run as a
// round of it (Round), and the search replayed over a campaign's runs
// (Replay), which a resume continues and a recomputed summary reports. The
// search's policy and arithmetic are collector/curve's.
package search

import (
	"math"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// Round is a finished run as the capacity search judges it: a run
// that could not finish is a hard failure, and a run whose figures are the
// generator's or the host's (an invalidating warning the thresholds do not
// allow; the engine CPU's own warning aside, latency does not depend on
// it) is invalid rather than broken.
func Round(r *stats.Run, th stats.Thresholds) curve.Round {
	rd := curve.Round{RunID: r.ID, P50Ms: r.LatencyMs.P50, P95Ms: r.LatencyMs.P95, P99Ms: r.LatencyMs.P99,
		SuccessRatio: r.SuccessRatio, Dropped: r.Dropped, Requests: r.Requests, AchievedRPS: r.AchievedRPS}
	if p, ok := summary.CostPoint(r); ok {
		rd.EngineCores = math.Round(p.Cores*10000) / 10000
	}
	if r.Status != stats.StatusDone {
		rd.Hard = string(r.Status)
		if r.Reason != "" {
			rd.Hard += ": " + r.Reason
		}
		return rd
	}
	for _, w := range r.Warnings {
		if w.Code.Invalidating() && w.Code != stats.WarnEngineCPUImplausible && !th.Allows(w.Code) {
			rd.Invalid = string(w.Code) + ": " + w.Detail
			break
		}
	}
	return rd
}

// Spec is how a capacity campaign searches, recorded in its manifest
// when it starts: a resume continues the search, and a summary recomputed
// from the evidence replays it over the runs.
type Spec struct {
	Policy    curve.Policy    `json:"policy"`
	Objective curve.Objective `json:"objective"`
	// Thresholds say which warnings invalidate a round (Round).
	Thresholds stats.Thresholds `json:"thresholds"`
}

// Replay is spec's search over runs, the campaign's runs in the
// order they ran: the search is a function of its finished rounds, so the
// probes replay until a run the search did not ask for, an interrupted
// one, or one still under way. nil when spec cannot describe a search (a
// manifest may be hostile).
func Replay(spec Spec, runs []*stats.Run) *curve.Result {
	if !spec.Policy.Finite() {
		return nil
	}
	s := curve.NewSearch(spec.Policy, spec.Objective)
	for _, r := range runs {
		if r == nil || r.Sanity {
			continue
		}
		step := s.Next()
		if step.Done || r.TargetRPS != step.Rate || (r.Status != stats.StatusDone && r.Status != stats.StatusFailed) {
			break
		}
		s.Observe(Round(r, spec.Thresholds))
	}
	res := s.Result()
	return &res
}

// Project sets the summary's projection for rate (0: none) from its cost
// fit and, when a capacity was searched, the engine's capacity under its
// objective (tokex run and capacity --project).
func Project(s *summary.Summary, rate float64) {
	s.Projection = nil
	if rate <= 0 || s.Cost == nil {
		return
	}
	capacity, objective := 0.0, ""
	if s.Capacity != nil && s.Capacity.Capacity > 0 {
		capacity, objective = s.Capacity.Capacity, s.Capacity.Objective.String()
		if s.Scaling != nil && s.Scaling.Base > 1 {
			capacity /= float64(s.Scaling.Base) // one engine's share of the base count's
		}
	}
	// A campaign over engine counts measured how engines add up.
	var out []curve.ScaleOut
	if so, ok := s.Scaling.ScaleOut(); ok {
		out = append(out, so)
	}
	if s.Cost.Curve.Bent() {
		s.Projection = curve.ProjectCurve(s.Cost.Curve, rate, capacity, objective, out...)
		return
	}
	s.Projection = curve.Project(s.Cost.Fit, rate, capacity, objective, out...)
}

// Replays replays a campaign's capacity search: one over all its runs, or
// for a campaign over engine counts one per count over that count's runs
// (nil map without counts).
func Replays(spec Spec, runs []*stats.Run) (*curve.Result, map[int]*curve.Result) {
	by := map[int][]*stats.Run{}
	for _, r := range runs {
		if r != nil && r.Replicas > 0 {
			by[r.Replicas] = append(by[r.Replicas], r)
		}
	}
	if len(by) == 0 {
		return Replay(spec, runs), nil
	}
	out := map[int]*curve.Result{}
	for n, rs := range by {
		out[n] = Replay(spec, rs)
	}
	return nil, out
}
