package doc

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/table"
	"github.com/tokex-dev/tokex/collector/units"
)

// ThresholdsText renders the limits: "p95 < 500 ms, success ≥ 99%,
// dropped ≤ 0, no generator/host warning".
func ThresholdsText(t stats.Thresholds) string {
	s := fmt.Sprintf("p95 < %g ms, success ≥ %g%%, dropped ≤ %d, no generator/host warning", t.P95Ms, t.SuccessRatio*100, t.MaxDropped)
	if len(t.AllowWarnings) > 0 {
		var codes []string
		for _, c := range t.AllowWarnings {
			codes = append(codes, string(c))
		}
		s += " but " + strings.Join(codes, ", ")
	}
	return s
}

// ErrorKindText renders one of a run's most common failures:
// "oauth_error:invalid_client ×12 ("client authentication failed")".
func ErrorKindText(k stats.ErrorKind) string {
	s := fmt.Sprintf("%s ×%d", k.Error, k.Count)
	if len(k.Descriptions) > 0 {
		var ds []string
		for _, d := range k.Descriptions {
			ds = append(ds, fmt.Sprintf("%q", d.Text))
		}
		s += " (" + strings.Join(ds, ", ") + ")"
	}
	return s
}

// VerdictText is StageVerdict without its tone.
func VerdictText(s *summary.Summary, st *summary.Stage) string { v, _ := StageVerdict(s, st); return v }

// StageVerdict is the stage's verdict in every table, with its tone. In a
// capacity search (Capacity set) a stage is a probe, and its verdict is the
// search's: "✓ pass", "✗ broken: p99 72.8 ms vs 50 ms", "? invalid: …",
// "! hard: …", "… judging" until the probe is judged; the run thresholds
// do not judge a probe. Otherwise it is how the stage's runs fared against
// the thresholds (RunsVerdict).
func StageVerdict(s *summary.Summary, st *summary.Stage) (string, table.Tone) {
	if s.Capacity == nil {
		tone := table.Good
		if len(st.FailedRuns) > 0 {
			tone = table.Bad
		}
		return RunsVerdict(st), tone
	}
	var p *curve.Probe
	for i := range s.Capacity.Probes {
		if x := &s.Capacity.Probes[i]; x.Rate == st.TargetRPS {
			p = x // the search's last word on the rate
		}
	}
	if p == nil || p.Verdict == "" {
		return "… judging", table.Plain // rounds still to run
	}
	return ProbeVerdict(p)
}

// ProbeVerdict is a judged probe's verdict with what broke or why it did
// not count: "✗ broken: p99 72.8 ms vs 50 ms", with its tone.
func ProbeVerdict(p *curve.Probe) (string, table.Tone) {
	mark, tone := ProbeMark(p.Verdict)
	v := mark + " " + string(p.Verdict)
	switch {
	case len(p.Broken) > 0:
		v += ": " + strings.Join(p.Broken, "; ")
	case p.Reason != "":
		v += ": " + p.Reason
	}
	return v, tone
}

// ProbeMark is a probe verdict's mark and tone: ✓ pass, ✗ broken,
// ? invalid, ! hard failure, … not judged yet.
func ProbeMark(v curve.Verdict) (string, table.Tone) {
	switch v {
	case curve.Pass:
		return "✓", table.Good
	case curve.Broken:
		return "✗", table.Bad
	case curve.Invalid:
		return "?", table.Warn
	case curve.Hard:
		return "!", table.Bad
	}
	return "…", table.Plain
}

// RunsVerdict says in a few characters how the stage's runs fared, for
// every table: "✓ 3/3 passed", "✗ 1/3 failed", "2/3 passed, 1 aborted".
func RunsVerdict(s *summary.Stage) string {
	var passed, aborted int
	for _, r := range s.Runs {
		switch {
		case r.Status == stats.StatusDone && r.ThresholdsPassed:
			passed++
		case r.Status == stats.StatusAborted:
			aborted++
		}
	}
	n := len(s.Runs)
	var v string
	switch {
	case len(s.FailedRuns) > 0:
		v = fmt.Sprintf("✗ %d/%d failed", len(s.FailedRuns), n)
	case passed == n:
		return fmt.Sprintf("✓ %d/%d passed", passed, n)
	default:
		v = fmt.Sprintf("%d/%d passed", passed, n)
	}
	if aborted > 0 {
		v += fmt.Sprintf(", %d aborted", aborted)
	}
	return v
}

// cpuSources name, in one short label each, the sources resource samples
// carry (collector/proc's kinds, the kube driver's, the k6 import's).
var cpuSources = []struct{ source, label string }{
	{"proc-tree", "pid tree"}, {"proc", "pid"}, {"cgroup", "cgroup"}, {"prometheus", "prometheus"}, {sample.SourcePromQL, "promql"},
	{"metrics-server", "metrics-server"}, {"kubelet", "kubelet"}, {"monitor-csv", "monitor CSV"},
}

// SourceLabel says how the engine CPU was measured in one short label:
// "pid tree", "cgroup", "prometheus", "metrics-server"…; several sources
// joined by "+", "other" for one this tokex does not know (evidence is not
// trusted to name itself), "n/a" when the evidence does not say.
func SourceLabel(c *stats.CPU) string {
	if c == nil || c.Source == "" {
		return "n/a"
	}
	var labels []string
	for _, part := range strings.Split(c.Source, ", ") {
		label := "other"
		for _, k := range cpuSources {
			if part == k.source || strings.HasPrefix(part, k.source+" ") {
				label = k.label
				break
			}
		}
		if !slices.Contains(labels, label) {
			labels = append(labels, label)
		}
	}
	return strings.Join(labels, "+")
}

// SpreadLine is the article's per-run p95 line: "100/s: 7.23/7.54/7.72 ms · …".
// When a run failed (marked ✗) or has no figures, every entry carries its
// own unit or status: "100/s: 7.23 ms / 4.90 ms ✗ / aborted".
func SpreadLine(s *summary.Summary) string {
	var parts []string
	for _, st := range s.Stages {
		plain := true
		for _, r := range st.Runs {
			_, num, failed := spreadEntry(st, r)
			plain = plain && num && !failed
		}
		var ps []string
		for _, r := range st.Runs {
			v, num, failed := spreadEntry(st, r)
			if !plain && num {
				v += " ms"
			}
			if failed {
				v += " ✗"
			}
			ps = append(ps, v)
		}
		if plain {
			parts = append(parts, st.Label()+": "+strings.Join(ps, "/")+" ms")
		} else {
			parts = append(parts, st.Label()+": "+strings.Join(ps, " / "))
		}
	}
	return strings.Join(parts, " · ")
}

// Spread is the p95 (ms) of each run of the stage in round order, as the
// dashboard and the report show it: "7.23", a failed run "4.90 ✗", a run
// without figures its status ("aborted") or "no exchange".
func Spread(s *summary.Stage) []string {
	out := make([]string, 0, len(s.Runs))
	for _, r := range s.Runs {
		v, _, failed := spreadEntry(s, r)
		if failed {
			v += " ✗"
		}
		out = append(out, v)
	}
	return out
}

func spreadEntry(s *summary.Stage, r *stats.Run) (v string, number, failed bool) {
	failed = s.Failed(r.ID)
	switch {
	case r.Status != stats.StatusDone:
		return string(r.Status), false, failed
	case r.Requests == 0:
		return "no exchange", false, failed
	}
	return fmt.Sprintf("%.2f", r.LatencyMs.P95), true, failed
}

// RetriedLabel and RetriedMeaning name and explain Run.Retried wherever
// error counts are shown.
const (
	RetriedLabel   = "retried (not an error)"
	RetriedMeaning = "sent again on a new connection: the kept-alive one it went out on was closed by the server before any answer (a keep-alive race)"
)

// RetriedLine is a run's retried count in a sentence; "" when none.
func RetriedLine(r *stats.Run) string {
	if r.Retried == 0 {
		return ""
	}
	return fmt.Sprintf("%s× %s: %s", units.Thousands(r.Retried), RetriedLabel, RetriedMeaning)
}

// RetriedNote is ", N retried after a keep-alive race (not errors)" for
// a campaign's totals; "" when none.
func RetriedNote(t summary.Totals) string {
	if t.Retried == 0 {
		return ""
	}
	return fmt.Sprintf(", %s retried after a keep-alive race (not errors)", units.Thousands(t.Retried))
}

// VerifiedLine says how many issued tokens the campaign verified, "" when
// it verified none.
func VerifiedLine(t summary.Totals) string {
	v := t.Verified
	if v == nil {
		return ""
	}
	return fmt.Sprintf("issued tokens verified: %s (%.4g %% of the successes, picked at random), %s failed",
		units.Thousands(v.Checked), v.Sample*100, units.Thousands(v.Failed))
}

// CostLines are the capacity, the marginal cost and the projection in
// words, for terminals, summary.md and the report.
func CostLines(s *summary.Summary) []string {
	var out []string
	if s.Capacity != nil {
		out = append(out, s.Capacity.Line())
	}
	out = append(out, costLines(s.Cost)...)
	if s.Scaling != nil && len(out) > 0 { // a campaign over engine counts: the figures above are its smallest count's
		out[0] = fmt.Sprintf("%d engine(s), the smallest count measured: %s", s.Scaling.Base, out[0])
	}
	out = append(out, ScalingLines(s.Scaling)...)
	if s.Projection != nil {
		out = append(out, s.Projection.Line+" — assuming "+strings.Join(s.Projection.Assumptions, "; "))
	}
	return out
}

// maxLeftOutRates is how many rates of left-out runs the words name.
const maxLeftOutRates = 8

// costLines are the marginal cost in words: the fit, the idle engine
// beside its intercept, and the observed figure beside the slope.
func costLines(c *summary.Cost) []string {
	if c == nil {
		return nil
	}
	out := []string{c.Fit.Line()}
	bent := c.Curve.Bent()
	if bent {
		out = []string{c.Curve.Line(), c.Curve.BandLine()}
	}
	if c.Idle != nil {
		l := fmt.Sprintf("engine at rest: %.3f cores over %s (%s)", c.Idle.Cores, c.Idle.End.Sub(c.Idle.Start).Round(time.Second), c.Idle.Method)
		switch first := firstSegment(c.Curve); {
		case bent && first != nil && first.Marginal != nil:
			l += fmt.Sprintf("; the curve's first straight line (%s) extrapolated to rate 0 gives %.3f cores, %+.3f",
				curve.RangeLabel(first.From, first.To), first.Intercept, first.Intercept-c.Idle.Cores)
		case !bent && c.Fit.OK():
			l += fmt.Sprintf("; the fit's fixed cost %.3f cores differs by %+.3f", c.Fit.FixedCores, c.Fit.FixedCores-c.Idle.Cores)
		}
		out = append(out, l)
	}
	if n := len(c.LeftOut); n > 0 {
		rates := make([]float64, n)
		for i, l := range c.LeftOut {
			rates[i] = l.TargetRPS
		}
		slices.Sort(rates) // n log n: a summary.json read from disk may list many
		rates = slices.Compact(rates)
		var labels []string
		for _, r := range rates[:min(len(rates), maxLeftOutRates)] {
			labels = append(labels, units.StageLabel(r))
		}
		if more := len(rates) - len(labels); more > 0 {
			labels = append(labels, fmt.Sprintf("and %d more rates", more))
		}
		out = append(out, fmt.Sprintf("left out of the fit: %s of the probes that broke the objective (%s): at the engine's ceiling they measure it, not the cost",
			units.Count(n, "run"), strings.Join(labels, ", ")))
	}
	if len(c.Observed) > 0 {
		var parts []string
		for _, o := range c.Observed {
			parts = append(parts, fmt.Sprintf("%s %.3f", units.StageLabel(o.TargetRPS), o.CPUMs))
		}
		out = append(out, "observed CPU-ms per exchange, fixed cost included (the article's figure): "+strings.Join(parts, ", "))
	}
	return out
}

func firstSegment(c *curve.Curve) *curve.Segment {
	if c == nil || len(c.Segments) == 0 {
		return nil
	}
	return &c.Segments[0]
}

// CostShort is the marginal cost in one line for a dashboard panel: the
// straight line's slope, or the curve's segments when no single line
// holds ("" when neither can be given).
func CostShort(c *summary.Cost) string {
	switch {
	case c == nil:
		return ""
	case c.Curve.Bent():
		var parts []string
		for _, s := range c.Curve.Segments {
			if s.Marginal != nil {
				parts = append(parts, fmt.Sprintf("%.3g over %s", s.Marginal.CPUMs, curve.RangeLabel(s.From, s.To)))
			}
		}
		return "marginal CPU-ms/ex " + c.Curve.Direction() + ": " + strings.Join(parts, " · ")
	case c.Fit.OK():
		return fmt.Sprintf("marginal %.3f CPU-ms/ex (95%% CI %.3f–%.3f) · fixed %.3f cores", c.Fit.MarginalCPUMs,
			c.Fit.MarginalCPUMsCI[0], c.Fit.MarginalCPUMsCI[1], c.Fit.FixedCores)
	}
	return ""
}

// ms formats milliseconds with one decimal as in the article, more below 1 ms.
func ms(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// pct2 and ms2 are the run tables' two-decimal ratio and milliseconds.
func pct2(v float64) string { return fmt.Sprintf("%.2f%%", v*100) }
func ms2(v float64) string  { return fmt.Sprintf("%.2f ms", v) }
