package local

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"time"

	"github.com/tokex-dev/tokex/collector/forecast"
	"github.com/tokex-dev/tokex/collector/proc"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// Calibration bounds: enough exchanges for a stable CPU figure, little
// enough time not to matter before a campaign.
const (
	calibrationMin  = 20
	calibrationMax  = 300
	calibrationTime = 500 * time.Millisecond
)

// preflight estimates what this machine can drive and serve at once. With
// the embedded server it times the CPU of a short series of real exchanges
// on both sides (after three that open the connection and warm the JWKS
// cache); for a server elsewhere it times minting subject tokens only, so
// nothing unrecorded is sent to someone else's server. Neither is part of
// the evidence's requests.
func (d *Driver) preflight(ctx context.Context, enginePID int) (forecast.Forecast, error) {
	self := os.Getpid()
	c := forecast.Forecast{
		Cores:          (&proc.HostSampler{PID: self}).Limit(),
		GeneratorCores: (&proc.HostSampler{PID: self, MaxProcs: func() int { return runtime.GOMAXPROCS(0) }}).Limit(),
	}
	if c.Cores == 0 {
		c.Cores = float64(runtime.NumCPU())
	}
	a := d.gen.Agents[0]
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	one := func() error {
		tok, err := a.credential() // the subject token, and the client assertion with private_key_jwt
		if err != nil {
			return err
		}
		if enginePID == 0 {
			return nil
		}
		pl := &pipeline{ch: make(chan string, 1), low: make(chan struct{}, 1)}
		pl.ch <- tok
		var r stats.Request
		d.gen.send(ctx, a, time.Now(), &r, pl, new([]byte))
		if r.Outcome != exchange.OutcomeOK {
			return fmt.Errorf("calibration exchange: %s %s", r.Outcome, r.Detail)
		}
		return nil
	}
	if ac := d.gen.Work.Actors; ac != nil && enginePID != 0 {
		// The runs get their actor tokens before they start; so do these
		// exchanges, or they would go without one.
		if err := ac.warm(ctx, []string{a.ClientID}); err != nil {
			return c, fmt.Errorf("%w (subject.actor)", err)
		}
	}
	for i := 0; i < 3 && enginePID != 0; i++ {
		if err := one(); err != nil {
			return c, err
		}
	}
	cpu := func(pid int) float64 {
		v, _ := proc.ProcessCPU(pid)
		return v
	}
	hb0, ht0, cpus, herr := proc.HostCPU()
	g0, s0, begin := cpu(self), cpu(enginePID), time.Now()
	n := 0
	for n < calibrationMax && (n < calibrationMin || time.Since(begin) < calibrationTime) {
		if err := one(); err != nil {
			return c, err
		}
		n++
	}
	gen, srv := cpu(self)-g0, 0.0
	if enginePID != 0 {
		srv = cpu(enginePID) - s0
	}
	if hb1, ht1, _, err := proc.HostCPU(); herr == nil && err == nil && ht1 > ht0 {
		wall := (ht1 - ht0) / float64(cpus)
		c.OthersCores = round2((hb1-hb0)/wall - (gen+srv)/wall)
	}
	c.GeneratorCPUMs = gen * 1000 / float64(n)
	if enginePID != 0 {
		c.ServerCPUMs = srv * 1000 / float64(n)
		c.Server = "embedded server"
		c.Method = fmt.Sprintf("%d calibration exchanges", n)
	} else {
		c.Method = fmt.Sprintf("%d subject tokens minted; the HTTP client's share and the server's cost not included", n)
	}
	c.GeneratorCPUMs = round2(c.GeneratorCPUMs)
	c.ServerCPUMs = round2(c.ServerCPUMs)
	return forecast.Estimate(c), nil
}

func round2(v float64) float64 { return math.Round(max(0, v)*100) / 100 }
