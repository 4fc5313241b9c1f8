package runner

import (
	"fmt"
	"testing"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// A server that varies its text per request cannot grow a run's
// descriptions without bound: past maxDescriptions they are counted, not kept.
func TestDescriptionsAreBounded(t *testing.T) {
	var d descriptions
	for i := 0; i < 1000; i++ {
		d.record(&stats.Request{Outcome: "oauth_error", Detail: "invalid_grant", Description: fmt.Sprintf("token %d expired", i%100)})
	}
	d.record(&stats.Request{Outcome: "ok", Description: "ignored"})
	d.record(&stats.Request{Outcome: "conn_error", Description: "connection refused"})
	got := d.list()
	if len(got) != maxDescriptions+2 { // the kept ones, then "other" for each error
		t.Fatalf("%d descriptions", len(got))
	}
	var kept, other int64
	for _, e := range got {
		if e.Text == "(other descriptions, not kept)" {
			other += e.Count
		} else {
			kept += e.Count
		}
	}
	if got[0] != (sample.ErrorDescription{Error: "oauth_error:invalid_grant", Text: "token 0 expired", Count: 10}) || kept+other != 1001 {
		t.Errorf("first %+v, %d kept, %d other", got[0], kept, other)
	}
}

// TestDescriptionsCountTheMeasuredPhase (issue 23): top_errors counted the
// measured phase while its descriptions counted the warmup too, so a run
// read "invalid_client ×10 ("client not found" ×40)". Both count the
// measured phase now.
func TestDescriptionsCountTheMeasuredPhase(t *testing.T) {
	var d descriptions
	var rows []stats.Request
	for i := 0; i < 40; i++ {
		phase := stats.Warmup
		if i >= 30 {
			phase = stats.Measured
		}
		rows = append(rows, stats.Request{Seq: int64(i), Phase: phase, ScheduledUS: int64(i) * 1000, Status: 401,
			Outcome: "oauth_error", Detail: "invalid_client", Description: "client not found"})
	}
	for i := range rows {
		d.record(&rows[i])
	}
	m := stats.RunMeta{ID: "01-r1-10rps", Status: stats.StatusDone, ErrorDescriptions: d.list()}
	r := stats.ComputeRun(m, rows, nil, stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99})
	if len(r.TopErrors) != 1 || r.TopErrors[0].Count != 10 || len(r.TopErrors[0].Descriptions) != 1 || r.TopErrors[0].Descriptions[0].Count != 10 {
		t.Errorf("top errors %+v", r.TopErrors)
	}
}
