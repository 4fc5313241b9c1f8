package local

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// fakeClock is the scheduler's clock in tests: it records what it was
// asked to wait for and returns at once; at the arrival cancelAt it
// cancels the run.
type fakeClock struct {
	asked    []time.Time
	cancelAt int
	cancel   context.CancelFunc
}

func (c *fakeClock) until(_ context.Context, at time.Time) {
	c.asked = append(c.asked, at)
	if c.cancel != nil && len(c.asked) == c.cancelAt {
		c.cancel()
	}
}

// pacedGen is a generator of n agents whose queues nobody serves.
func pacedGen(n, maxInFlight int) *Generator {
	g := &Generator{MaxInFlight: maxInFlight}
	for i := 0; i < n; i++ {
		g.Agents = append(g.Agents, &Agent{Index: i, work: make(chan job, maxInFlight)})
	}
	return g
}

type dropLog struct {
	agents []int
	jobs   []job
}

func (d *dropLog) add(a *Agent, j job) {
	d.agents = append(d.agents, a.Index)
	d.jobs = append(d.jobs, j)
}

func TestPaceSchedulesRoundRobinAndDropsAtTheCap(t *testing.T) {
	g := pacedGen(3, 2)
	g.Agents[1].inFlight.Store(2) // agent 1's cap is full from the start
	clock := &fakeClock{}
	drops := &dropLog{}
	var wg sync.WaitGroup
	start := time.Unix(1700000000, 0)
	p := event.PlannedRun{TargetRPS: 100, Warmup: 50 * time.Millisecond, Duration: 70 * time.Millisecond}
	g.pace(context.Background(), p, start, arrivalsIn(p.TargetRPS, p.Total()), clock, drops.add, &wg)

	if len(clock.asked) != 12 {
		t.Fatalf("waited for %d arrivals, want 12", len(clock.asked))
	}
	for k, at := range clock.asked {
		if want := start.Add(time.Duration(k) * 10 * time.Millisecond); !at.Equal(want) {
			t.Errorf("arrival %d at %v, want %v", k, at.Sub(start), want.Sub(start))
		}
	}
	// Agents 0 and 2 take two jobs each (their cap), then drop; agent 1 drops all.
	sent := map[int][]job{}
	for _, a := range g.Agents {
		close(a.work)
		for j := range a.work {
			sent[a.Index] = append(sent[a.Index], j)
		}
	}
	phase := func(k int) stats.Phase {
		if k < 5 {
			return stats.Warmup
		}
		return stats.Measured
	}
	check := func(what string, j job, k int) {
		t.Helper()
		want := job{at: start.Add(time.Duration(k) * 10 * time.Millisecond), seq: int64(k / 3), phase: phase(k)}
		if j != want {
			t.Errorf("%s: %+v, want arrival %d: %+v", what, j, k, want)
		}
	}
	wantSent := map[int][]int{0: {0, 3}, 2: {2, 5}}
	for a, ks := range wantSent {
		if len(sent[a]) != len(ks) {
			t.Fatalf("agent %d got %d jobs, want %d", a, len(sent[a]), len(ks))
		}
		for i, k := range ks {
			check("sent", sent[a][i], k)
		}
	}
	wantDrops := []int{1, 4, 6, 7, 8, 9, 10, 11}
	if len(drops.jobs) != len(wantDrops) {
		t.Fatalf("%d drops, want %d", len(drops.jobs), len(wantDrops))
	}
	for i, k := range wantDrops {
		check("dropped", drops.jobs[i], k)
		if drops.agents[i] != k%3 {
			t.Errorf("drop %d: agent %d, want %d", i, drops.agents[i], k%3)
		}
	}
	for i, want := range []int64{2, 4, 2} {
		if got := g.Agents[i].dropped.Load(); got != want {
			t.Errorf("agent %d: %d dropped, want %d", i, got, want)
		}
	}
	if got := g.Agents[0].inFlight.Load() + g.Agents[2].inFlight.Load(); got != 4 {
		t.Errorf("in flight %d, want 4", got)
	}
}

func TestPaceStopsWhenCancelled(t *testing.T) {
	g := pacedGen(2, 100)
	ctx, cancel := context.WithCancel(context.Background())
	clock := &fakeClock{cancelAt: 5, cancel: cancel}
	var wg sync.WaitGroup
	g.pace(ctx, event.PlannedRun{TargetRPS: 1000, Duration: time.Second}, time.Now(), 1000, clock, (&dropLog{}).add, &wg)
	// The fifth arrival's wait ended in the cancel: it is still handed out
	// (a worker records it aborted), and nothing after it.
	if len(clock.asked) != 5 {
		t.Errorf("waited for %d arrivals after a cancel at the 5th", len(clock.asked))
	}
	if n := len(g.Agents[0].work) + len(g.Agents[1].work); n != 5 {
		t.Errorf("%d jobs handed out, want 5", n)
	}
}

// The scheduler allocates nothing per arrival, so it is never drafted into
// the garbage collector's work and never waits for memory.
func TestPaceAllocatesNothing(t *testing.T) {
	g := pacedGen(4, 1000)
	var wg sync.WaitGroup
	clock := &fakeClock{asked: make([]time.Time, 0, 100000)}
	drops := &dropLog{agents: make([]int, 0, 100000), jobs: make([]job, 0, 100000)}
	p := event.PlannedRun{TargetRPS: 4000, Duration: time.Second}
	// AllocsPerRun counts the whole process's allocations, so a goroutine an
	// earlier test left winding down can add some to one try; the pacer's own
	// allocations would show in every try. The least of five is judged.
	least := math.Inf(1)
	for try := 0; try < 5 && least != 0; try++ {
		least = min(least, testing.AllocsPerRun(10, func() {
			g.pace(context.Background(), p, time.Now(), 4000, clock, drops.add, &wg)
			for _, a := range g.Agents {
				for len(a.work) > 0 {
					<-a.work
				}
			}
		}))
	}
	if least != 0 {
		t.Errorf("%.0f allocations per run of 4,000 arrivals in the best of five tries, want none", least)
	}
	if len(drops.jobs) == 0 {
		t.Error("no arrival was dropped: the drop path went untested")
	}
}

func TestDropRecorderRecordsEveryDropInOrder(t *testing.T) {
	var rows []stats.Request
	d := recordDrops(func(r *stats.Request) { rows = append(rows, *r) }, &runWork{grant: exchange.GrantExchange, chain: 1})
	a := &Agent{Index: 3}
	start := time.Unix(1700000000, 0)
	const n = 3 * dropQueue // more than the queue holds: add waits, nothing is lost
	for k := 0; k < n; k++ {
		d.add(a, job{at: start.Add(time.Duration(k) * time.Millisecond), seq: int64(k), phase: stats.Measured})
	}
	d.close()
	if len(rows) != n {
		t.Fatalf("%d rows recorded, want %d", len(rows), n)
	}
	for k, r := range rows {
		want := stats.Request{Agent: 3, Seq: int64(k), Phase: stats.Measured, Outcome: "dropped",
			ScheduledUS: start.Add(time.Duration(k) * time.Millisecond).UnixMicro()}
		if r != want {
			t.Fatalf("row %d: %+v, want %+v", k, r, want)
		}
	}
}

func TestSleepersNeverWakeEarlyAndStopOnCancel(t *testing.T) {
	for _, c := range []struct {
		name string
		new  func() sleeper
	}{{"timer", func() sleeper { return newTimerSleeper() }}} {
		t.Run(c.name, func(t *testing.T) {
			s := c.new()
			defer s.close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for _, d := range []time.Duration{-time.Millisecond, 0, 50 * time.Microsecond, 700 * time.Microsecond, 3 * time.Millisecond} {
				at := time.Now().Add(d)
				s.until(ctx, at)
				if now := time.Now(); now.Before(at) {
					t.Errorf("wait of %v woke %v early", d, at.Sub(now))
				}
			}
			go func() { time.Sleep(20 * time.Millisecond); cancel() }()
			s.until(ctx, time.Now().Add(time.Hour)) // returns on the cancel
		})
	}
}
