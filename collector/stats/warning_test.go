package stats

import (
	"encoding/json"
	"testing"
	"time"
)

func TestWarningJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want Warning
		text string
	}{
		{`"01-r1-100rps: 3 arrivals dropped"`, Warning{Code: WarnNote, Detail: "01-r1-100rps: 3 arrivals dropped"}, "01-r1-100rps: 3 arrivals dropped"},
		{`{"code":"dropped_arrivals","run":"01-r1-100rps","detail":"3 arrivals dropped"}`,
			Warning{Code: WarnDropped, Run: "01-r1-100rps", Detail: "3 arrivals dropped"}, "01-r1-100rps: 3 arrivals dropped [dropped_arrivals]"},
		{`{"code":"campaign_unfinished","detail":"campaign aborted: interrupted"}`,
			Warning{Code: WarnCampaignEnded, Detail: "campaign aborted: interrupted"}, "campaign aborted: interrupted [campaign_unfinished]"},
		// Evidence written before the pre-flight estimate was renamed.
		{`{"code":"capacity_exceeded","run":"03-r1-500rps","detail":"500/s exceeds the pre-flight estimate"}`,
			Warning{Code: WarnForecastExceeded, Run: "03-r1-500rps", Detail: "500/s exceeds the pre-flight estimate"}, "03-r1-500rps: 500/s exceeds the pre-flight estimate [forecast_exceeded]"},
	}
	for _, c := range cases {
		var w Warning
		if err := json.Unmarshal([]byte(c.in), &w); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if w != c.want {
			t.Errorf("%s: got %+v, want %+v", c.in, w, c.want)
		}
		if w.String() != c.text {
			t.Errorf("%s: text %q, want %q", c.in, w.String(), c.text)
		}
	}
	if err := json.Unmarshal([]byte(`42`), new(Warning)); err == nil {
		t.Error("a number is not a warning")
	}
}

func TestInvalidatingWarningFailsUnlessAllowed(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	m := RunMeta{ID: "r", TargetRPS: 10, Status: StatusDone, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(time.Second)}
	var reqs []Request
	for i := 0; i < 10; i++ {
		reqs = append(reqs, Request{Seq: int64(i), Phase: Measured, ScheduledUS: start.UnixMicro() + int64(i)*100_000, SendLagUS: 50, DurationUS: 1000, Status: 200, Outcome: "ok"})
	}
	th := Thresholds{P95Ms: 500, SuccessRatio: 0.99}
	cases := []struct {
		name   string
		warn   WarningCode
		allow  []WarningCode
		passed bool
	}{
		{"no warning", "", nil, true},
		{"informative warning", WarnForecastExceeded, nil, true},
		{"generator late", WarnGeneratorLate, nil, false},
		{"generator starved", WarnGeneratorStarved, []WarningCode{WarnGeneratorLate}, false},
		{"host saturated, allowed", WarnHostSaturated, []WarningCode{WarnHostSaturated}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mm := m
			if c.warn != "" {
				mm.Warnings = []Warning{Warn(c.warn, "", "from the driver")}
			}
			tt := th
			tt.AllowWarnings = c.allow
			r := ComputeRun(mm, reqs, nil, tt)
			if r.ThresholdsPassed != c.passed {
				t.Errorf("passed = %v, want %v (%+v)", r.ThresholdsPassed, c.passed, r.Thresholds)
			}
			last := r.Thresholds[len(r.Thresholds)-1]
			if last.Name != "disallowed warnings <=" || last.Passed != c.passed {
				t.Errorf("warnings check = %+v", last)
			}
		})
	}
}
