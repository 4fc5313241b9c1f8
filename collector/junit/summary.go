package junit

import (
	"fmt"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
)

// FromSummary is a campaign's verdicts: a suite per stage (a capacity
// search's probed rates are its stages), a case per threshold, failed when
// any counted run of the stage failed it; a run that could not finish is an
// error; a capacity search adds a suite of its probes and the capacity.
func FromSummary(s *summary.Summary, command string) *Suites {
	pkg := "tokex." + command
	d := &Suites{}
	props := []Property{Prop("campaign", s.CampaignID), Prop("target", s.Target), Prop("driver", s.Driver),
		Prop("thresholds", doc.ThresholdsText(s.Thresholds)), Prop("status", s.Status)}
	for _, st := range s.Stages {
		suite := NewSuite(pkg, "stage "+st.Label(), len(d.Suites), stageStart(st, s.Started), props...)
		stageCases(&suite, st, brokenProbe(s.Capacity, st.TargetRPS))
		d.Suites = append(d.Suites, suite)
	}
	if s.Capacity != nil {
		d.Suites = append(d.Suites, capacitySuite(pkg, len(d.Suites), s, props))
	}
	if s.Status != summary.CampaignDone || len(d.Suites) == 0 {
		suite := NewSuite(pkg, "campaign", len(d.Suites), s.Started, props...)
		suite.Add("campaign finished", Err, fmt.Sprintf("campaign %s: %s", s.Status, s.Reason), 0)
		d.Suites = append(d.Suites, suite)
	}
	return d
}

// stageStart is when the stage's first run began.
func stageStart(st *summary.Stage, fallback time.Time) time.Time {
	at := fallback
	for _, r := range st.Runs {
		if !r.Started.IsZero() && (at.IsZero() || r.Started.Before(at)) {
			at = r.Started
		}
	}
	return at
}

// brokenProbe reports a capacity search's rate that broke the objective:
// its failed thresholds are what the search looked for, not a failure.
func brokenProbe(c *curve.Result, rate float64) bool {
	if c == nil {
		return false
	}
	for _, p := range c.Probes {
		if p.Rate == rate && (p.Verdict == curve.Broken || p.Verdict == curve.Hard) {
			return true
		}
	}
	return false
}

// stageCases adds a case per threshold the stage's runs were held to (in
// the runs' order), and one for the runs that could not finish. At a rate a
// capacity search found broken, a failed threshold is skipped, saying so.
func stageCases(suite *Suite, st *summary.Stage, broken bool) {
	var names []string
	seconds := 0.0
	for _, r := range st.Runs {
		seconds += r.MeasuredSeconds
		for _, t := range r.Thresholds {
			if !contains(names, t.Name) {
				names = append(names, t.Name)
			}
		}
	}
	per := seconds / float64(max(len(names), 1))
	for _, name := range names {
		var parts []string
		passed, judged := 0, 0
		var limit float64
		for _, r := range st.Runs {
			for _, t := range r.Thresholds {
				if t.Name != name {
					continue
				}
				judged++
				limit = t.Limit
				mark := "✓"
				if t.Passed {
					passed++
				} else {
					mark = "✗"
				}
				tag := ""
				if r.ID == st.ReportedRun {
					tag = " reported"
				}
				parts = append(parts, fmt.Sprintf("%s %s %g%s", mark, r.ID, t.Actual, tag))
			}
		}
		o, prefix := Pass, ""
		switch {
		case passed < judged && broken:
			o, prefix = Skip, "above the capacity (the search's upper bound): "
		case passed < judged:
			o = Fail
		}
		suite.Add(fmt.Sprintf("%s %g", name, limit), o, fmt.Sprintf("%s%s %g at %s: %d/%s passed (%s)",
			prefix, name, limit, st.Label(), passed, units.Count(judged, "run"), strings.Join(parts, ", ")), per)
	}
	var unfinished []string
	for _, r := range st.Runs {
		if r.Status != stats.StatusDone {
			unfinished = append(unfinished, fmt.Sprintf("%s %s: %s", r.ID, r.Status, r.Reason))
		}
	}
	if len(unfinished) > 0 {
		suite.Add("runs finished", Err, strings.Join(unfinished, "; "), 0)
	} else {
		suite.Add("runs finished", Pass, units.Count(len(st.Runs), "run")+" finished", 0)
	}
}

// capacitySuite is a capacity search: a case per probe (passed when it met
// the objective, skipped when it broke it — what the search looks for — or
// its measurement was invalid) and the capacity, failed when the search
// found none (tokex capacity's exit code 1).
func capacitySuite(pkg string, id int, s *summary.Summary, props []Property) Suite {
	c := s.Capacity
	suite := NewSuite(pkg, "capacity", id, s.Started, props...)
	for i, p := range c.Probes {
		name := fmt.Sprintf("probe %d %s", i+1, curve.RateLabel(p.Rate))
		msg := fmt.Sprintf("%s %s: p95 %.2f ms, p99 %.2f ms, success %.2f %%, achieved %.1f/s", curve.RateLabel(p.Rate), p.Verdict,
			p.P95Ms, p.P99Ms, p.SuccessRatio*100, p.AchievedRPS)
		switch p.Verdict {
		case curve.Broken:
			suite.Add(name, Skip, msg+"; broke "+strings.Join(p.Broken, "; "), 0)
		case curve.Hard:
			suite.Add(name, Skip, msg+"; the target failed outright: "+p.Reason, 0)
		case curve.Invalid:
			suite.Add(name, Skip, msg+"; invalid: "+p.Reason, 0)
		default:
			suite.Add(name, Pass, msg, 0)
		}
	}
	o := Fail
	if s.Status == summary.CampaignDone && (c.Status == curve.StatusFound || c.Status == curve.StatusAboveMax) {
		o = Pass
	}
	suite.Add("capacity", o, c.Line(), 0)
	return suite
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
