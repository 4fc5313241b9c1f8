package stats

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
)

// SchemaVersion of summary.json and stats.json; bump on incompatible change.
const SchemaVersion = 2 // 2: warnings are {code, run, detail}

// LatencyDefinition is stated in every summary so nobody has to guess.
const LatencyDefinition = "latency_ms: from the moment the request is sent to the full response, " +
	"like k6's http_req_duration; latency_from_schedule_ms: from the arrival's scheduled time " +
	"(includes any send lag, free of coordinated omission). Percentiles are exact " +
	"(linear interpolation between closest ranks), measured phase only."

// ReportedRunRule is how each stage's reported run is chosen, stated in
// every summary.
const ReportedRunRule = "the median of the stage's finished runs ordered by verdict, then measured p95: " +
	"a run that failed its thresholds ranks after every run that passed (a dead target answers fast), " +
	"a run without a completed exchange last; of an even count the upper middle run, the worse one"

// Stage groups the rounds of one target rate.
type Stage struct {
	TargetRPS   float64 `json:"target_rps"`
	ReportedRun string  `json:"reported_run"` // see ReportedRunRule; "" when none finished
	// ThresholdsPassed: every run of the stage finished and passed.
	ThresholdsPassed bool `json:"thresholds_passed"`
	// FailedRuns failed their thresholds or could not run (status failed).
	FailedRuns []string `json:"failed_runs,omitempty"`
	Runs       []*Run   `json:"runs"`
}

// Reported returns the reported (median) run, or nil.
func (s *Stage) Reported() *Run {
	for _, r := range s.Runs {
		if r.ID == s.ReportedRun {
			return r
		}
	}
	return nil
}

// Totals are campaign-wide counts over counted runs (sanity excluded).
type Totals struct {
	Runs         int     `json:"runs"`
	Exchanges    int64   `json:"exchanges"` // measured phase
	OK           int64   `json:"ok"`
	SuccessRatio float64 `json:"success_ratio"`
	Dropped      int64   `json:"dropped"`
	// Verified sums the runs' verified tokens (check.verify), nil when
	// none were verified.
	Verified *Verification `json:"verified,omitempty"`
	// Retried: requests sent again after a keep-alive race (Run.Retried).
	Retried int64 `json:"retried,omitempty"`
}

// VerifiedLine says how many issued tokens the campaign verified, "" when
// it verified none.
func (t Totals) VerifiedLine() string {
	v := t.Verified
	if v == nil {
		return ""
	}
	return fmt.Sprintf("issued tokens verified: %s (%.4g %% of the successes, picked at random), %s failed",
		Thousands(v.Checked), v.Sample*100, Thousands(v.Failed))
}

// Summary is summary.json.
type Summary struct {
	SchemaVersion     int            `json:"schema_version"`
	CampaignID        string         `json:"campaign_id"`
	Name              string         `json:"name"`
	Tool              string         `json:"tool"`
	Driver            string         `json:"driver"`
	Target            string         `json:"target"`
	Status            CampaignStatus `json:"status"`
	Reason            string         `json:"reason,omitempty"` // why the campaign did not finish
	Started           time.Time      `json:"started"`
	Finished          time.Time      `json:"finished"`
	LatencyDefinition string         `json:"latency_definition"`
	SendLagDefinition string         `json:"send_lag_definition"` // what send lag measures with this driver
	ReportedRunRule   string         `json:"reported_run_rule"`
	CPUDefinition     string         `json:"cpu_definition"`
	Thresholds        Thresholds     `json:"threshold_limits"`
	ThresholdsPassed  bool           `json:"thresholds_passed"`
	Totals            Totals         `json:"totals"`
	Stages            []*Stage       `json:"stages"`
	Sanity            *Run           `json:"sanity,omitempty"` // discarded by protocol
	Warnings          []Warning      `json:"warnings,omitempty"`
	// Idle is the engine at rest before the first run (campaign.idle).
	Idle *Idle `json:"-"`
	// Cost is the marginal cost: engine cores fitted against the rate.
	Cost *Cost `json:"marginal_cost,omitempty"`
	// Capacity is the result of a capacity search (tokex capacity).
	Capacity *curve.Result `json:"capacity,omitempty"`
	// Projection answers --project RATE from the fit and the capacity.
	Projection *curve.Projection `json:"projection,omitempty"`
}

// BuildSummary groups runs into stages, picks each stage's median run and
// decides the campaign's verdict. Aborted runs are listed but never
// reported; a campaign with any unfinished planned run does not pass.
func BuildSummary(s *Summary, runs []*Run, complete bool) {
	s.SchemaVersion = SchemaVersion
	s.LatencyDefinition = LatencyDefinition
	s.SendLagDefinition = SendLagDefinition(s.Driver)
	s.ReportedRunRule = ReportedRunRule
	s.CPUDefinition = CPUDefinition
	byRate := map[float64]*Stage{}
	s.Stages = nil
	s.Totals = Totals{}
	passed := complete
	for _, r := range runs {
		if r.Sanity {
			s.Sanity = r
			continue
		}
		st := byRate[r.TargetRPS]
		if st == nil {
			st = &Stage{TargetRPS: r.TargetRPS}
			byRate[r.TargetRPS] = st
			s.Stages = append(s.Stages, st)
		}
		st.Runs = append(st.Runs, r)
		if r.Status == StatusDone {
			s.Totals.Runs++
			s.Totals.Exchanges += r.Requests
			s.Totals.OK += r.OK
			s.Totals.Dropped += r.Dropped
			s.Totals.addVerified(r.Verification)
			s.Totals.Retried += r.Retried
		}
		passed = passed && r.ThresholdsPassed
		s.Warnings = append(s.Warnings, r.Warnings...)
	}
	sort.Slice(s.Stages, func(i, j int) bool { return s.Stages[i].TargetRPS < s.Stages[j].TargetRPS })
	for _, st := range s.Stages {
		sort.Slice(st.Runs, func(i, j int) bool { return st.Runs[i].Round < st.Runs[j].Round })
		st.ReportedRun = MedianRun(st.Runs)
		st.judge(s.Thresholds.Known())
		if len(st.FailedRuns) > 0 {
			s.Warnings = append(s.Warnings, st.failedWarning())
		}
	}
	if s.Totals.Exchanges > 0 {
		s.Totals.SuccessRatio = round4(float64(s.Totals.OK) / float64(s.Totals.Exchanges))
	}
	s.ThresholdsPassed = passed && s.Totals.Runs > 0
	s.buildCost(runs)
}

func (t *Totals) addVerified(v *Verification) {
	if v == nil {
		return
	}
	if t.Verified == nil {
		t.Verified = &Verification{Sample: v.Sample}
	}
	t.Verified.Checked += v.Checked
	t.Verified.Failed += v.Failed
}

// MedianRun selects a stage's reported run (see ReportedRunRule): the
// article's median run by measured p95, except that a failed run never
// ranks better than a passed one, and an even count takes the worse middle.
func MedianRun(runs []*Run) string {
	var done []*Run
	for _, r := range runs {
		if r.Status == StatusDone {
			done = append(done, r)
		}
	}
	if len(done) == 0 {
		return ""
	}
	rank := func(r *Run) int {
		switch {
		case r.Requests == 0:
			return 2
		case !r.ThresholdsPassed:
			return 1
		}
		return 0
	}
	sort.SliceStable(done, func(i, j int) bool {
		a, b := done[i], done[j]
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		if a.LatencyMs.P95 != b.LatencyMs.P95 {
			return a.LatencyMs.P95 < b.LatencyMs.P95
		}
		return a.Round < b.Round
	})
	return done[len(done)/2].ID
}

// judge sets the stage's verdict from its runs. With unknown thresholds
// (a summary recomputed without them) only runs that could not run fail.
func (s *Stage) judge(thresholdsKnown bool) {
	s.FailedRuns = nil
	s.ThresholdsPassed = len(s.Runs) > 0
	for _, r := range s.Runs {
		if r.Status == StatusFailed || (thresholdsKnown && r.Status == StatusDone && !r.ThresholdsPassed) {
			s.FailedRuns = append(s.FailedRuns, r.ID)
		}
		s.ThresholdsPassed = s.ThresholdsPassed && r.Status == StatusDone && r.ThresholdsPassed
	}
}

// Failed reports whether the run is one of the stage's failed runs.
func (s *Stage) Failed(id string) bool { return slices.Contains(s.FailedRuns, id) }

// Verdict says in a few characters how the stage's runs fared, for every
// table: "✓ 3/3 passed", "✗ 1/3 failed", "2/3 passed, 1 aborted".
func (s *Stage) Verdict() string {
	var passed, aborted int
	for _, r := range s.Runs {
		switch {
		case r.Status == StatusDone && r.ThresholdsPassed:
			passed++
		case r.Status == StatusAborted:
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

// failedWarning names the stage's failed runs and what each failed.
func (s *Stage) failedWarning() Warning {
	var parts []string
	for _, r := range s.Runs {
		if !s.Failed(r.ID) {
			continue
		}
		why := r.Reason
		if r.Status == StatusDone {
			why = r.FailedChecks()
		}
		parts = append(parts, r.ID+" ("+why+")")
	}
	return Warn(WarnStageFailedRun, "", fmt.Sprintf("%s: %d of %d runs failed: %s", StageLabel(s.TargetRPS),
		len(s.FailedRuns), len(s.Runs), strings.Join(parts, "; ")))
}

// StageLabel renders a rate like the article: "500/s".
func StageLabel(rps float64) string {
	if rps == float64(int64(rps)) {
		return fmt.Sprintf("%d/s", int64(rps))
	}
	return fmt.Sprintf("%.1f/s", rps)
}

// ms formats milliseconds with one decimal as in the article, more below 1 ms.
func ms(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// Thousands formats 150008 as 150,008. It works on the decimal digits, so
// every int64 has a form (negating math.MinInt64 would overflow).
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i := 0; i < len(s); i++ {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// SpreadLine is the article's per-run p95 line: "100/s: 7.23/7.54/7.72 ms · …".
// When a run failed (marked ✗) or has no figures, every entry carries its
// own unit or status: "100/s: 7.23 ms / 4.90 ms ✗ / aborted".
func (s *Summary) SpreadLine() string {
	var parts []string
	for _, st := range s.Stages {
		plain := true
		for _, r := range st.Runs {
			_, num, failed := st.spreadEntry(r)
			plain = plain && num && !failed
		}
		var ps []string
		for _, r := range st.Runs {
			v, num, failed := st.spreadEntry(r)
			if !plain && num {
				v += " ms"
			}
			if failed {
				v += " ✗"
			}
			ps = append(ps, v)
		}
		if plain {
			parts = append(parts, StageLabel(st.TargetRPS)+": "+strings.Join(ps, "/")+" ms")
		} else {
			parts = append(parts, StageLabel(st.TargetRPS)+": "+strings.Join(ps, " / "))
		}
	}
	return strings.Join(parts, " · ")
}

// Spread is the p95 (ms) of each run of the stage in round order, as the
// TUI and the report show it: "7.23", a failed run "4.90 ✗", a run without
// figures its status ("aborted") or "no exchange".
func (s *Stage) Spread() []string {
	out := make([]string, 0, len(s.Runs))
	for _, r := range s.Runs {
		v, _, failed := s.spreadEntry(r)
		if failed {
			v += " ✗"
		}
		out = append(out, v)
	}
	return out
}

func (s *Stage) spreadEntry(r *Run) (v string, number, failed bool) {
	failed = s.Failed(r.ID)
	switch {
	case r.Status != StatusDone:
		return string(r.Status), false, failed
	case r.Requests == 0:
		return "no exchange", false, failed
	}
	return fmt.Sprintf("%.2f", r.LatencyMs.P95), true, failed
}

// BytesIEC formats a byte count as KiB, MiB or GiB.
func BytesIEC(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%d KiB", b>>10)
	}
}

// Markdown renders summary.md: the article's two tables and the spread line.
func (s *Summary) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# tokex campaign %s\n\n", s.CampaignID)
	status := string(s.Status)
	if s.Reason != "" {
		status += " (" + s.Reason + ")"
	}
	fmt.Fprintf(&b, "- name: %s\n- driver: %s\n- target: %s\n- status: %s\n- started: %s, finished: %s\n",
		s.Name, s.Driver, s.Target, status, s.Started.UTC().Format(time.RFC3339), s.Finished.UTC().Format(time.RFC3339))
	verdict := "PASSED"
	if !s.ThresholdsPassed {
		verdict = "FAILED"
	}
	fmt.Fprintf(&b, "- thresholds (%s): **%s**\n", s.Thresholds, verdict)
	fmt.Fprintf(&b, "- %s exchanges in %d counted runs, %.2f%% success, %s dropped%s\n",
		Thousands(s.Totals.Exchanges), s.Totals.Runs, s.Totals.SuccessRatio*100, Thousands(s.Totals.Dropped), s.Totals.RetriedNote())
	if l := s.Totals.VerifiedLine(); l != "" {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("\n")
	b.WriteString("## Latency by stage\n\nReported run per stage: " + ReportedRunRule + ". Measured phase only, warmup excluded; latency from send time. " +
		"Runs: how many of the stage's runs passed their thresholds (✗: some failed).\n\n")
	b.WriteString(s.LatencyTable().Markdown())
	b.WriteString("\nPer-run p95: " + s.SpreadLine() + "\n\n")
	b.WriteString("### From the scheduled time (coordinated-omission-free)\n\n")
	b.WriteString(s.ScheduleTable().Markdown())
	b.WriteString("\n## Resource consumption\n\nReported run per stage. CPU per exchange = engine CPU in the measured window ÷ completed exchanges.\n\n")
	b.WriteString(s.ResourceTable().Markdown())
	s.costMarkdown(&b)
	if len(s.Warnings) > 0 {
		b.WriteString("\n## Warnings\n\n")
		for _, w := range s.Warnings {
			b.WriteString("- " + w.String() + "\n")
		}
	}
	b.WriteString("\n---\n" + LatencyDefinition + "\n\n" + SendLagDefinition(s.Driver) + "\n")
	return b.String()
}
