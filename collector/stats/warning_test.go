package stats

import (
	"encoding/json"
	"testing"
)

func TestWarningJSON(t *testing.T) {
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
