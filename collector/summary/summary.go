// Package summary is the campaign across its runs (summary.json): the
// stages and the reported run of each, the verdict, the cost fit, the
// agentic figures and premium, the scaling over engine counts. The figures
// of each run are collector/stats'.
package summary

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/units"
)

// Stage groups the rounds of one target rate.
type Stage struct {
	TargetRPS float64 `json:"target_rps"`
	// Replicas is the engine count of the stage's runs (0: one size, as found).
	Replicas    int    `json:"replicas,omitempty"`
	ReportedRun string `json:"reported_run"` // see ReportedRunRule; "" when none finished
	// ThresholdsPassed: every run of the stage finished and passed.
	ThresholdsPassed bool `json:"thresholds_passed"`
	// FailedRuns failed their thresholds or could not run (status failed).
	FailedRuns []string     `json:"failed_runs,omitempty"`
	Runs       []*stats.Run `json:"runs"`
	// Workload is the runs' workload when it is not the campaign's own
	// (Run.Workload): a stage of Summary.Variants.
	Workload string `json:"workload,omitempty"`
}

// Reported returns the reported (median) run, or nil.
func (s *Stage) Reported() *stats.Run {
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
	Verified *sample.Verification `json:"verified,omitempty"`
	// Retried: requests sent again after a keep-alive race (Run.Retried).
	Retried int64 `json:"retried,omitempty"`
}

// Summary is summary.json.
type Summary struct {
	SchemaVersion     int              `json:"schema_version"`
	CampaignID        string           `json:"campaign_id"`
	Name              string           `json:"name"`
	Tool              string           `json:"tool"`
	Driver            string           `json:"driver"`
	Target            string           `json:"target"`
	Status            CampaignStatus   `json:"status"`
	Reason            string           `json:"reason,omitempty"` // why the campaign did not finish
	Started           time.Time        `json:"started"`
	Finished          time.Time        `json:"finished"`
	LatencyDefinition string           `json:"latency_definition"`
	SendLagDefinition string           `json:"send_lag_definition"` // what send lag measures with this driver
	ReportedRunRule   string           `json:"reported_run_rule"`
	CPUDefinition     string           `json:"cpu_definition"`
	Thresholds        stats.Thresholds `json:"threshold_limits"`
	ThresholdsPassed  bool             `json:"thresholds_passed"`
	Totals            Totals           `json:"totals"`
	Stages            []*Stage         `json:"stages"`
	// Variants are the stages of the other workloads the campaign ran
	// beside its own (workload.steps, workload.baseline): Stages and every
	// table of them hold the campaign's own workload only.
	Variants []*Stage `json:"variants,omitempty"`
	// Agentic are the figures of chains, a baseline and a mix.
	Agentic  *Agentic        `json:"agentic,omitempty"`
	Sanity   *stats.Run      `json:"sanity,omitempty"` // discarded by protocol
	Warnings []stats.Warning `json:"warnings,omitempty"`
	// Idle is the engine at rest before the first run (campaign.idle).
	Idle *Idle `json:"-"`
	// Cost is the marginal cost: engine cores fitted against the rate.
	Cost *Cost `json:"marginal_cost,omitempty"`
	// Capacity is the result of a capacity search (tokex capacity).
	Capacity *curve.Result `json:"capacity,omitempty"`
	// Projection answers --project RATE from the fit and the capacity.
	Projection *curve.Projection `json:"projection,omitempty"`
	// Scaling is a campaign over engine counts, count by count, with the
	// scaling efficiency (docs/scaling.md); Stages, Cost and Capacity are
	// then those of every count's stages, the base count's cost, and the
	// base count's capacity.
	Scaling *Scaling `json:"scaling,omitempty"`
	// Capacities are the capacity searches of each engine count, and
	// Scales what each scale did (the manifest's scaling): inputs of
	// Scaling, set before BuildSummary.
	Capacities map[int]*curve.Result `json:"-"`
	Scales     []Scale               `json:"-"`
}

// BuildSummary groups runs into stages, picks each stage's median run and
// decides the campaign's verdict. Aborted runs are listed but never
// reported; a campaign with any unfinished planned run does not pass.
func BuildSummary(s *Summary, runs []*stats.Run, complete bool) {
	s.SchemaVersion = stats.SchemaVersion
	s.LatencyDefinition = LatencyDefinition
	s.SendLagDefinition = SendLagDefinition(s.Driver)
	s.ReportedRunRule = ReportedRunRule
	s.CPUDefinition = CPUDefinition
	type stageKey struct {
		replicas int
		rate     float64
		workload string
	}
	byRate := map[stageKey]*Stage{}
	s.Stages, s.Variants = nil, nil
	s.Totals = Totals{}
	passed := complete
	var own []*stats.Run
	for _, r := range runs {
		if r.Sanity {
			s.Sanity = r
			continue
		}
		w := r.Workload()
		key := stageKey{r.Replicas, r.TargetRPS, w}
		st := byRate[key]
		if st == nil {
			st = &Stage{TargetRPS: r.TargetRPS, Workload: w, Replicas: r.Replicas}
			byRate[key] = st
			if w == "" {
				s.Stages = append(s.Stages, st)
			} else {
				s.Variants = append(s.Variants, st)
			}
		}
		if w == "" {
			own = append(own, r)
		}
		st.Runs = append(st.Runs, r)
		if r.Status == stats.StatusDone {
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
	s.sortStages()
	for _, st := range append(slices.Clone(s.Stages), s.Variants...) {
		sort.Slice(st.Runs, func(i, j int) bool { return st.Runs[i].Round < st.Runs[j].Round })
		st.ReportedRun = MedianRun(st.Runs)
		st.judge(s.Thresholds.Known())
		if len(st.FailedRuns) > 0 {
			s.Warnings = append(s.Warnings, st.failedWarning())
		}
	}
	if s.Totals.Exchanges > 0 {
		s.Totals.SuccessRatio = stats.Round4(float64(s.Totals.OK) / float64(s.Totals.Exchanges))
	}
	s.ThresholdsPassed = passed && s.Totals.Runs > 0
	base := baseReplicas(own)
	if base > 0 && s.Capacities != nil {
		s.Capacity = s.Capacities[base]
	}
	s.buildCost(ofReplicas(own, base)) // the campaign's own workload; each workload's is in Agentic.Costs
	s.buildAgentic(runs)
	s.buildScaling(own, base)
}

// sortStages orders the stages by engine count, then rate, and the other
// workloads' stages by workload, count and rate.
func (s *Summary) sortStages() {
	sort.Slice(s.Stages, func(i, j int) bool {
		a, b := s.Stages[i], s.Stages[j]
		if a.Replicas != b.Replicas {
			return a.Replicas < b.Replicas
		}
		return a.TargetRPS < b.TargetRPS
	})
	sort.SliceStable(s.Variants, func(i, j int) bool {
		a, b := s.Variants[i], s.Variants[j]
		if a.Workload != b.Workload {
			return a.Workload < b.Workload
		}
		if a.Replicas != b.Replicas {
			return a.Replicas < b.Replicas
		}
		return a.TargetRPS < b.TargetRPS
	})
}

func (t *Totals) addVerified(v *sample.Verification) {
	if v == nil {
		return
	}
	if t.Verified == nil {
		t.Verified = &sample.Verification{Sample: v.Sample}
	}
	t.Verified.Checked += v.Checked
	t.Verified.Failed += v.Failed
}

// MedianRun selects a stage's reported run (see ReportedRunRule): the
// article's median run by measured p95, except that a failed run never
// ranks better than a passed one, and an even count takes the worse middle.
func MedianRun(runs []*stats.Run) string {
	var done []*stats.Run
	for _, r := range runs {
		if r.Status == stats.StatusDone {
			done = append(done, r)
		}
	}
	if len(done) == 0 {
		return ""
	}
	rank := func(r *stats.Run) int {
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
		if r.Status == stats.StatusFailed || (thresholdsKnown && r.Status == stats.StatusDone && !r.ThresholdsPassed) {
			s.FailedRuns = append(s.FailedRuns, r.ID)
		}
		s.ThresholdsPassed = s.ThresholdsPassed && r.Status == stats.StatusDone && r.ThresholdsPassed
	}
}

// Failed reports whether the run is one of the stage's failed runs.
func (s *Stage) Failed(id string) bool { return slices.Contains(s.FailedRuns, id) }

// failedWarning names the stage's failed runs and what each failed.
func (s *Stage) failedWarning() stats.Warning {
	var parts []string
	for _, r := range s.Runs {
		if !s.Failed(r.ID) {
			continue
		}
		why := r.Reason
		if r.Status == stats.StatusDone {
			why = r.FailedChecks()
		}
		parts = append(parts, r.ID+" ("+why+")")
	}
	return stats.Warn(stats.WarnStageFailedRun, "", fmt.Sprintf("%s: %d of %s failed: %s", s.Label(),
		len(s.FailedRuns), units.Count(len(s.Runs), "run"), strings.Join(parts, "; ")))
}

// Label names the stage: its rate, its workload when it is not the
// campaign's own ("100/s client_credentials", "100/s chain 1"), and its
// engine count in a campaign over engine counts ("500/s, 2 engines").
func (s *Stage) Label() string {
	l := units.StageLabel(s.TargetRPS)
	if s.Workload != "" {
		l += " " + s.Workload
	}
	return l + units.EnginesLabel(s.Replicas)
}
