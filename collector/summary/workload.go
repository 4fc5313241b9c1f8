package summary

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// AgenticDefinition states how the workload's figures are made (summary.json).
const AgenticDefinition = "agentic.stages: per stage, each hop's figures (latency sent → read, success, issued token sizes, " +
	"tokex's own time before it) and the chains' as wholes are the reported run's; a chain's latency is hop 1 sent → " +
	"its last hop read, exactly the sum of its hops' latencies (hops_ms) plus tokex's own time between them (tokex_ms). " +
	"Engine CPU is measured per run, not per request: CPU per chain of length k is the run's engine CPU ÷ (its " +
	"responses ÷ k), per k responses (a chain, when none broke); hop 1's CPU is that of the chains of length 1 " +
	"(a single exchange, the engine's fixed cost included as in the article's figure), hop k's the difference " +
	"between the chains of length k and k − 1 run at the same stage in the same round (the fixed cost cancels). " +
	"Each figure is the mean over the rounds with its 95 % interval from Student's t (n − 1 degrees of freedom, " +
	"the rounds as replicates). agentic.premium: an exchange's CPU-ms per request and p95 minus the baseline grant's, " +
	"round by round at each stage (interleaved runs, same clients, same server), mean and 95 % interval over the " +
	"pairs; the marginal premium is the difference of the two workloads' marginal-cost fits. A mixed run's grants " +
	"share its engine CPU, which cannot be told apart: per grant only latency and success are given."

// Agentic is summary.json's agentic section: what a workload of chains,
// actor tokens, a baseline grant or a mix adds to the article's figures;
// nil for a campaign of single exchanges.
type Agentic struct {
	Definition string         `json:"definition"`
	Chain      int            `json:"chain,omitempty"`
	Baseline   exchange.Grant `json:"baseline,omitempty"`
	Mix        *exchange.Mix  `json:"mix,omitempty"`
	Stages     []AgenticStage `json:"stages,omitempty"`
	Premium    *Premium       `json:"premium,omitempty"`
	// Costs are the marginal-cost fit of each workload the campaign ran.
	Costs []WorkloadCost `json:"costs,omitempty"`
}

// AgenticStage is one stage's chain, hop and grant figures.
type AgenticStage struct {
	TargetRPS   float64           `json:"target_rps"`
	ReportedRun string            `json:"reported_run,omitempty"`
	Hops        []HopFigure       `json:"hops,omitempty"`
	Chain       *ChainFigure      `json:"chain,omitempty"`
	Kinds       []stats.KindStats `json:"kinds,omitempty"`
}

// HopFigure is one hop at one stage.
type HopFigure struct {
	Hop          int     `json:"hop"`
	Requests     int64   `json:"requests"`
	SuccessRatio float64 `json:"success_ratio"`
	P50Ms        float64 `json:"p50_ms"`
	P95Ms        float64 `json:"p95_ms"`
	P99Ms        float64 `json:"p99_ms"`
	// GapP95Ms is tokex's own time before the hop, p95.
	GapP95Ms float64 `json:"gap_p95_ms"`
	// TokenBytes is the average size of the tokens the hop was issued,
	// TokenBytesMax the largest.
	TokenBytes    float64 `json:"token_bytes"`
	TokenBytesMax int64   `json:"token_bytes_max"`
	// CPUMs is the hop's engine CPU (AgenticDefinition); nil when no pair
	// of runs measured it, CPUNote then says why.
	CPUMs   *curve.Interval `json:"cpu_ms,omitempty"`
	CPUNote string          `json:"cpu_note,omitempty"`
}

// ChainFigure is one stage's chains as wholes.
type ChainFigure struct {
	Length    int   `json:"length"`
	Started   int64 `json:"started"`
	Completed int64 `json:"completed"`
	// The reported run's completed chains: latency, and its two parts.
	LatencyP50Ms float64 `json:"latency_p50_ms"`
	LatencyP95Ms float64 `json:"latency_p95_ms"`
	HopsP95Ms    float64 `json:"hops_p95_ms"`
	HopsAvgMs    float64 `json:"hops_avg_ms"`
	TokexP95Ms   float64 `json:"tokex_p95_ms"`
	TokexAvgMs   float64 `json:"tokex_avg_ms"`
	// Broken sums where the stage's runs' chains broke and why.
	Broken []stats.ChainBreak `json:"broken,omitempty"`
	// CPUMs is the engine CPU per chain over the rounds.
	CPUMs   *curve.Interval `json:"cpu_ms,omitempty"`
	CPUNote string          `json:"cpu_note,omitempty"`
}

// Premium is what an exchange costs more than the baseline grant.
type Premium struct {
	Baseline exchange.Grant `json:"baseline"`
	// Exchange says which runs' exchanges are compared, ExchangeWorkload
	// names their workload (Run.Workload).
	Exchange         string          `json:"exchange"`
	ExchangeWorkload string          `json:"exchange_workload,omitempty"`
	Overall          PremiumFigure   `json:"overall"`
	Stages           []PremiumFigure `json:"stages"`
	// Marginal is the exchange's marginal cost minus the baseline's, from
	// the two workloads' fits.
	Marginal *curve.Difference `json:"marginal,omitempty"`
}

// PremiumFigure is the premium over the pairs of one stage (TargetRPS),
// or of every stage (TargetRPS 0).
type PremiumFigure struct {
	TargetRPS float64        `json:"target_rps,omitempty"`
	CPUMs     curve.Interval `json:"cpu_ms"`
	P95Ms     curve.Interval `json:"p95_ms"`
	// The means compared.
	ExchangeCPUMs float64 `json:"exchange_cpu_ms"`
	BaselineCPUMs float64 `json:"baseline_cpu_ms"`
	ExchangeP95Ms float64 `json:"exchange_p95_ms"`
	BaselineP95Ms float64 `json:"baseline_p95_ms"`
}

// WorkloadCost is one workload's marginal-cost fit.
type WorkloadCost struct {
	Workload string     `json:"workload"` // stats.Run.Workload
	Fit      *curve.Fit `json:"fit"`
}

// chainLen is the length of the run's chains, 1 without one.
func chainLen(r *stats.Run) int { return max(r.Chain, 1) }

// cpuPerChain is the run's engine CPU per chain (per chainLen responses);
// false without a figure.
func cpuPerChain(r *stats.Run) (float64, bool) {
	if r == nil || r.Status != stats.StatusDone || r.EngineCPU == nil || r.EngineCPU.CPUMsPerExchange <= 0 {
		return 0, false
	}
	return r.EngineCPU.CPUMsPerExchange * float64(chainLen(r)), true
}

// chainsBroke reports a run some of whose chains broke.
func chainsBroke(r *stats.Run) bool { return r.Chains != nil && len(r.Chains.Broken) > 0 }

// runKey is a run's place in the campaign: its round and stage.
type runKey struct {
	round int
	rate  float64
}

// family is the done runs of one workload by round and stage.
type family map[runKey]*stats.Run

func familyOf(runs []*stats.Run, keep func(*stats.Run) bool) family {
	f := family{}
	for _, r := range runs {
		if r != nil && !r.Sanity && r.Status == stats.StatusDone && keep(r) {
			f[runKey{r.Round, r.TargetRPS}] = r
		}
	}
	return f
}

// buildAgentic fills the summary's agentic section from its runs (all of
// them: the campaign's own and its variants).
func (s *Summary) buildAgentic(runs []*stats.Run) {
	s.Agentic = nil
	chain, baseline, mix := 0, exchange.Grant(""), (*exchange.Mix)(nil)
	for _, r := range runs {
		switch {
		case r == nil || r.Sanity:
		case r.Grant != "":
			baseline = r.Grant
		case !r.Step:
			chain = max(chain, r.Chain)
			if r.Mix != nil {
				mix = r.Mix
			}
		}
	}
	if chain == 0 && baseline == "" && mix == nil {
		return
	}
	a := &Agentic{Definition: AgenticDefinition, Chain: chain, Baseline: baseline, Mix: mix}
	steps := func(k int) family {
		if k == chain {
			return familyOf(runs, func(r *stats.Run) bool { return r.Grant == "" && !r.Step })
		}
		return familyOf(runs, func(r *stats.Run) bool { return r.Step && r.Chain == k })
	}
	for _, st := range s.Stages {
		a.Stages = append(a.Stages, agenticStage(st, chain, steps))
	}
	if baseline != "" {
		a.Premium = premium(runs, chain, baseline, steps)
	}
	a.Costs = workloadCosts(runs)
	if a.Premium != nil {
		a.Premium.Marginal = marginalPremium(a.Costs, a.Premium, baseline)
	}
	s.Agentic = a
}

// agenticStage is one stage's figures: the reported run's hops, chains
// and grants, and the CPU of each hop and chain over the rounds.
func agenticStage(st *Stage, chain int, steps func(int) family) AgenticStage {
	out := AgenticStage{TargetRPS: st.TargetRPS, ReportedRun: st.ReportedRun}
	r := st.Reported()
	if r == nil {
		return out
	}
	out.Kinds = r.Kinds
	for _, h := range r.Hops {
		out.Hops = append(out.Hops, HopFigure{Hop: h.Hop, Requests: h.Requests, SuccessRatio: h.SuccessRatio,
			P50Ms: h.LatencyMs.P50, P95Ms: h.LatencyMs.P95, P99Ms: h.LatencyMs.P99, GapP95Ms: h.GapMs.P95,
			TokenBytes: h.TokenBytes.Avg, TokenBytesMax: h.TokenBytes.Max})
	}
	if chain > 0 {
		hopCPU(out.Hops, st.TargetRPS, chain, steps)
		out.Chain = chainFigure(st, r, steps(chain))
	}
	return out
}

// hopCPU sets each hop's CPU: hop 1 from the runs of length 1, hop k from
// the difference of the runs of lengths k and k − 1, round by round.
func hopCPU(hops []HopFigure, rate float64, chain int, steps func(int) family) {
	for i := range hops {
		h := &hops[i]
		if h.Hop < 1 || h.Hop > chain {
			continue
		}
		long := steps(h.Hop)
		var short family
		if h.Hop > 1 {
			short = steps(h.Hop - 1)
		}
		var xs []float64
		broke := false
		for key, r := range long {
			if key.rate != rate {
				continue
			}
			c, ok := cpuPerChain(r)
			if !ok {
				continue
			}
			if h.Hop > 1 {
				p, ok := cpuPerChain(short[key])
				if !ok {
					continue
				}
				c -= p
				broke = broke || chainsBroke(short[key])
			}
			broke = broke || chainsBroke(r)
			xs = append(xs, c)
		}
		h.CPUMs, h.CPUNote = interval(xs, broke, h.Hop)
	}
}

// interval is the rounds' mean and interval of a CPU figure, or why none.
func interval(xs []float64, broke bool, hop int) (*curve.Interval, string) {
	if len(xs) == 0 {
		if hop > 1 {
			return nil, fmt.Sprintf("not measured: no round ran chains of lengths %d and %d with engine CPU (workload.steps)", hop, hop-1)
		}
		return nil, "not measured: no run of single exchanges with engine CPU (workload.steps)"
	}
	sort.Float64s(xs) // map order must not reach the sums
	iv := roundInterval(curve.MeanCI(xs))
	var note string
	switch {
	case broke:
		note = "some chains broke: a chain's CPU is per k responses"
	case !iv.Shown():
		note = "one round: no interval"
	}
	if hop == 1 && note == "" {
		note = "fixed cost included"
	}
	return &iv, note
}

// chainFigure is the stage's chains: the reported run's latencies, where
// the stage's runs' chains broke, and the CPU per chain over the rounds.
func chainFigure(st *Stage, r *stats.Run, main family) *ChainFigure {
	c := r.Chains
	if c == nil {
		return nil
	}
	f := &ChainFigure{Length: c.Length, Started: c.Started, Completed: c.Completed,
		LatencyP50Ms: c.LatencyMs.P50, LatencyP95Ms: c.LatencyMs.P95, HopsP95Ms: c.HopsMs.P95, HopsAvgMs: c.HopsMs.Avg,
		TokexP95Ms: c.TokexMs.P95, TokexAvgMs: c.TokexMs.Avg}
	breaks := map[stats.ChainBreak]int64{}
	for _, run := range st.Runs {
		if run.Chains == nil || run.Status != stats.StatusDone {
			continue
		}
		for _, b := range run.Chains.Broken {
			n := b.Count
			b.Count = 0
			breaks[b] += n
		}
	}
	for b, n := range breaks {
		b.Count = n
		f.Broken = append(f.Broken, b)
	}
	stats.SortBreaks(f.Broken)
	f.Broken = f.Broken[:min(len(f.Broken), stats.MaxBreaks)]
	var xs []float64
	broke := false
	for key, run := range main {
		if key.rate == st.TargetRPS {
			if v, ok := cpuPerChain(run); ok {
				xs = append(xs, v)
				broke = broke || chainsBroke(run)
			}
		}
	}
	f.CPUMs, f.CPUNote = interval(xs, broke, 0)
	if f.CPUMs == nil {
		f.CPUNote = "not measured: no run with engine CPU"
	} else if f.CPUNote == "fixed cost included" || f.CPUNote == "" {
		f.CPUNote = "fixed cost included"
	}
	return f
}

// exchangeRuns are the runs whose exchanges the premium compares: the
// single exchanges of the chain's length-1 runs when there are, else the
// campaign's own runs; what they are, and their workload.
func exchangeRuns(chain int, steps func(int) family) (f family, what, workload string) {
	if chain > 1 {
		if f := steps(1); len(f) > 0 {
			return f, "single exchanges: the chains of length 1 (workload.steps)", "chain 1"
		}
		return steps(chain), fmt.Sprintf("the average hop of chains of %d (no runs of single exchanges: workload.steps is off)", chain), ""
	}
	return steps(chain), "single exchanges", ""
}

// premium is the exchange's CPU and p95 minus the baseline's, pair by pair.
func premium(runs []*stats.Run, chain int, baseline exchange.Grant, steps func(int) family) *Premium {
	ex, what, workload := exchangeRuns(chain, steps)
	base := familyOf(runs, func(r *stats.Run) bool { return r.Grant == baseline })
	p := &Premium{Baseline: baseline, Exchange: what, ExchangeWorkload: workload}
	keys := make([]runKey, 0, len(ex))
	for k := range ex {
		if base[k] != nil {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b runKey) int {
		if a.rate != b.rate {
			return cmp.Compare(a.rate, b.rate)
		}
		return cmp.Compare(a.round, b.round)
	})
	var rates []float64
	for _, k := range keys {
		if !slices.Contains(rates, k.rate) {
			rates = append(rates, k.rate)
		}
	}
	p.Overall = premiumFigure(0, keys, ex, base)
	for _, rate := range rates {
		p.Stages = append(p.Stages, premiumFigure(rate, keys, ex, base))
	}
	return p
}

// premiumFigure is the premium over the pairs at rate (0: all).
func premiumFigure(rate float64, keys []runKey, ex, base family) PremiumFigure {
	f := PremiumFigure{TargetRPS: rate}
	var cpu, p95, ec, bc, ep, bp []float64
	for _, k := range keys {
		if rate != 0 && k.rate != rate {
			continue
		}
		e, b := ex[k], base[k]
		ecpu, eok := cpuPerExchange(e)
		bcpu, bok := cpuPerExchange(b)
		if eok && bok {
			cpu, ec, bc = append(cpu, ecpu-bcpu), append(ec, ecpu), append(bc, bcpu)
		}
		if e.Requests > 0 && b.Requests > 0 {
			p95, ep, bp = append(p95, e.LatencyMs.P95-b.LatencyMs.P95), append(ep, e.LatencyMs.P95), append(bp, b.LatencyMs.P95)
		}
	}
	f.CPUMs, f.P95Ms = roundInterval(curve.MeanCI(cpu)), roundInterval(curve.MeanCI(p95))
	f.ExchangeCPUMs, f.BaselineCPUMs = stats.Round3(meanOr0(ec)), stats.Round3(meanOr0(bc))
	f.ExchangeP95Ms, f.BaselineP95Ms = stats.Round3(meanOr0(ep)), stats.Round3(meanOr0(bp))
	return f
}

// cpuPerExchange is the run's engine CPU per response.
func cpuPerExchange(r *stats.Run) (float64, bool) {
	if r.EngineCPU == nil || r.EngineCPU.CPUMsPerExchange <= 0 {
		return 0, false
	}
	return r.EngineCPU.CPUMsPerExchange, true
}

func meanOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

func roundInterval(iv curve.Interval) curve.Interval {
	iv.Mean, iv.CI[0], iv.CI[1] = stats.Round4(iv.Mean), stats.Round4(iv.CI[0]), stats.Round4(iv.CI[1])
	return iv
}

// workloadCosts fits the marginal cost of each workload separately.
func workloadCosts(runs []*stats.Run) []WorkloadCost {
	byWorkload := map[string][]*stats.Run{}
	var names []string
	for _, r := range runs {
		if r == nil || r.Sanity {
			continue
		}
		w := r.Workload()
		if _, ok := byWorkload[w]; !ok {
			names = append(names, w)
		}
		byWorkload[w] = append(byWorkload[w], r)
	}
	sort.Strings(names)
	var out []WorkloadCost
	for _, w := range names {
		if fit, _ := CostCurve(byWorkload[w]); fit != nil {
			out = append(out, WorkloadCost{Workload: w, Fit: fit})
		}
	}
	return out
}

// marginalPremium is the exchange's marginal cost minus the baseline's.
func marginalPremium(costs []WorkloadCost, p *Premium, baseline exchange.Grant) *curve.Difference {
	var ex, base *curve.Fit
	for _, c := range costs {
		switch c.Workload {
		case p.ExchangeWorkload:
			ex = c.Fit
		case string(baseline):
			base = c.Fit
		}
	}
	if !ex.OK() || !base.OK() {
		return nil // not comparable: a fit missing or poor (Agentic.Costs says why)
	}
	d := curve.Diff(base, ex)
	d.CPUMs, d.CI[0], d.CI[1] = stats.Round4(d.CPUMs), stats.Round4(d.CI[0]), stats.Round4(d.CI[1])
	return &d
}
