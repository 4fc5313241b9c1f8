package local

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/proc"
	"github.com/tokex-dev/tokex/collector/units"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/subject"
)

// Pre-minting (subject.premint) signs all of a run's subject tokens before
// the run starts, so that the measured window spends no CPU on signing:
// RS256 costs milliseconds of CPU per token, more than two cores can sign
// at hundreds of exchanges a second while also loading a server. The
// tokens are held in memory only, each used once, and dropped as sent.
type preminter struct {
	key      *jose.Key
	issuer   string
	lifetime time.Duration
	users    []string
	shape    subject.Shape
	prefix   string // campaign id: jti prefix "<campaign>-a<agent>-p<run>-"
	// memory reports what the process may still allocate (proc.MemAvailable).
	memory func() (int64, string, error)
	// progress receives a line about once a second, and the final one.
	progress func(msg string)
}

// startPremint sets pre-minting up when configured, refusing a campaign
// whose largest run's tokens would not fit in memory before it starts.
func (d *Driver) startPremint(out runner.Output) error {
	c := d.Cfg
	if !c.Subject.Premint {
		return nil
	}
	d.pre = &preminter{key: d.SubjectKey, issuer: c.Subject.Issuer, lifetime: c.Subject.Lifetime, users: c.Users.Names(),
		shape: c.Subject.Shape(), prefix: d.CampaignID, memory: proc.MemAvailable,
		progress: func(msg string) { out.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "info", Message: msg}) }}
	var largest event.PlannedRun
	for _, p := range runner.Plan(&c) {
		if arrivalsIn(p.TargetRPS, p.Total()) > arrivalsIn(largest.TargetRPS, largest.Total()) {
			largest = p
		}
	}
	_, err := d.pre.plan(largest, c.Agents.Count)
	return err
}

// premint signs run p's tokens into the agents (no-op when off).
func (d *Driver) premint(ctx context.Context, p event.PlannedRun) error {
	if d.pre == nil {
		return nil
	}
	pl, err := d.pre.plan(p, len(d.gen.Agents))
	if err != nil {
		return err
	}
	ids := make([]string, len(d.gen.Agents))
	for i, a := range d.gen.Agents {
		ids[i] = a.ClientID
	}
	toks, err := d.pre.mint(ctx, p, pl, ids)
	if err != nil {
		return err
	}
	for i, a := range d.gen.Agents {
		a.pre = toks[i]
	}
	return nil
}

// dropPremint lets the run's leftover tokens go.
func (d *Driver) dropPremint() {
	for _, a := range d.gen.Agents {
		a.pre = nil
	}
}

// subjectLifetime is the longest subject token the embedded server must
// accept: with pre-minting, a token issued before a run lives through it.
func (d *Driver) subjectLifetime() time.Duration {
	c := d.Cfg
	if !c.Subject.Premint {
		return c.Subject.Lifetime
	}
	var longest time.Duration
	for _, p := range runner.Plan(&c) {
		longest = max(longest, p.Total())
	}
	return c.Subject.Lifetime + longest + 24*time.Hour // the signing margin: bounded by memory, generous
}

// premintChunk is how many tokens a signing worker takes at a time.
const premintChunk = 256

// premintPlan is a run's pre-minting, sized before any token is signed.
type premintPlan struct {
	counts     []int // per agent
	total      int
	tokenBytes int           // one token's length
	need       int64         // estimated bytes held
	perToken   time.Duration // CPU per token, measured
	margin     time.Duration // added to the lifetime: the signing time, generously
}

// plan sizes the run: tokens per agent (one per arrival), their memory and
// the time to sign them, measured on a few probe tokens. It refuses a run
// whose tokens would not fit in half the memory available.
func (pm *preminter) plan(p event.PlannedRun, agents int) (*premintPlan, error) {
	total := arrivalsIn(p.TargetRPS, p.Total())
	pl := &premintPlan{total: total, counts: make([]int, agents)}
	for a := range pl.counts {
		pl.counts[a] = (total - a + agents - 1) / agents
	}
	probe := pm.minter(0, "probe", pm.lifetime, time.Now())
	const probes = 3
	c0 := cpuNow()
	for i := 0; i < probes; i++ {
		tok, err := probe.Mint("perf-agent-0")
		if err != nil {
			return nil, fmt.Errorf("pre-minting: %w", err)
		}
		pl.tokenBytes = max(pl.tokenBytes, len(tok)+32) // a longer client id, a larger counter
	}
	pl.perToken = (cpuNow() - c0) / probes
	// A string's bytes in their size class (≤ 1/8 more) plus its header.
	pl.need = int64(total) * int64(pl.tokenBytes+pl.tokenBytes/8+16)
	workers := runtime.GOMAXPROCS(0)
	pl.margin = 3*pl.perToken*time.Duration(total/workers+1) + 30*time.Second
	if avail, how, err := pm.memory(); err == nil && pl.need > avail/2 {
		return nil, fmt.Errorf("pre-minting run %s: %s %s tokens of about %d bytes need about %s of memory, more than half of the %s available (%s); lower the rate or the duration, or sign as the run goes (subject.premint: false) with a faster algorithm (ES256 or EdDSA)",
			p.ID, units.Thousands(int64(total)), pm.key.Alg, pl.tokenBytes, bytesText(pl.need), bytesText(avail), how)
	}
	return pl, nil
}

// minter is agent a's minter for a run: its own jti prefix, every token
// issued at t0 and living lifetime.
func (pm *preminter) minter(a int, runID string, lifetime time.Duration, t0 time.Time) *subject.Minter {
	return &subject.Minter{Key: pm.key, Issuer: pm.issuer, Lifetime: lifetime, Users: pm.users, Shape: pm.shape,
		Prefix: fmt.Sprintf("%s-a%d-p%s-", pm.prefix, a, runID), Now: func() time.Time { return t0 }}
}

// mint signs the run's tokens on every core, reporting progress, and
// returns them per agent. Every token is issued now and expires its
// lifetime after the run's end (plus the signing margin), so that none
// expires before it is sent.
func (pm *preminter) mint(ctx context.Context, p event.PlannedRun, pl *premintPlan, clientIDs []string) ([][]string, error) {
	t0 := time.Now()
	life := pm.lifetime + p.Total() + pl.margin
	toks := make([][]string, len(pl.counts))
	var jobs [][3]int // agent, from, to
	for a, n := range pl.counts {
		toks[a] = make([]string, n)
		for from := 0; from < n; from += premintChunk {
			jobs = append(jobs, [3]int{a, from, min(from+premintChunk, n)})
		}
	}
	minters := make([]*subject.Minter, len(pl.counts))
	for a := range minters {
		minters[a] = pm.minter(a, p.ID, life, t0.Truncate(time.Second))
	}
	var next, done atomic.Int64
	var failed atomic.Pointer[error]
	c0 := cpuNow()
	stop := pm.report(p, pl, &done, t0, c0)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := int(next.Add(1) - 1); j < len(jobs) && ctx.Err() == nil && failed.Load() == nil; j = int(next.Add(1) - 1) {
				a, from, to := jobs[j][0], jobs[j][1], jobs[j][2]
				for k := from; k < to; k++ {
					tok, err := minters[a].Mint(clientIDs[a])
					if err != nil {
						failed.Store(&err)
						return
					}
					toks[a][k] = tok
				}
				done.Add(int64(to - from))
			}
		}()
	}
	wg.Wait()
	stop()
	if err := failed.Load(); err != nil {
		return nil, fmt.Errorf("pre-minting run %s: %w", p.ID, *err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if took := time.Since(t0); took > pl.margin+pm.lifetime-time.Second {
		return nil, fmt.Errorf("pre-minting run %s took %s: its first tokens would expire before the run ends; shorten the run or lengthen subject.lifetime", p.ID, took.Round(time.Second))
	}
	cpu := cpuNow() - c0
	pm.progress(fmt.Sprintf("pre-minted %s %s subject tokens for run %s in %s (CPU %.1f s, %.0f µs a token), about %s in memory; they expire %s after the run's end",
		units.Thousands(int64(pl.total)), pm.key.Alg, p.ID, time.Since(t0).Round(100*time.Millisecond), cpu.Seconds(),
		float64(cpu.Microseconds())/float64(max(pl.total, 1)), bytesText(pl.need), (pm.lifetime + pl.margin).Round(time.Second)))
	return toks, nil
}

// report emits a progress bar about once a second until stop is called.
func (pm *preminter) report(p event.PlannedRun, pl *premintPlan, done *atomic.Int64, t0 time.Time, c0 time.Duration) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				pm.progress(progressLine(p.ID, pm.key.Alg, int(done.Load()), pl.total, time.Since(t0), cpuNow()-c0))
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}

// progressLine is one line of pre-minting progress with a text bar.
func progressLine(runID, alg string, done, total int, took, cpu time.Duration) string {
	const width = 20
	frac := 1.0
	if total > 0 {
		frac = float64(done) / float64(total)
	}
	fill := int(frac * width)
	return fmt.Sprintf("pre-minting run %s: [%s%s] %3.0f%% %s/%s %s tokens, %s, CPU %.1f s",
		runID, strings.Repeat("#", fill), strings.Repeat(".", width-fill), frac*100,
		units.Thousands(int64(done)), units.Thousands(int64(total)), alg, took.Round(time.Second), cpu.Seconds())
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
}

// cpuNow is this process's CPU time so far (user and system).
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
