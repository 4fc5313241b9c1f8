package runner

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// streamDriver answers arrivals one a millisecond for the run's planned
// duration, or until the run stops: agent i's with answer(i).
type streamDriver struct {
	fakeDriver
	agents int
	answer func(agent int) *stats.Request
	sent   atomic.Int64
	cut    atomic.Bool // the run stopped before its end
}

func (d *streamDriver) Run(ctx context.Context, p event.PlannedRun, out Output) (RunResult, error) {
	start := time.Now()
	if s, ok := out.(Scheduler); ok {
		s.Schedule(start)
	}
	total := int(p.Total() / time.Millisecond)
	for k := 0; k < total; k++ {
		if ctx.Err() != nil {
			d.cut.Store(true)
			return RunResult{Started: start, MeasuredStart: start, MeasuredEnd: time.Now()}, ctx.Err()
		}
		r := d.answer(k % d.agents)
		r.Agent, r.Seq, r.Phase, r.ScheduledUS, r.DurationUS = k%d.agents, int64(k), stats.Measured, time.Now().UnixMicro(), 500
		out.Record(r)
		d.sent.Add(1)
		time.Sleep(time.Millisecond)
	}
	return RunResult{Started: start, MeasuredStart: start, MeasuredEnd: start.Add(p.Total())}, nil
}

// runStream runs fakeCampaign on d with a sanity run of sanity.
func runStream(t *testing.T, d *streamDriver, sanity time.Duration) (*summary.Summary, error) {
	t.Helper()
	c := fakeCampaign()
	c.Sanity.Duration = sanity
	w, err := evidence.Create(filepath.Join(t.TempDir(), "c"), []byte("name: fake\n"), evidence.Manifest{CampaignID: "c", Name: c.Name})
	if err != nil {
		t.Fatal(err)
	}
	bus := &event.Bus{}
	bus.Subscribe(w.Consume)
	camp := &Campaign{Cfg: c, ID: "c", Driver: d, Bus: bus, Evidence: w, Tool: "test", SecretSource: "TOKEX_CLIENT_SECRET"}
	return camp.Run(context.Background())
}

func refused(int) *stats.Request {
	return &stats.Request{Status: 401, Outcome: "oauth_error", Detail: "invalid_client", Description: "client authentication failed"}
}

// TestSanityStopsAtRefusedCredentials (issue 23): a sanity run whose every
// response was invalid_client ran its full 30 s before failing. It stops
// after the first 20, saying what the server said and what to check.
func TestSanityStopsAtRefusedCredentials(t *testing.T) {
	synctest.Test(t, testSanityStopsAtRefusedCredentials)
}

func testSanityStopsAtRefusedCredentials(t *testing.T) {
	d := &streamDriver{agents: 10, answer: refused}
	sum, err := runStream(t, d, 30*time.Second) // the default, which ran in full
	want := `sanity run failed: stopped after the first 20 responses, every one oauth_error:invalid_client ("client authentication failed"); ` +
		"the server refused the clients' credentials: check that it has the clients perf-agent-0..9"
	if !errors.Is(err, ErrSanity) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v", err)
	}
	if !d.cut.Load() || d.sent.Load() >= 1000 {
		t.Errorf("the sanity run went on: %d answers, cut short %v", d.sent.Load(), d.cut.Load())
	}
	if sum == nil || sum.Sanity == nil || sum.Sanity.Status != stats.StatusFailed || !strings.Contains(sum.Sanity.Reason, "stopped after the first 20") {
		t.Errorf("sanity run %+v", sum.Sanity)
	}
}

// TestSanityRunsOnWhenSomeClientsWork: 2 of 10 agents' clients work, so
// the responses are not all refusals: the sanity run is not cut short, and
// fails at its end on its success ratio, as before.
func TestSanityRunsOnWhenSomeClientsWork(t *testing.T) {
	synctest.Test(t, testSanityRunsOnWhenSomeClientsWork)
}

func testSanityRunsOnWhenSomeClientsWork(t *testing.T) {
	d := &streamDriver{agents: 10, answer: func(i int) *stats.Request {
		if i < 2 {
			return &stats.Request{Status: 200, Outcome: "ok"}
		}
		return refused(i)
	}}
	_, err := runStream(t, d, time.Second)
	if !errors.Is(err, ErrSanity) || !strings.Contains(err.Error(), "succeeded; most common error: oauth_error:invalid_client") || d.cut.Load() {
		t.Errorf("err %v, cut short %v", err, d.cut.Load())
	}
}
