package doc

import (
	"fmt"
	"strings"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/table"
	"github.com/tokex-dev/tokex/collector/units"
)

// Verdict is the campaign's answer in one sentence: a word (PASSED,
// FAILED, INTERRUPTED, UNKNOWN) and why, in words, with its tone.
type Verdict struct {
	Word, Why string
	Tone      table.Tone
}

// String is "WORD — why".
func (v Verdict) String() string { return v.Word + " — " + v.Why }

// CampaignVerdict says whether the campaign passed and why: what stopped
// it, the capacity a search found, the figures a pass stands on, or the
// first reason it failed — a measurement that was the machine's or the
// generator's before a threshold the server missed.
func CampaignVerdict(s *summary.Summary, page *Page, groups []Group) Verdict {
	switch {
	case page.Recomputed:
		return Verdict{"UNKNOWN", "the campaign did not finish (no summary.json): the figures are recomputed from the rows, without thresholds", table.Warn}
	case page.Status == summary.CampaignAborted:
		return Verdict{"INTERRUPTED", fmt.Sprintf("the campaign was stopped%s after %s; tokex run --resume continues it", suffix(page.Reason), finishedRuns(s)), table.Warn}
	case page.Status != summary.CampaignDone && page.Status != "": // "": a summary that does not say
		why := "the campaign " + string(page.Status)
		if page.Reason != "" {
			why = "the campaign stopped: " + page.Reason
		}
		return Verdict{"FAILED", why, table.Bad}
	case s.Capacity != nil:
		return searchVerdict(s, groups)
	case s.ThresholdsPassed:
		return Verdict{"PASSED", passedWhy(s) + allowedNote(s, groups), table.Good}
	}
	if why := notServers(s, groups); why != "" {
		return Verdict{"FAILED", why, table.Bad}
	}
	return Verdict{"FAILED", missedWhy(s), table.Bad}
}

// searchVerdict: a search passes when it found the capacity (or the
// objective held to its maximum).
func searchVerdict(s *summary.Summary, groups []Group) Verdict {
	c := s.Capacity
	if c.Status == curve.StatusFound || c.Status == curve.StatusAboveMax {
		return Verdict{"PASSED", c.Line() + allowedNote(s, groups), table.Good}
	}
	if why := notServers(s, groups); why != "" {
		return Verdict{"FAILED", "no capacity found: " + why, table.Bad}
	}
	return Verdict{"FAILED", "no capacity found: " + c.Line(), table.Bad}
}

func finishedRuns(s *summary.Summary) string {
	done, all := 0, 0
	for _, r := range allRuns(s) {
		all++
		if r.Status == stats.StatusDone {
			done++
		}
	}
	return fmt.Sprintf("%d of %d runs", done, all)
}

// passedWhy is the highest stage's p95 and CPU per exchange: "p95 9.5 ms
// at 500/s, 5.2 CPU-ms per exchange".
func passedWhy(s *summary.Summary) string {
	for i := len(s.Stages) - 1; i >= 0; i-- {
		if r := s.Stages[i].Reported(); r != nil && r.Requests > 0 {
			return fmt.Sprintf("p95 %s at %s, %s", ms(r.LatencyMs.P95), units.StageLabel(r.TargetRPS), cpuPerExchange(r))
		}
	}
	return "every run passed its thresholds"
}

func cpuPerExchange(r *stats.Run) string {
	if r.EngineCPU == nil || r.Requests == 0 {
		return "CPU per exchange unknown"
	}
	return fmt.Sprintf("%.2f CPU-ms per exchange", r.EngineCPU.CPUMsPerExchange)
}

// notServers is why the figures are not the server's, from the first
// invalidating warning the thresholds did not allow ("" when none).
func notServers(s *summary.Summary, groups []Group) string {
	for i := range groups {
		g := &groups[i]
		if g.Allowed || !g.Code.Invalidating() || len(g.Runs) == 0 {
			continue
		}
		where := g.runsOf(s)
		switch g.Code {
		case stats.WarnHostSaturated:
			if g.cpus > 0 {
				return fmt.Sprintf("the figures are this machine's, not the server's: other processes used %s of %d cores %s", coresRange(g.othersMin, g.othersMax), g.cpus, where)
			}
			return "the figures are this machine's, not the server's: it was saturated " + where
		case stats.WarnGeneratorStarved:
			return "the figures are the load generator's, not the server's: it was starved of CPU " + where
		case stats.WarnGeneratorLate:
			why := "the figures are the load generator's, not the server's: it fell behind its schedule " + where
			if g.topWhat != "" {
				why += fmt.Sprintf(" (%s up to %.1f ms)", g.topWhat, g.top)
			}
			return why
		case stats.WarnEngineCPUImplausible:
			return "the CPU measured is not the server's: tokex sampled another process " + where
		case stats.WarnSuccessUnknown:
			return "nothing judged whether the exchanges succeeded " + where
		}
	}
	return ""
}

// runsOf is "in 8 of 9 runs": the counted runs the group hit.
func (g *Group) runsOf(s *summary.Summary) string {
	return fmt.Sprintf("in %d of %d runs", len(g.Runs), len(allRuns(s)))
}

func coresRange(lo, hi float64) string {
	if fmt.Sprintf("%.1f", lo) == fmt.Sprintf("%.1f", hi) {
		return fmt.Sprintf("%.1f", hi)
	}
	return fmt.Sprintf("%.1f–%.1f", lo, hi)
}

// allowedNote is what a pass owes to warnings the thresholds allowed.
func allowedNote(s *summary.Summary, groups []Group) string {
	var parts []string
	for i := range groups {
		if g := &groups[i]; g.Allowed && len(g.Runs) > 0 {
			parts = append(parts, fmt.Sprintf("%s (%d of %d runs)", g.Code, len(g.Runs), len(allRuns(s))))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; allowed, so the figures are partly the machine's or the generator's: " + strings.Join(parts, ", ")
}

// missedWhy is the first threshold a counted run missed, or the first run
// that could not run, and how many runs failed.
func missedWhy(s *summary.Summary) string {
	failed, all := 0, 0
	first := ""
	for _, st := range s.Stages {
		for _, r := range st.Runs {
			all++
			if !st.Failed(r.ID) {
				continue
			}
			failed++
			if first == "" {
				first = runMissed(r)
			}
		}
	}
	if first == "" {
		return "no run was counted"
	}
	return fmt.Sprintf("%s (%d of %d runs failed)", first, failed, all)
}

// runMissed says what the run missed: "p95 612.3 ms at 500/s is not
// below 500 ms".
func runMissed(r *stats.Run) string {
	at := " at " + units.StageLabel(r.TargetRPS)
	if r.Status != stats.StatusDone {
		return r.ID + " could not run" + suffix(r.Reason)
	}
	for _, t := range r.Thresholds {
		if t.Passed {
			continue
		}
		switch t.Name {
		case "p95_ms <":
			if r.Requests == 0 {
				return "no exchange completed" + at
			}
			return fmt.Sprintf("p95 %s%s is not below %g ms", ms(t.Actual), at, t.Limit)
		case "success_ratio >=":
			return fmt.Sprintf("success %.2f%%%s is below %g%%", t.Actual*100, at, t.Limit*100)
		case "dropped <=":
			return fmt.Sprintf("%s arrivals dropped%s (at most %g allowed)", units.Thousands(int64(t.Actual)), at, t.Limit)
		case "disallowed warnings <=":
			return fmt.Sprintf("%g warnings%s say the figures are not the server's", t.Actual, at)
		}
		return fmt.Sprintf("%s %g (was %g)%s", t.Name, t.Limit, t.Actual, at)
	}
	return r.ID + " failed its thresholds"
}

// answer is what the reader needs first: the verdict and why, each
// stage's p95 and CPU per exchange, the capacity and marginal cost when
// known, where the warnings are, and (the terminal) where the report is.
func answer(s *summary.Summary, page *Page, groups []Group) Section {
	v := CampaignVerdict(s, page, groups)
	blocks := []Block{{Kind: Para, Class: "verdict " + toneName(v.Tone), ID: "verdict", Lines: []Line{{{Text: v.Word, Strong: true}, {Text: " — " + v.Why}}}}}
	// A pass of one stage said its figures already.
	if l := stageFigures(s); l != "" && (len(s.Stages) > 1 || v.Word != "PASSED" || s.Capacity != nil) {
		blocks = append(blocks, Block{Kind: Para, In: Text | Markdown, Lines: []Line{Say(l)}})
	}
	if l := costAnswer(s, v); l != "" {
		blocks = append(blocks, Block{Kind: Para, Class: "meta", Lines: []Line{Say(l)}})
	}
	if len(groups) > 0 {
		codes := make([]string, len(groups))
		for i, g := range groups {
			codes[i] = string(g.Code)
			if g.Code == filesCode {
				codes[i] = "reading the runs' files"
			}
		}
		blocks = append(blocks, Block{Kind: Para, In: Markdown | HTML, Class: "meta", Lines: []Line{{
			{Text: "Warnings, below the tables: ", Ours: true}, {Text: strings.Join(codes, ", ")}, {Text: ".", Ours: true}}}})
	}
	if page.Report != "" {
		blocks = append(blocks, Block{Kind: Para, In: Text, Lines: []Line{Say("report: " + page.Report)}})
	}
	return Section{ID: SecAnswer, Blocks: blocks}
}

func toneName(t table.Tone) string {
	if c := t.Class(); c != "" {
		return c
	}
	return "plain"
}

// stageFigures is each stage's p95 and CPU per exchange in one line:
// "20/s: p95 32.1 ms, 1.85 CPU-ms per exchange · 40/s: …".
func stageFigures(s *summary.Summary) string {
	var parts []string
	for _, st := range s.Stages {
		label := units.StageLabel(st.TargetRPS) + ": "
		switch r := st.Reported(); {
		case r == nil:
			parts = append(parts, label+"no finished run")
		case r.Requests == 0:
			parts = append(parts, label+"no exchange")
		default:
			parts = append(parts, fmt.Sprintf("%sp95 %s, %s", label, ms(r.LatencyMs.P95), cpuPerExchange(r)))
		}
	}
	return strings.Join(parts, " · ")
}

// costAnswer is the capacity (unless the verdict said it) and the
// marginal cost in one line ("" when neither is known).
func costAnswer(s *summary.Summary, v Verdict) string {
	var parts []string
	if c := s.Capacity; c != nil && !strings.Contains(v.Why, "capacity "+c.Bracket()) {
		parts = append(parts, "capacity "+c.Bracket())
	}
	switch c := s.Cost; {
	case c == nil:
	case c.Curve.Bent():
		parts = append(parts, CostShort(c))
	case c.Fit.OK():
		parts = append(parts, fmt.Sprintf("marginal cost %.3f CPU-ms per exchange (95%% CI %.3f–%.3f)", c.Fit.MarginalCPUMs, c.Fit.MarginalCPUMsCI[0], c.Fit.MarginalCPUMsCI[1]))
	}
	return strings.Join(parts, " · ")
}
