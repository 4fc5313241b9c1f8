package promexport

import (
	"testing"

	"github.com/tokex-dev/tokex/collector/event"
)

// TestStageLabelNamesTheEngineCount (issue 28): a campaign over engine
// counts runs each rate at each count; the stage label keeps them apart.
func TestStageLabelNamesTheEngineCount(t *testing.T) {
	for _, c := range []struct {
		p    event.PlannedRun
		want string
	}{
		{event.PlannedRun{TargetRPS: 100}, "100"},
		{event.PlannedRun{TargetRPS: 100, Replicas: 2}, "100@2"},
		{event.PlannedRun{TargetRPS: 2.5, Replicas: 1}, "2.5@1"},
		{event.PlannedRun{Sanity: true, TargetRPS: 10, Replicas: 2}, "sanity"},
	} {
		if got := stageLabel(c.p); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}
