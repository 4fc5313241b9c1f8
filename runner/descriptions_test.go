package runner

import (
	"fmt"
	"testing"

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
	if got[0] != (stats.ErrorDescription{Error: "oauth_error:invalid_grant", Text: "token 0 expired", Count: 10}) || kept+other != 1001 {
		t.Errorf("first %+v, %d kept, %d other", got[0], kept, other)
	}
}
