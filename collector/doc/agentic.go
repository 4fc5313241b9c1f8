package doc

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/table"
	"github.com/tokex-dev/tokex/collector/units"
)

// SecAgentic is the section of chains, actor tokens, the baseline and the
// mix: what an identity hop adds (docs/agentic.md).
const SecAgentic = "agentic"

// agentic is the workload's section: the exchange premium over the
// baseline in words, each hop's figures, the chains as wholes, each grant
// of a mix, the report's charts of them, each workload's marginal cost and
// how the figures are made. Empty (left out) for a campaign of single
// exchanges.
func agentic(s *summary.Summary, figures []template.HTML) Section {
	sec := Section{ID: SecAgentic, Title: "Chains, actor tokens and the exchange premium",
		Brief: "per hop: the reported run; CPU-ms: mean of the rounds, 95 % CI"}
	a := s.Agentic
	if a == nil {
		return sec
	}
	if lines := PremiumLines(a); len(lines) > 0 {
		sec.Blocks = append(sec.Blocks, Block{Kind: List, ID: "premium", Lines: says(lines)})
	}
	if t := HopTable(a); len(t.Rows) > 0 {
		sec.Blocks = append(sec.Blocks, Block{Kind: Table, Table: &t, Caption: "Each hop of the chains"})
	}
	if t := ChainTable(a); len(t.Rows) > 0 {
		sec.Blocks = append(sec.Blocks, Block{Kind: Table, Table: &t, Caption: "The chains as wholes"})
	}
	if lines := brokenLines(a); len(lines) > 0 {
		sec.Blocks = append(sec.Blocks, Block{Kind: List, Lines: says(lines)})
	}
	if t := KindTable(a); len(t.Rows) > 0 {
		sec.Blocks = append(sec.Blocks, Block{Kind: Table, Table: &t, Caption: "Each grant of the mix"},
			Block{Kind: Para, Lines: says([]string{"A mix's grants share each run's engine CPU, which cannot be told apart: per grant only latency and success are given; CPU per request is each run's, all grants together."})})
	}
	if len(figures) > 0 {
		sec.Blocks = append(sec.Blocks, Block{Kind: Figures, Figures: figures})
	}
	if lines := workloadCostLines(a); len(lines) > 0 {
		sec.Blocks = append(sec.Blocks, Block{Kind: List, Lines: says(lines)})
	}
	sec.Blocks = append(sec.Blocks, Block{Kind: Para, In: Markdown | HTML, Class: "meta", Lines: says([]string{a.Definition})})
	return sec
}

// PremiumLines say what an exchange costs more than the baseline grant:
// over every pair of interleaved runs, then per stage, then at the margin.
func PremiumLines(a *summary.Agentic) []string {
	p := a.Premium
	if p == nil {
		return nil
	}
	out := []string{premiumLine(p, p.Overall, "")}
	if len(p.Stages) > 1 {
		for _, f := range p.Stages {
			out = append(out, premiumLine(p, f, units.StageLabel(f.TargetRPS)))
		}
	}
	if d := p.Marginal; d != nil {
		out = append(out, fmt.Sprintf("at the margin (each workload's cost fit): %+.3f CPU-ms per request (95 %% CI %.3f–%.3f): %s",
			d.CPUMs, d.CI[0], d.CI[1], strings.Replace(d.Verdict, "B", "the exchange", 1)))
	}
	return append(out, "exchanges compared: "+p.Exchange)
}

// premiumLine is one premium figure in words.
func premiumLine(p *summary.Premium, f summary.PremiumFigure, at string) string {
	where := "over every stage"
	if at != "" {
		where = "at " + at
	}
	if f.CPUMs.N == 0 && f.P95Ms.N == 0 {
		return fmt.Sprintf("exchange premium %s: not measured (no round ran both an exchange and %s with figures)", where, p.Baseline)
	}
	var parts []string
	if f.CPUMs.N > 0 {
		parts = append(parts, fmt.Sprintf("an exchange costs %s CPU-ms %s than a %s grant (%.3f against %.3f)%s", abs3(f.CPUMs.Mean), moreLess(f.CPUMs.Mean),
			p.Baseline, f.ExchangeCPUMs, f.BaselineCPUMs, ciText(f.CPUMs, 3)))
	}
	if f.P95Ms.N > 0 {
		parts = append(parts, fmt.Sprintf("its p95 is %s ms %s (%.2f against %.2f ms)%s", abs3(f.P95Ms.Mean), moreLess(f.P95Ms.Mean),
			f.ExchangeP95Ms, f.BaselineP95Ms, ciText(f.P95Ms, 2)))
	}
	pairs := pairsText(max(f.CPUMs.N, f.P95Ms.N))
	if at == "" && len(p.Stages) > 1 {
		pairs += " (rounds × stages)"
	}
	return fmt.Sprintf("%s: %s; %s", where, strings.Join(parts, "; "), pairs)
}

// abs3 is a difference's size, three significant digits; moreLess its direction.
func abs3(v float64) string { return fmt.Sprintf("%.3g", math.Abs(v)) }

func moreLess(v float64) string {
	if v < 0 {
		return "less"
	}
	return "more"
}

// ciText is an interval in words, or why there is none; an interval that
// holds 0 says no difference is shown, as the marginal premium's does.
func ciText(iv curve.Interval, prec int) string {
	if !iv.Shown() {
		return ", no interval (one pair)"
	}
	out := fmt.Sprintf(", 95 %% CI %.*f–%.*f", prec, iv.CI[0], prec, iv.CI[1])
	if iv.CI[0] <= 0 && iv.CI[1] >= 0 {
		out += " (it holds 0: no difference shown)"
	}
	return out
}

func pairsText(n int) string {
	if n == 1 {
		return "1 pair of interleaved runs"
	}
	return fmt.Sprintf("%d pairs of interleaved runs", n)
}

// cpuCell is a CPU estimate in a table cell: "1.23 (0.98–1.48)".
func cpuCell(iv *curve.Interval) string {
	switch {
	case iv == nil:
		return "n/a"
	case !iv.Shown():
		return fmt.Sprintf("%.3f (1 round)", iv.Mean)
	}
	return fmt.Sprintf("%.3f (%.3f–%.3f)", iv.Mean, iv.CI[0], iv.CI[1])
}

// HopTable is each hop at each stage: the reported run's latency, success,
// tokex's own time before the hop, the issued token's size and its growth
// over the hop before, and the hop's CPU.
func HopTable(a *summary.Agentic) table.Table {
	t := table.New("Stage", "Hop", "Requests", "Success", "p50", "p95", "tokex before p95", "Token bytes", "Growth", "CPU-ms (95 % CI)", "CPU from")
	t.ID = "hops"
	t.Columns[len(t.Columns)-1].Align = table.Left
	for i, drop := range map[int]int{10: 1, 6: 2, 8: 3, 4: 4, 2: 5} { // a narrow screen keeps p95, size and CPU
		t.Columns[i].Drop = drop
	}
	for _, st := range a.Stages {
		prev := 0.0
		for _, h := range st.Hops {
			growth := ""
			if h.Hop > 1 && prev > 0 {
				growth = fmt.Sprintf("%+.0f", h.TokenBytes-prev)
			}
			prev = h.TokenBytes
			t.Add(units.StageLabel(st.TargetRPS), fmt.Sprint(h.Hop), units.Thousands(h.Requests), pct2(h.SuccessRatio), ms(h.P50Ms), ms(h.P95Ms),
				ms(h.GapP95Ms), fmt.Sprintf("%.0f", h.TokenBytes), growth, cpuCell(h.CPUMs), cpuFrom(h))
		}
	}
	return t
}

// cpuFrom says how a hop's CPU was measured.
func cpuFrom(h summary.HopFigure) string {
	switch {
	case h.CPUMs == nil:
		return h.CPUNote
	case h.Hop == 1:
		return "single exchanges; " + h.CPUNote
	}
	s := fmt.Sprintf("chains of %d − chains of %d", h.Hop, h.Hop-1)
	if h.CPUNote != "" && h.CPUNote != "fixed cost included" {
		s += "; " + h.CPUNote
	}
	return s
}

// ChainTable is each stage's chains as wholes: how many completed, their
// latency and its two parts, and the CPU per chain.
func ChainTable(a *summary.Agentic) table.Table {
	t := table.New("Stage", "Hops", "Chains", "Completed", "p50", "p95", "hops' sum p95", "tokex between hops avg / p95", "CPU-ms per chain (95 % CI)")
	t.ID = "chains"
	for _, st := range a.Stages {
		c := st.Chain
		if c == nil {
			continue
		}
		tone := table.Plain
		if c.Completed < c.Started {
			tone = table.Warn
		}
		t.AddTone(tone, units.StageLabel(st.TargetRPS), fmt.Sprint(c.Length), units.Thousands(c.Started), units.Thousands(c.Completed),
			ms(c.LatencyP50Ms), ms(c.LatencyP95Ms), ms(c.HopsP95Ms), ms(c.TokexAvgMs)+" / "+ms(c.TokexP95Ms), cpuCell(c.CPUMs))
	}
	return t
}

// brokenLines say where the chains broke and why.
func brokenLines(a *summary.Agentic) []string {
	var out []string
	for _, st := range a.Stages {
		if st.Chain == nil {
			continue
		}
		for _, b := range st.Chain.Broken {
			out = append(out, fmt.Sprintf("%s: %s chain(s) broke at hop %d: %s (the hops after it were not sent)",
				units.StageLabel(st.TargetRPS), units.Thousands(b.Count), b.Hop, b.Error))
		}
	}
	return out
}

// KindTable is each grant of a mixed run at each stage: its share of the
// arrivals against its weight, its latency and success.
func KindTable(a *summary.Agentic) table.Table {
	t := table.New("Stage", "Grant", "Arrivals", "Share (weight)", "Requests", "Success", "p50", "p95", "p99", "Token bytes")
	t.ID = "kinds"
	t.Columns[1].Align = table.Left
	for i, drop := range map[int]int{9: 1, 8: 2, 4: 3, 6: 4} {
		t.Columns[i].Drop = drop
	}
	weights := map[string]float64{} // by grant
	var total float64
	if a.Mix != nil {
		for _, w := range a.Mix.Weights {
			weights[string(w.Grant)] = w.Weight
			total += w.Weight
		}
	}
	for _, st := range a.Stages {
		var arrivals int64
		for _, k := range st.Kinds {
			arrivals += k.Arrivals
		}
		for _, k := range st.Kinds {
			share := "—"
			if arrivals > 0 && total > 0 {
				share = fmt.Sprintf("%.1f %% (%.1f %%)", float64(k.Arrivals)/float64(arrivals)*100, weights[string(k.Kind)]/total*100)
			}
			t.Add(units.StageLabel(st.TargetRPS), string(k.Kind), units.Thousands(k.Arrivals), share, units.Thousands(k.Requests),
				pct2(k.SuccessRatio), ms(k.LatencyMs.P50), ms(k.LatencyMs.P95), ms(k.LatencyMs.P99), fmt.Sprintf("%.0f", k.TokenBytes.Avg))
		}
	}
	return t
}

// workloadCostLines are each workload's marginal-cost fit.
func workloadCostLines(a *summary.Agentic) []string {
	if len(a.Costs) < 2 {
		return nil // the campaign's own workload alone: the cost section says it
	}
	var out []string
	for _, c := range a.Costs {
		name := c.Workload
		if name == "" {
			name = "the campaign's own workload"
			if a.Chain > 1 {
				name = fmt.Sprintf("chains of %d", a.Chain)
			}
		}
		line := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(c.Fit.Line(), "marginal cost"), ":"))
		out = append(out, "marginal cost of "+name+": "+line)
	}
	return out
}
