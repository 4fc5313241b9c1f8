// Package compare sets two campaigns side by side, stage by stage, with a
// verdict that respects noise: a difference no larger than the spread
// between rounds of the same stage is "within noise", not a change.
package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/table"
	"github.com/tokex-dev/tokex/collector/units"
)

// Metric is one compared figure of a stage.
type Metric struct {
	Name    string  `json:"name"` // p50, p95, p99, success, cpu_ms_per_exchange
	Unit    string  `json:"unit"`
	A       float64 `json:"a"`
	B       float64 `json:"b"`
	Diff    float64 `json:"diff"`     // B − A
	DiffPct float64 `json:"diff_pct"` // relative to A
	Noise   float64 `json:"noise"`    // largest spread between rounds in A or B
	Rounds  [2]int  `json:"rounds"`   // finished rounds in A and B
	Verdict string  `json:"verdict"`  // within noise, B lower, B higher, noise unknown
	Missing bool    `json:"missing,omitempty"`
}

// Stage is one target rate present in either campaign.
type Stage struct {
	TargetRPS float64 `json:"target_rps"`
	// Replicas is the stages' engine count (campaigns over engine counts).
	Replicas int    `json:"replicas,omitempty"`
	Only     string `json:"only,omitempty"` // "A" or "B" when the stage is in one campaign only
	// RunsA and RunsB say how many of the stage's runs passed in A and B
	// ("✓ 3/3 passed", "✗ 1/3 failed"): a failed run's figures are not the server's.
	RunsA   string   `json:"runs_a,omitempty"`
	RunsB   string   `json:"runs_b,omitempty"`
	Metrics []Metric `json:"metrics,omitempty"`
}

// Result is the whole comparison.
type Result struct {
	A      string  `json:"a"`
	B      string  `json:"b"`
	Stages []Stage `json:"stages"`
	// Cost compares the marginal costs (engine cores fitted against rate)
	// and the capacities, when either campaign has them.
	Cost *Cost `json:"marginal_cost,omitempty"`
	// Workloads say what each campaign's arrivals did when either ran
	// chains, a baseline or a mix (the figures are per request: chains of
	// different lengths are not the same measurement); Premiums are their
	// exchange premiums over the baseline.
	Workloads [2]string `json:"workloads,omitzero"`
	Premiums  [2]string `json:"premiums,omitzero"`
}

// Cost is the marginal-cost difference B − A with its 95 % interval.
type Cost struct {
	A          *curve.Fit       `json:"a,omitempty"`
	B          *curve.Fit       `json:"b,omitempty"`
	Difference curve.Difference `json:"difference"`
	CapacityA  string           `json:"capacity_a,omitempty"`
	CapacityB  string           `json:"capacity_b,omitempty"`
}

// Line states the difference in words.
func (c *Cost) Line() string {
	d := c.Difference
	s := "marginal cost B − A: " + d.Verdict
	if c.A.OK() && c.B.OK() {
		s = fmt.Sprintf("marginal cost: A %.3f, B %.3f CPU-ms per exchange; B − A %+.3f (95%% CI %+.3f to %+.3f): %s",
			c.A.MarginalCPUMs, c.B.MarginalCPUMs, d.CPUMs, d.CI[0], d.CI[1], d.Verdict)
	}
	if c.CapacityA != "" || c.CapacityB != "" {
		s += fmt.Sprintf("; capacity A %s, B %s", or(c.CapacityA, "not searched"), or(c.CapacityB, "not searched"))
	}
	return s
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func costOf(a, b *summary.Summary) *Cost {
	if a.Cost == nil && b.Cost == nil && a.Capacity == nil && b.Capacity == nil {
		return nil
	}
	c := &Cost{}
	if a.Cost != nil {
		c.A = a.Cost.Fit
	}
	if b.Cost != nil {
		c.B = b.Cost.Fit
	}
	c.Difference = curve.Diff(c.A, c.B)
	if bent := bentSide(a, b); bent != "" {
		c.Difference = curve.Difference{Verdict: "not comparable: " + bent + "'s marginal cost changes with the rate (no single straight line holds): compare the bands of marginal_cost.curve"}
	} else if old := ceilingFitted(a, b); old != "" {
		c.Difference = curve.Difference{Verdict: "not comparable: " + old + "'s summary.json was written by a tokex that fitted a capacity search's broken probes too (the other left them out, marginal_cost.left_out): fit both alike"}
	}
	if a.Capacity != nil {
		c.CapacityA = a.Capacity.Bracket()
	}
	if b.Capacity != nil {
		c.CapacityB = b.Capacity.Bracket()
	}
	return c
}

// ceilingFitted names the campaign whose summary.json fitted a capacity
// search's broken probes when the other's left them out (a summary
// written before they were): "" when both were fitted alike.
func ceilingFitted(a, b *summary.Summary) string {
	leftOut := func(s *summary.Summary) bool { return s.Cost != nil && len(s.Cost.LeftOut) > 0 }
	fitted := func(s *summary.Summary) bool {
		if s.Cost == nil || leftOut(s) || s.Capacity == nil {
			return false
		}
		for _, p := range s.Capacity.Probes {
			if p.Verdict == curve.Broken && len(p.Rounds) > 0 {
				return true
			}
		}
		return false
	}
	switch {
	case fitted(a) && leftOut(b):
		return "A"
	case fitted(b) && leftOut(a):
		return "B"
	}
	return ""
}

// bentSide names the campaign whose cost curve is bent ("A", "B", "A and
// B"), "" when both costs are straight lines.
func bentSide(a, b *summary.Summary) string {
	var out []string
	for i, s := range []*summary.Summary{a, b} {
		if s.Cost != nil && s.Cost.Curve.Bent() {
			out = append(out, string(rune('A'+i)))
		}
	}
	return strings.Join(out, " and ")
}

type getter struct {
	name, unit string
	get        func(*stats.Run) (float64, bool)
}

var metrics = []getter{
	{"p50", "ms", func(r *stats.Run) (float64, bool) { return r.LatencyMs.P50, r.Requests > 0 }},
	{"p95", "ms", func(r *stats.Run) (float64, bool) { return r.LatencyMs.P95, r.Requests > 0 }},
	{"p99", "ms", func(r *stats.Run) (float64, bool) { return r.LatencyMs.P99, r.Requests > 0 }},
	{"success", "%", func(r *stats.Run) (float64, bool) { return r.SuccessRatio * 100, r.Requests > 0 }},
	{"cpu_ms_per_exchange", "CPU-ms", func(r *stats.Run) (float64, bool) {
		if r.EngineCPU == nil {
			return 0, false
		}
		return r.EngineCPU.CPUMsPerExchange, true
	}},
}

// Compare sets the reported runs of A and B side by side.
func Compare(a, b *summary.Summary) *Result {
	res := &Result{A: a.CampaignID, B: b.CampaignID, Cost: costOf(a, b)}
	sa, sb := byRate(a), byRate(b)
	rates := map[stageKey]bool{}
	for r := range sa {
		rates[r] = true
	}
	for r := range sb {
		rates[r] = true
	}
	var keys []stageKey
	for r := range rates {
		keys = append(keys, r)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].replicas != keys[j].replicas {
			return keys[i].replicas < keys[j].replicas
		}
		return keys[i].rate < keys[j].rate
	})
	for _, k := range keys {
		st := Stage{TargetRPS: k.rate, Replicas: k.replicas}
		x, y := sa[k], sb[k]
		switch {
		case x == nil:
			st.Only = "B"
		case y == nil:
			st.Only = "A"
		default:
			st.RunsA, st.RunsB = doc.RunsVerdict(x), doc.RunsVerdict(y)
			ra, rb := x.Reported(), y.Reported()
			for _, g := range append(slices.Clone(metrics), hopMetrics(ra, rb)...) {
				m := Metric{Name: g.name, Unit: g.unit}
				va, okA := value(ra, g)
				vb, okB := value(rb, g)
				if !okA || !okB {
					m.Missing, m.Verdict = true, "not measured in both"
					st.Metrics = append(st.Metrics, m)
					continue
				}
				m.A, m.B, m.Diff = va, vb, round(vb-va)
				if va != 0 {
					m.DiffPct = round(100 * (vb - va) / va)
				}
				na, ka := spread(x, g)
				nb, kb := spread(y, g)
				m.Noise, m.Rounds = round(math.Max(na, nb)), [2]int{ka, kb}
				switch {
				case ka < 2 && kb < 2:
					m.Verdict = "noise unknown (one round each)"
				case math.Abs(m.Diff) <= m.Noise:
					m.Verdict = "within noise"
				case m.Diff < 0:
					m.Verdict = "B lower"
				default:
					m.Verdict = "B higher"
				}
				st.Metrics = append(st.Metrics, m)
			}
		}
		res.Stages = append(res.Stages, st)
	}
	res.workloads(a, b)
	return res
}

// hopMetrics compare each hop both reported runs have: its p95 and the
// size of the token it was issued.
func hopMetrics(a, b *stats.Run) []getter {
	if a == nil || b == nil {
		return nil
	}
	var out []getter
	for k := 1; k <= min(len(a.Hops), len(b.Hops)); k++ {
		hop := func(r *stats.Run) (stats.HopStats, bool) {
			for _, h := range r.Hops {
				if h.Hop == k && h.Requests > 0 {
					return h, true
				}
			}
			return stats.HopStats{}, false
		}
		out = append(out,
			getter{fmt.Sprintf("p95 hop %d", k), "ms", func(r *stats.Run) (float64, bool) { h, ok := hop(r); return h.LatencyMs.P95, ok }},
			getter{fmt.Sprintf("token bytes hop %d", k), "B", func(r *stats.Run) (float64, bool) {
				h, ok := hop(r)
				return h.TokenBytes.Avg, ok && h.TokenBytes.Count > 0
			}})
	}
	return out
}

// workloads say what each campaign ran when either ran more than single
// exchanges, and each one's exchange premium.
func (r *Result) workloads(a, b *summary.Summary) {
	if a.Agentic == nil && b.Agentic == nil {
		return
	}
	for i, s := range []*summary.Summary{a, b} {
		r.Workloads[i] = workloadOf(s.Agentic)
		if g := s.Agentic; g != nil && g.Premium != nil {
			if lines := doc.PremiumLines(g); len(lines) > 0 {
				r.Premiums[i] = lines[0]
			}
		}
	}
}

// workloadOf names a campaign's workload.
func workloadOf(g *summary.Agentic) string {
	if g == nil {
		return "single exchanges"
	}
	var parts []string
	switch {
	case g.Chain > 1:
		parts = append(parts, fmt.Sprintf("chains of %d", g.Chain))
	default:
		parts = append(parts, "single exchanges")
	}
	if g.Mix != nil {
		var ws []string
		for _, w := range g.Mix.Weights {
			ws = append(ws, fmt.Sprintf("%s %g", w.Grant, w.Weight))
		}
		parts = append(parts, "mix "+strings.Join(ws, ", "))
	}
	if g.Baseline != "" {
		parts = append(parts, "baseline "+string(g.Baseline))
	}
	return strings.Join(parts, ", ")
}

// workloadLines say the workloads and the premiums, and warn when the
// campaigns' workloads differ.
func (r *Result) workloadLines() []string {
	if r.Workloads == [2]string{} {
		return nil
	}
	out := []string{"workload A: " + r.Workloads[0], "workload B: " + r.Workloads[1]}
	if r.Workloads[0] != r.Workloads[1] {
		out = append(out, "⚠ the campaigns ran different workloads: their figures per request are not the same measurement")
	}
	for i, p := range r.Premiums {
		if p != "" {
			out = append(out, fmt.Sprintf("premium %s: %s", "AB"[i:i+1], p))
		}
	}
	return out
}

// stageKey is a stage's engine count and rate: campaigns over engine
// counts compare count by count.
type stageKey struct {
	replicas int
	rate     float64
}

func byRate(s *summary.Summary) map[stageKey]*summary.Stage {
	out := map[stageKey]*summary.Stage{}
	for _, st := range s.Stages {
		out[stageKey{st.Replicas, st.TargetRPS}] = st
	}
	return out
}

// label names a compared stage as the summaries do.
func (st Stage) label() string {
	return units.StageLabel(st.TargetRPS) + units.EnginesLabel(st.Replicas)
}

func value(r *stats.Run, g getter) (float64, bool) {
	if r == nil {
		return 0, false
	}
	return g.get(r)
}

// spread is max − min of a metric over a stage's finished rounds that did
// not fail (a dead target's fast p95 is not noise).
func spread(st *summary.Stage, g getter) (float64, int) {
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, r := range st.Runs {
		if r.Status != stats.StatusDone || st.Failed(r.ID) {
			continue
		}
		if v, ok := g.get(r); ok {
			lo, hi, n = math.Min(lo, v), math.Max(hi, v), n+1
		}
	}
	if n < 2 {
		return 0, n
	}
	return hi - lo, n
}

func round(v float64) float64 { return math.Round(v*1000) / 1000 }

// JSON renders the result.
func (r *Result) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// Table renders the result as rows of cells.
func (r *Result) Table() table.Table {
	t := table.New("Stage", "Metric", "A", "B", "B − A", "Noise (round spread)", "Verdict")
	for _, st := range r.Stages {
		if st.Only != "" {
			t.Add(st.label(), "", "", "", "", "", "only in "+st.Only)
			continue
		}
		t.Add(st.label(), "runs", st.RunsA, st.RunsB, "", "", "")
		for _, m := range st.Metrics {
			if m.Missing {
				t.Add(st.label(), m.Name, "", "", "", "", m.Verdict)
				continue
			}
			t.Add(st.label(), m.Name,
				fmt.Sprintf("%.2f %s", m.A, m.Unit), fmt.Sprintf("%.2f %s", m.B, m.Unit),
				fmt.Sprintf("%+.2f (%+.1f%%)", m.Diff, m.DiffPct), fmt.Sprintf("±%.2f (%d/%d rounds)", m.Noise, m.Rounds[0], m.Rounds[1]), m.Verdict)
		}
	}
	return t
}

// Text renders an aligned text table with a header line.
func (r *Result) Text() string {
	s := fmt.Sprintf("A: %s\nB: %s\n\n%s", r.A, r.B, r.Table().Text())
	if r.Cost != nil {
		s += "\n" + r.Cost.Line() + "\n"
	}
	for _, l := range r.workloadLines() {
		s += l + "\n"
	}
	return s
}

// Markdown renders a Markdown table.
func (r *Result) Markdown() string {
	return fmt.Sprintf("Comparison of **A** `%s` and **B** `%s` (reported runs; noise = largest spread between rounds of the stage)\n\n%s",
		r.A, r.B, strings.TrimSpace(r.Table().Markdown())+"\n") + r.costMarkdown()
}

func (r *Result) costMarkdown() string {
	var s string
	if r.Cost != nil {
		s = "\n" + r.Cost.Line() + "\n"
	}
	if lines := r.workloadLines(); len(lines) > 0 {
		s += "\n- " + strings.Join(lines, "\n- ") + "\n"
	}
	return s
}
