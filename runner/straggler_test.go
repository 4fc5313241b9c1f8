package runner_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/runnertest"
)

// stragglerDriver is a fake driver whose previous run's output still
// delivers a row (agent 99) while the next run is under way, as a driver
// goroutine that outlives its run would.
type stragglerDriver struct {
	*runnertest.Driver
	prev runner.Output
}

func (d *stragglerDriver) Run(ctx context.Context, p event.PlannedRun, out runner.Output) (runner.RunResult, error) {
	if d.prev != nil {
		d.prev.Record(&stats.Request{Agent: 99, Phase: stats.Measured, ScheduledUS: time.Now().UnixMicro(), DurationUS: 1, Status: 200, Outcome: "ok"})
	}
	d.prev = out
	return d.Driver.Run(ctx, p, out)
}

// A row of a run that ended never lands in the next run's evidence (on
// main it did: the writer recorded into whatever run was open); the
// campaign's log says how many came late.
func TestARowOfAnEndedRunStaysOutOfTheNext(t *testing.T) {
	c := runnertest.Campaign()
	c.Stages, c.Rounds = []float64{10}, 1
	dir := filepath.Join(t.TempDir(), "c")
	w, err := evidence.Create(dir, []byte("name: fake\n"), evidence.Manifest{CampaignID: "c", Name: c.Name, Driver: "fake", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	bus := &event.Bus{}
	bus.Subscribe(w.Consume)
	var logs []string
	bus.Subscribe(func(e event.Event) {
		if l, ok := e.(event.Log); ok {
			logs = append(logs, l.Message)
		}
	})
	d := &stragglerDriver{Driver: &runnertest.Driver{N: 20}}
	camp := &runner.Campaign{Cfg: c, ID: "c", Driver: d, Bus: bus, Evidence: w, Tool: "test"}
	if _, err := camp.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Manifest.Runs {
		n, stray := 0, 0
		if _, err := f.Requests(r.ID, func(q *stats.Request) {
			n++
			if q.Agent == 99 {
				stray++
			}
		}); err != nil {
			t.Fatal(err)
		}
		if n != 20 || stray != 0 {
			t.Errorf("run %s holds %d rows, %d of them the previous run's", r.ID, n, stray)
		}
	}
	if !strings.Contains(strings.Join(logs, "\n"), "run 00-sanity: 1 row(s) came after the run ended and are not in its evidence") {
		t.Errorf("logs:\n%s", strings.Join(logs, "\n"))
	}
}
