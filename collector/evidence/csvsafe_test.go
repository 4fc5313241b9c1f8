package evidence

import (
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// TestCSVTextColumnsAreInert is issue 9 item 8: the target chooses the
// error code it answers, and a spreadsheet runs a cell that starts with =,
// +, -, @ (or a tab or CR) as a formula. A detail outside the vocabulary is
// stored as "other"; every other text column gets a leading ' instead.
func TestCSVTextColumnsAreInert(t *testing.T) {
	details := []struct{ in, want string }{
		{"=HYPERLINK(\"http://evil\",\"x\")", "other"},
		{"+1", "other"},
		{"-1", "other"},
		{"@SUM(A1)", "other"},
		{"\t=1", "other"},
		{"the-client-secret", "other"},
		{"invalid_grant", "invalid_grant"},
		{"503", "503"},
	}
	for _, d := range details {
		r := stats.Request{Agent: 1, Seq: 1, Phase: stats.Measured, ScheduledUS: 1, Status: 400, Outcome: "oauth_error", Detail: d.in}
		got, err := ParseRequest(strings.TrimSuffix(string(AppendRequest(nil, &r)), "\n"))
		if err != nil || got.Detail != d.want {
			t.Errorf("detail %q stored as %q (%v), want %q", d.in, got.Detail, err, d.want)
		}
	}
	for _, name := range []string{"=cmd|' /C calc'!A0", "+1", "-1", "@x", "\tx", "\rx"} {
		s := sample.Resource{AtUS: 1, Kind: name, Name: name, Source: name}
		line := string(AppendResource(nil, &s))
		for i, f := range strings.Split(strings.TrimSuffix(line, "\n"), ",") {
			if f != "" && strings.IndexByte("=+-@\t\r", f[0]) >= 0 && i != 3 && i != 4 && i != 5 {
				t.Errorf("column %d of %q starts a formula", i, line)
			}
		}
	}
}
