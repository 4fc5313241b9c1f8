package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/stats"
)

// A sanity run that timed out on a saturated host says the machine may be
// the cause, not only the server.
func TestSanityVerdictNamesTheMachine(t *testing.T) {
	th := stats.Thresholds{SuccessRatio: 0.99}
	st := &stats.Run{Requests: 100, OK: 80, SuccessRatio: 0.8, Dropped: 3}
	err := sanityVerdict(st, th)
	if !errors.Is(err, ErrSanity) || strings.Contains(err.Error(), "machine") {
		t.Fatalf("healthy machine: %v", err)
	}
	st.Warnings = []stats.Warning{stats.Warn(stats.WarnDropped, "s", "3 dropped"), stats.Warn(stats.WarnHostSaturated, "s", "busy"),
		stats.Warn(stats.WarnGeneratorStarved, "s", "waited")}
	want := "80 of 100 exchanges succeeded; 3 dropped; and this machine, not only the server, may be the cause: host_saturated, generator_starved"
	if err := sanityVerdict(st, th); err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v\nwant …%s", err, want)
	}
}
