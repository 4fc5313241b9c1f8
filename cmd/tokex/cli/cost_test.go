package cli

import (
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/tui/headless"
)

// TestLastScreenCostIsTerminalSafe: the capacity search's and the cost's
// lines of tokex run's last screen hold texts from the evidence folder (a
// probe's reason, the server's error) and pass through termsafe like
// every other printed field: an escape sequence in them is shown as text,
// never obeyed (printCost printed them raw).
func TestLastScreenCostIsTerminalSafe(t *testing.T) {
	t.Parallel()
	f, err := evidence.Open("../../../testdata/campaigns/edge-search")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := f.Summary()
	if err != nil {
		t.Fatal(err)
	}
	if s.Capacity == nil || len(s.Capacity.Probes) < 4 {
		t.Fatal("edge-search has no capacity search")
	}
	const hostile = "\x1b]0;owned\x07\x1b[2Jgone\u202e\x9b31m"
	for i := range s.Capacity.Probes {
		s.Capacity.Probes[i].Reason = hostile
		s.Capacity.Probes[i].Noise = hostile
	}
	out := headless.Report(s, "DIR/report.html")
	if !strings.Contains(out, "]0;owned") || !strings.Contains(out, "gone") {
		t.Fatalf("the reason is not printed at all:\n%s", out)
	}
	if i := strings.IndexAny(out, "\x1b\x07\u202e\u009b"); i >= 0 {
		t.Errorf("a control reached the terminal at byte %d: %q", i, out[max(0, i-20):min(len(out), i+20)])
	}
}
