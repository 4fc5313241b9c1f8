package summary

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/units"
	"github.com/tokex-dev/tokex/collector/usage"
)

// ScalingDefinition states what summary.json "scaling" holds.
const ScalingDefinition = "per engine count N (the workload scaled to N, each count's runs after its engines were Ready): " +
	"efficiency = (capacity(N) ÷ N) ÷ (capacity(B) ÷ B), B the smallest count measured (1: capacity(N) ÷ (N × capacity(1))), " +
	"from each count's capacity search, its interval from the searches' brackets (capacity ≥ the highest rate that met the objective, " +
	"< the lowest that broke it); per_core = responses ÷ measured seconds ÷ engine cores at the top (the capacity probe, else the highest stage), " +
	"its range over that rate's rounds; balance = max ÷ mean of the engines' cores (1: even)."

// Scaling is a campaign over engine counts, count by count.
type Scaling struct {
	Definition string       `json:"definition"`
	Base       int          `json:"base"` // the smallest count: efficiency is relative to it
	Counts     []ScalePoint `json:"counts"`
	// Limit is what bounds the measurement besides the server: the local
	// host's cores and how the engines were pinned.
	Limit string `json:"limit,omitempty"`
}

// Range is a figure with the interval or range it carries (a bound of 0:
// unknown on that side).
type Range struct {
	Value float64    `json:"value"`
	Range [2]float64 `json:"range"`
}

// String is "0.93 (0.88–0.99)", with "?" for an unknown bound.
func (r Range) String() string {
	b := func(v float64) string {
		if v <= 0 {
			return "?"
		}
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.3g (%s–%s)", r.Value, b(r.Range[0]), b(r.Range[1]))
}

// ScalePoint is one engine count's figures.
type ScalePoint struct {
	Replicas int `json:"replicas"`
	Runs     int `json:"runs"` // finished counted runs
	// Capacity is the count's capacity search (nil: it ran stages).
	Capacity *curve.Result `json:"capacity,omitempty"`
	// Marginal is the slope of the count's straight-line cost fit
	// (CPU-ms per exchange, 95 % CI); nil when the fit is poor.
	Marginal *Range `json:"marginal_cpu_ms,omitempty"`
	// Stages are the count's stages: p95, observed CPU-ms per exchange
	// and engine balance of each reported run.
	Stages []ScaleStage `json:"stages"`
	// At is the rate of the top (the capacity probe, else the highest
	// stage) where PerCore, Balance, Pods and Connections are read.
	At      float64 `json:"at_rps,omitempty"`
	PerCore *Range  `json:"per_core,omitempty"`
	// Balance is max ÷ mean of the engines' cores at the top; Pods each
	// engine's cores in its reported run.
	Balance     float64             `json:"balance,omitempty"`
	Pods        []usage.PodCPU      `json:"pods,omitempty"`
	Connections *sample.Connections `json:"connections,omitempty"`
	// Efficiency is (capacity(N) ÷ N) ÷ (capacity(base) ÷ base), with the
	// interval the searches' brackets allow; nil without both capacities.
	Efficiency *Range `json:"efficiency,omitempty"`
	// PerCoreRatio is PerCore ÷ the base count's: the CPU a served
	// exchange costs at N against at the base (1: no overhead of scale).
	PerCoreRatio float64 `json:"per_core_ratio,omitempty"`
}

// ScaleStage is one stage of an engine count.
type ScaleStage struct {
	TargetRPS float64 `json:"target_rps"`
	P95Ms     float64 `json:"p95_ms"`
	CPUMs     float64 `json:"cpu_ms_per_exchange,omitempty"`
	Balance   float64 `json:"balance,omitempty"`
	Passed    bool    `json:"thresholds_passed"`
}

// baseReplicas is the smallest engine count of the runs (0: none has one).
func baseReplicas(runs []*stats.Run) int {
	base := 0
	for _, r := range runs {
		if r.Replicas > 0 && (base == 0 || r.Replicas < base) {
			base = r.Replicas
		}
	}
	return base
}

// ofReplicas are the runs of one engine count.
func ofReplicas(runs []*stats.Run, n int) []*stats.Run {
	var out []*stats.Run
	for _, r := range runs {
		if r.Replicas == n {
			out = append(out, r)
		}
	}
	return out
}

// buildScaling fills the summary's scaling section (nil without engine counts).
func (s *Summary) buildScaling(runs []*stats.Run, base int) {
	s.Scaling = nil
	if base == 0 {
		return
	}
	var counts []int
	for _, r := range runs {
		if r.Replicas > 0 && !slices.Contains(counts, r.Replicas) {
			counts = append(counts, r.Replicas)
		}
	}
	sort.Ints(counts)
	sc := &Scaling{Definition: ScalingDefinition, Base: base, Limit: scaleLimit(s.Scales)}
	for _, n := range counts {
		sc.Counts = append(sc.Counts, s.scalePoint(ofReplicas(runs, n), n))
	}
	sc.relate()
	s.Scaling = sc
	if w, ok := hostBound(runs, sc); ok {
		s.Warnings = append(s.Warnings, w)
	}
}

// machineCodes say that a run's figures are the machine's as well as the
// server's.
var machineCodes = []stats.WarningCode{stats.WarnGeneratorLate, stats.WarnGeneratorStarved, stats.WarnHostSaturated}

// hostBound is the scaling_host_bound warning when an efficiency was
// computed from capacities whose bracketing probes (the rate found and
// the one that broke) carried a machine warning the thresholds allowed.
func hostBound(runs []*stats.Run, sc *Scaling) (stats.Warning, bool) {
	if !slices.ContainsFunc(sc.Counts, func(p ScalePoint) bool { return p.Replicas != sc.Base && p.Efficiency != nil }) {
		return stats.Warning{}, false
	}
	var parts []string
	for _, p := range sc.Counts {
		if p.Capacity == nil || p.Capacity.Capacity <= 0 {
			continue
		}
		var codes []string
		for _, r := range ofReplicas(runs, p.Replicas) {
			if r.Sanity || (r.TargetRPS != p.Capacity.Capacity && r.TargetRPS != p.Capacity.Upper) {
				continue
			}
			for _, w := range r.Warnings {
				if slices.Contains(machineCodes, w.Code) && !slices.Contains(codes, string(w.Code)) {
					codes = append(codes, string(w.Code))
				}
			}
		}
		if len(codes) > 0 {
			sort.Strings(codes)
			parts = append(parts, fmt.Sprintf("%d engine(s), probes at %s: %s", p.Replicas, bracketRates(p.Capacity), strings.Join(codes, ", ")))
		}
	}
	if len(parts) == 0 {
		return stats.Warning{}, false
	}
	return stats.Warn(stats.WarnScalingHostBound, "", "the capacities the scaling efficiency compares were measured while this machine, not only the engines, set the figures (warnings the thresholds allowed): "+
		strings.Join(parts, "; ")+": the efficiency is this host's as much as the server's"), true
}

// bracketRates are the rates of a search's bracket: "219/s and 225/s".
func bracketRates(c *curve.Result) string {
	if c.Upper > 0 {
		return units.StageLabel(c.Capacity) + " and " + units.StageLabel(c.Upper)
	}
	return units.StageLabel(c.Capacity)
}

// scalePoint is one count's figures from its runs.
func (s *Summary) scalePoint(runs []*stats.Run, n int) ScalePoint {
	p := ScalePoint{Replicas: n, Capacity: s.Capacities[n]}
	for _, st := range s.Stages {
		if st.Replicas != n {
			continue
		}
		p.Runs += countDone(st.Runs)
		r := st.Reported()
		if r == nil {
			continue
		}
		ss := ScaleStage{TargetRPS: st.TargetRPS, P95Ms: r.LatencyMs.P95, Balance: r.EngineBalance, Passed: st.ThresholdsPassed}
		if r.EngineCPU != nil {
			ss.CPUMs = r.EngineCPU.CPUMsPerExchange
		}
		p.Stages = append(p.Stages, ss)
	}
	kept, _ := AtCeiling(runs, p.Capacity)
	if f, _ := CostCurve(kept); f.OK() {
		p.Marginal = &Range{Value: f.MarginalCPUMs, Range: f.MarginalCPUMsCI}
	}
	top := topRuns(runs, p.Capacity)
	if len(top) == 0 {
		return p
	}
	p.At = top[0].TargetRPS
	var per []float64
	for _, r := range top {
		if pt, ok := CostPoint(r); ok && pt.Cores > 0 {
			per = append(per, pt.Rate/pt.Cores)
		}
	}
	if len(per) > 0 {
		sort.Float64s(per)
		p.PerCore = &Range{Value: stats.Round3(median(per)), Range: [2]float64{stats.Round3(per[0]), stats.Round3(per[len(per)-1])}}
	}
	rep := top[len(top)/2]
	if id := MedianRun(top); id != "" {
		for _, r := range top {
			if r.ID == id {
				rep = r
			}
		}
	}
	p.Balance, p.Pods, p.Connections = rep.EngineBalance, rep.EnginePods, rep.Connections
	return p
}

// topRuns are the finished runs at the top of a count: those of the rate
// its search found (the capacity), else of its highest stage.
func topRuns(runs []*stats.Run, capa *curve.Result) []*stats.Run {
	at := func(rate float64) []*stats.Run {
		var out []*stats.Run
		for _, r := range runs {
			if !r.Sanity && r.Status == stats.StatusDone && r.TargetRPS == rate {
				out = append(out, r)
			}
		}
		return out
	}
	if capa != nil && capa.Capacity > 0 {
		if out := at(capa.Capacity); len(out) > 0 {
			return out
		}
	}
	rate := 0.0
	for _, r := range runs {
		if !r.Sanity && r.Status == stats.StatusDone && r.TargetRPS > rate {
			rate = r.TargetRPS
		}
	}
	return at(rate)
}

func countDone(runs []*stats.Run) int {
	n := 0
	for _, r := range runs {
		if r.Status == stats.StatusDone {
			n++
		}
	}
	return n
}

func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// relate sets each count's efficiency and per-core ratio against the base.
func (sc *Scaling) relate() {
	var b *ScalePoint
	for i := range sc.Counts {
		if sc.Counts[i].Replicas == sc.Base {
			b = &sc.Counts[i]
		}
	}
	if b == nil {
		return
	}
	for i := range sc.Counts {
		p := &sc.Counts[i]
		if p.PerCore != nil && b.PerCore != nil && b.PerCore.Value > 0 {
			p.PerCoreRatio = stats.Round3(p.PerCore.Value / b.PerCore.Value)
		}
		p.Efficiency = efficiency(p.Capacity, b.Capacity, p.Replicas, sc.Base)
	}
}

// efficiency is (capacity(n) ÷ n) ÷ (capacity(b) ÷ b) with the interval
// the two brackets allow: capacity lies in [Capacity, Upper).
func efficiency(cn, cb *curve.Result, n, b int) *Range {
	if cn == nil || cb == nil || cn.Capacity <= 0 || cb.Capacity <= 0 {
		return nil
	}
	per := func(c float64, k int) float64 { return c / float64(k) }
	e := &Range{Value: stats.Round3(per(cn.Capacity, n) / per(cb.Capacity, b))}
	if cb.Upper > 0 {
		e.Range[0] = stats.Round3(per(cn.Capacity, n) / per(cb.Upper, b))
	}
	if cn.Upper > 0 {
		e.Range[1] = stats.Round3(per(cn.Upper, n) / per(cb.Capacity, b))
	}
	return e
}

// scaleLimit says what bounded a local scaling campaign: the host's cores
// and how the engines were pinned ("" for kube).
func scaleLimit(scales []Scale) string {
	host, most, pinned, shared := 0, 0, true, false
	for _, s := range scales {
		if s.Restore || s.HostCPUs == 0 {
			continue
		}
		host, most = s.HostCPUs, max(most, s.Replicas)
		pinned = pinned && len(s.CPUs) == len(s.Engines) && len(s.CPUs) > 0
		for _, n := range s.Notes {
			shared = shared || strings.Contains(n, "share")
		}
	}
	if host == 0 {
		return ""
	}
	out := fmt.Sprintf("this host's %d cores, shared with the load generator", host)
	switch {
	case pinned:
		out += fmt.Sprintf("; each engine pinned to its own CPUs (%d engines at most)", most)
	case shared || most > host:
		out += fmt.Sprintf("; %d engines on %d cores: not pinned, the engines share cores, and the efficiency measures the host as much as the server", most, host)
	default:
		out += "; the engines were not pinned"
	}
	return out
}

// ScaleOut is the measured scale-out for a projection: how many engines of
// the base count's size serve a rate, from each count's capacity; beyond
// the largest count measured its efficiency is assumed to hold. ok is
// false without two counts' capacities.
func (sc *Scaling) ScaleOut() (curve.ScaleOut, bool) {
	if sc == nil {
		return curve.ScaleOut{}, false
	}
	type pt struct {
		n   int
		cap float64
		eff float64
	}
	var pts []pt
	for _, p := range sc.Counts {
		if p.Capacity != nil && p.Capacity.Capacity > 0 && p.Efficiency != nil {
			pts = append(pts, pt{p.Replicas, p.Capacity.Capacity, p.Efficiency.Value})
		}
	}
	if len(pts) < 2 {
		return curve.ScaleOut{}, false
	}
	perEngine := pts[0].cap / float64(pts[0].n)
	last := pts[len(pts)-1]
	eff := func(n int) float64 {
		for i, p := range pts {
			switch {
			case p.n == n:
				return p.eff
			case p.n > n && i > 0: // between two measured counts
				a := pts[i-1]
				return a.eff + (p.eff-a.eff)*float64(n-a.n)/float64(p.n-a.n)
			case p.n > n:
				return p.eff
			}
		}
		return last.eff
	}
	engines := func(rate float64) int {
		for n := 1; n <= 100000; n++ {
			if float64(n)*perEngine*eff(n) >= rate*(1-1e-9) {
				return n
			}
		}
		return 100000
	}
	var ms []string
	for _, p := range pts {
		ms = append(ms, fmt.Sprintf("%d: %.2f", p.n, p.eff))
	}
	how := fmt.Sprintf("engines scale out with the measured efficiency (%s; %s per engine at %d), interpolated between the measured counts and held at %.2f beyond %d",
		strings.Join(ms, ", "), RateLabel(perEngine), pts[0].n, last.eff, last.n)
	return curve.ScaleOut{Engines: engines, Assumption: how, Efficiency: eff}, true
}

// RateLabel is curve's rate label (1 decimal below 10/s).
func RateLabel(v float64) string { return curve.RateLabel(math.Round(v*10) / 10) }

// OfReplicas is the summary of one engine count of a campaign over engine
// counts, as if it had measured that count alone (its stages without the
// count, so that two counts compare rate by rate: tokex compare DIR@1
// DIR@2); its id carries the count ("ID@2"). ok is false when the campaign
// has no such count.
func (s *Summary) OfReplicas(n int) (*Summary, bool) {
	var runs []*stats.Run
	for _, st := range s.Stages {
		if st.Replicas != n {
			continue
		}
		for _, r := range st.Runs {
			c := *r
			c.Replicas = 0
			runs = append(runs, &c)
		}
	}
	if len(runs) == 0 {
		return nil, false
	}
	out := &Summary{CampaignID: fmt.Sprintf("%s@%d", s.CampaignID, n), Name: s.Name + units.EnginesLabel(n), Tool: s.Tool, Driver: s.Driver,
		Target: s.Target, Status: s.Status, Reason: s.Reason, Started: s.Started, Finished: s.Finished, Thresholds: s.Thresholds}
	if s.Scaling != nil {
		for _, p := range s.Scaling.Counts {
			if p.Replicas == n {
				out.Capacity = p.Capacity
			}
		}
	}
	BuildSummary(out, runs, s.Status == CampaignDone)
	return out, true
}
