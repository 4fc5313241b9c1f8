package doc

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
)

// Group is one warning code over the whole campaign: the runs it hit, its
// worst value, what it means for the figures and what to do about it,
// and every warning of the code in full (the per-run details).
type Group struct {
	Code    stats.WarningCode
	Runs    []string // counted runs it hit, in the order met
	Sanity  bool     // the sanity run had it too
	Stages  int      // stage_has_failed_run: the stages it names
	Worst   string   // "other processes up to 1.92 of 2 cores"; "" when the code has no figure
	Allowed bool     // the thresholds let it pass
	Details []string // each warning, "run: detail"
	// others and cpus: host_saturated's range of the cores other processes
	// used (each run's average) and the CPUs, for the verdict; top and
	// topWhat: generator_late's worst lag (and which lag), dropped_arrivals'
	// most arrivals dropped in a run.
	othersMin, othersMax float64
	cpus                 int
	top                  float64
	topWhat              string
}

// advice is what a warning code means for the figures and what to do
// about it, in a sentence each. Its order is the order groups are shown:
// what stopped the campaign, then what makes the figures not the
// server's, then the rest.
type advice struct {
	code      stats.WarningCode
	means, do string
}

// filesCode groups what reading the runs' files found (the report's notes):
// no code of summary.json, the report's own.
const filesCode stats.WarningCode = "files"

var advices = []advice{
	{stats.WarnCampaignEnded, "the campaign stopped early: the stages it did not reach are missing",
		"tokex run --resume FOLDER continues it"},
	{stats.WarnTargetUnreachable, "the target stopped answering, so the campaign stopped",
		"check the server and the target with tokex smoke, then resume"},
	{stats.WarnEngineExited, "the server's process exited mid-run: that run failed, its CPU unknown",
		"restart the server, then tokex run --resume FOLDER --pid NEW_PID"},
	{stats.WarnHostSaturated, "latency and CPU per exchange include waiting for this machine",
		"run the server elsewhere, --wait-quiet, fewer agents, ES256 subject tokens, or --allow-warning host_saturated"},
	{stats.WarnGeneratorStarved, "latency includes tokex's generator waiting for a CPU",
		"more CPU for the generator, fewer agents, ES256 subject tokens, or --allow-warning generator_starved"},
	{stats.WarnGeneratorLate, "latency includes tokex's own delay in sending",
		"--premint, ES256 subject tokens, fewer agents, a quieter machine, or --allow-warning generator_late"},
	{stats.WarnEngineCPUImplausible, "the CPU sampled is not the server's (a wrapper or a launcher)",
		"--pid the server's own process, or --pid listen"},
	{stats.WarnSuccessUnknown, "nothing judged the exchanges: success is not a verdict",
		"import k6 results with tokex's checks (docs/k6.md)"},
	{stats.WarnStageFailedRun, "those stages did not pass", "each failed run and why: in the details"},
	{stats.WarnDropped, "the server saw less than the target rate (the in-flight cap was full)",
		"lower the rate, or raise agents.max_in_flight"},
	{stats.WarnTimeoutsHeavy, "the upper latency percentiles are the client's timeout, not the server's answers",
		"lower the rate (the server is overloaded), or raise request.timeout to see its latency"},
	{stats.WarnNoRequests, "no exchange completed in a measured phase", "check the target and the credentials: tokex smoke"},
	{stats.WarnEngineCPUUnknown, "CPU per exchange unknown",
		"name the server's process: --pid, target.pid, target.cgroup or target.metrics_url"},
	{stats.WarnForecastExceeded, "the pre-flight forecast: this machine cannot drive the stage, so the machine sets its figures",
		"drop the stage, or run the server or the load elsewhere"},
	{stats.WarnMarginalCostVaries, "no single CPU-ms per exchange describes this server", "read the cost curve's segments; project within one"},
	{stats.WarnScalingHostBound, "the scaling efficiency measures this machine as much as the server",
		"give each engine its own CPUs and the load generator others (a bigger host, or the cluster: --replicas)"},
	{stats.WarnCPUCounterInvalid, "a CPU counter went back or jumped: the CPU comes from the sampled rates", "look for a server restart or a counter reset"},
	{stats.WarnLatencyPeriodic, "latency waves at a regular period: a periodic stall", "look for timers at that period: idle timeouts, cache refreshes, GC"},
	{stats.WarnLagLowerBound, "some start lags and latencies from schedule are lower bounds", "more k6 VUs, so that it keeps up"},
	{stats.WarnDroppedUnknown, "the dropped count is a lower bound", "keep k6's --summary-export file"},
	{stats.WarnEngineMemoryInflated, "the engine's memory includes tokex's binary", "build tokex-engine beside tokex: go build ./cmd/..."},
	{stats.WarnIncompleteEvidence, "some counts disagree: the figures cover what was read", ""},
	{stats.WarnMalformedInput, "some lines were unreadable and skipped", ""},
	{filesCode, "the charts and per-agent tables lack what is named", ""},
	{stats.WarnNote, "", ""},
}

func adviceOf(c stats.WarningCode) (advice, int) {
	for i, a := range advices {
		if a.code == c {
			return a, i
		}
	}
	return advice{code: c}, len(advices)
}

// Groups gathers the campaign's warnings by code, in the order of
// advices (codes tokex does not know last, as met): the summary's
// warnings (every counted run's and the campaign's), the sanity run's,
// and what only the page knows (the manifest's status, a run cut short,
// a summary recomputed, what reading the runs' files found).
func Groups(s *summary.Summary, page *Page) []Group {
	var ws []stats.Warning
	ended := slices.ContainsFunc(s.Warnings, func(w stats.Warning) bool { return w.Code == stats.WarnCampaignEnded })
	if page.Recomputed {
		ws = append(ws, stats.Warn(stats.WarnCampaignEnded, "", "no summary.json (the campaign did not finish): figures recomputed from the rows, thresholds unknown"))
	}
	if page.Status != summary.CampaignDone && page.Status != "" && !ended {
		ws = append(ws, stats.Warn(stats.WarnCampaignEnded, "", fmt.Sprintf("the campaign is %s%s", page.Status, suffix(page.Reason))))
	}
	sanity := ""
	if r := s.Sanity; r != nil { // the sanity run first, as it ran
		sanity = r.ID
		for _, w := range r.Warnings {
			if w.Run == "" {
				w.Run = r.ID
			}
			ws = append(ws, w)
		}
	}
	ws = append(ws, s.Warnings...)
	for _, r := range allRuns(s) {
		if r.Status == stats.StatusAborted {
			ws = append(ws, stats.Warn(stats.WarnCampaignEnded, r.ID, fmt.Sprintf("was %s%s; it is not reported", r.Status, suffix(r.Reason))))
		}
	}
	for _, n := range page.Notes {
		ws = append(ws, stats.Warn(filesCode, "", n))
	}
	return group(s, ws, sanity)
}

func group(s *summary.Summary, ws []stats.Warning, sanity string) []Group {
	var out []Group
	at := map[stats.WarningCode]int{}
	for _, w := range ws {
		i, ok := at[w.Code]
		if !ok {
			i = len(out)
			at[w.Code] = i
			out = append(out, Group{Code: w.Code, Allowed: s.Thresholds.Allows(w.Code), othersMin: math.Inf(1)})
		}
		g := &out[i]
		line := w.Detail
		if w.Run != "" {
			line = w.Run + ": " + line
		}
		g.Details = append(g.Details, line)
		switch {
		case w.Run == "":
			if w.Code == stats.WarnStageFailedRun {
				g.Stages++
			}
		case w.Run == sanity:
			g.Sanity = true
		case !slices.Contains(g.Runs, w.Run):
			g.Runs = append(g.Runs, w.Run)
		}
		g.measure(w)
	}
	for i := range out {
		out[i].Worst = out[i].worst()
	}
	slices.SortStableFunc(out, func(a, b Group) int {
		_, i := adviceOf(a.Code)
		_, j := adviceOf(b.Code)
		return i - j
	})
	return out
}

// The figures a warning's detail carries (collector/stats writes them;
// evidence written before a code carried one simply lacks it).
var (
	othersRe  = regexp.MustCompile(`on (\d{1,6}) CPUs; processes other than the generator and the engine used (\d{1,6}(?:\.\d{1,6})?) cores on average`)
	lagRe     = regexp.MustCompile(`^(.{1,80}?) (\d{1,9}(?:\.\d{1,6})?) ms exceeds`)
	droppedRe = regexp.MustCompile(`^(\d{1,18}) arrivals dropped`)
)

// measure keeps the worst figure of the warning's detail.
func (g *Group) measure(w stats.Warning) {
	switch w.Code {
	case stats.WarnHostSaturated:
		if m := othersRe.FindStringSubmatch(w.Detail); m != nil && w.Run != "" {
			n, _ := strconv.Atoi(m[1])
			v, err := strconv.ParseFloat(m[2], 64)
			if err == nil && n > 0 {
				g.cpus = max(g.cpus, n)
				g.othersMin, g.othersMax = min(g.othersMin, v), max(g.othersMax, v)
			}
		}
	case stats.WarnGeneratorLate:
		if m := lagRe.FindStringSubmatch(w.Detail); m != nil {
			if v, err := strconv.ParseFloat(m[2], 64); err == nil && v > g.top {
				g.top, g.topWhat = v, m[1]
			}
		}
	case stats.WarnDropped:
		if m := droppedRe.FindStringSubmatch(w.Detail); m != nil {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil {
				g.top = max(g.top, v)
			}
		}
	}
}

// worst says the group's worst figure in words ("" when it has none).
func (g *Group) worst() string {
	switch g.Code {
	case stats.WarnHostSaturated:
		if g.cpus > 0 {
			return fmt.Sprintf("other processes up to %.2f of %d cores", g.othersMax, g.cpus)
		}
	case stats.WarnGeneratorLate:
		if g.topWhat != "" {
			return fmt.Sprintf("%s up to %.1f ms", g.topWhat, g.top)
		}
	case stats.WarnDropped:
		if g.top > 0 {
			return "up to " + units.Thousands(int64(g.top)) + " arrivals in a run"
		}
	}
	return ""
}

// hits says where the group's warnings were: "in 4 of 4 runs and the
// sanity run", "in 2 of 3 stages", "" for a campaign-wide one.
func (g *Group) hits(s *summary.Summary) string {
	var out string
	switch {
	case len(g.Runs) > 0:
		out = g.runsOf(s)
		if g.Sanity {
			out += " and the sanity run"
		}
	case g.Sanity:
		out = "in the sanity run"
	case g.Stages > 0:
		out = fmt.Sprintf("in %d of %d stages", g.Stages, len(s.Stages))
	}
	return out
}

// noteRunes bound the note a group's line quotes.
const noteRunes = 200

// Line is the group in one line: the code, where it hit and its worst
// figure, what it means for the figures, and what to do about it.
func (g *Group) Line(s *summary.Summary) Line {
	a, _ := adviceOf(g.Code)
	name := string(g.Code)
	if g.Code == filesCode {
		name = "reading the runs' files"
	}
	l := Line{{Text: name, Strong: true}}
	sep := " "
	if g.Code == stats.WarnNote { // free text: the first note's first line says what
		first, _, cut := strings.Cut(g.Details[0], "\n")
		if r := []rune(first); len(r) > noteRunes {
			first, cut = string(r[:noteRunes]), true
		}
		more := ""
		switch n := len(g.Details); {
		case n > 1:
			more = fmt.Sprintf(" (%d more in the details)", n-1)
		case cut:
			more = " (in full in the details)"
		}
		return append(l, Span{Text: ": " + first}, Span{Text: more, Ours: true})
	}
	if h := g.hits(s); h != "" && g.Code != stats.WarnCampaignEnded {
		l = append(l, Span{Text: sep + h, Ours: true})
		sep = ", "
	}
	if g.Worst != "" { // figures from the evidence
		l = append(l, Span{Text: sep + g.Worst})
	}
	tail := ""
	if g.Allowed {
		tail += " (allowed by the thresholds)"
	}
	if a.means != "" {
		tail += ": " + a.means
	}
	if a.do != "" {
		tail += " → " + a.do
	}
	if tail != "" {
		l = append(l, Span{Text: tail, Ours: true})
	}
	return l
}

// fold is the group's details under a summary line.
func (g *Group) fold() Fold {
	what := "details"
	if n := len(g.Details); n > 1 {
		what = fmt.Sprintf("%d details", n)
	}
	return Fold{Summary: what, Lines: says(g.Details)}
}

// warningBlocks are the groups as a list, one item per code, each with its
// details folded (the terminal shows the items only).
func warningBlocks(s *summary.Summary, groups []Group) []Block {
	b := Block{Kind: List, Class: "warnings", ID: "warnings"}
	for i := range groups {
		b.Lines = append(b.Lines, groups[i].Line(s))
		b.Folds = append(b.Folds, groups[i].fold())
	}
	return []Block{b}
}
