// Package forecast is the pre-flight estimate: before the first run, the
// exchange rate this machine can drive (and, with the server on it, serve)
// at once, from the CPU one exchange costs on each side. A forecast, not a
// measurement: a run at a rate beyond it carries forecast_exceeded.
package forecast

import (
	"fmt"
	"math"
	"strings"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/units"
)

// Headroom is the share of the CPUs a sustainable rate may use:
// beyond it, threads queue for a CPU and latency grows with the queue.
const Headroom = 0.8

// Forecast is the pre-flight estimate of the exchange rate this machine can
// drive (and, with the server on it, serve) at once, from the CPU one
// exchange costs on each side.
type Forecast struct {
	Cores          float64 `json:"cores"`           // CPUs generator and a local server share
	GeneratorCores float64 `json:"generator_cores"` // the cores the generator may use
	GeneratorCPUMs float64 `json:"generator_cpu_ms"`
	// ServerCPUMs is the server's CPU per exchange when it runs on this
	// machine (0: elsewhere, or not measured).
	ServerCPUMs float64 `json:"server_cpu_ms,omitempty"`
	Server      string  `json:"server,omitempty"` // "embedded server", or "" when not on this machine
	Method      string  `json:"method"`           // how the costs were measured
	// OthersCores is what other processes used while the costs were
	// measured: the estimate assumes the machine is tokex's alone.
	OthersCores float64 `json:"others_cores,omitempty"`
	// SustainableRPS is Headroom of the CPU-bound rate.
	SustainableRPS float64 `json:"sustainable_rps"`
}

// Estimate fills SustainableRPS: generator and server share cores
// (when the server is local), and the generator alone is bounded by the
// cores it may use.
func Estimate(c Forecast) Forecast {
	if c.GeneratorCPUMs <= 0 || c.Cores <= 0 {
		c.SustainableRPS = 0
		return c
	}
	gen := c.Cores
	if c.GeneratorCores > 0 {
		gen = min(gen, c.GeneratorCores)
	}
	rate := gen * 1000 / c.GeneratorCPUMs
	if c.Server != "" && c.ServerCPUMs > 0 {
		rate = min(rate, c.Cores*1000/(c.GeneratorCPUMs+c.ServerCPUMs))
	}
	c.SustainableRPS = roundSig(Headroom*rate, 2)
	return c
}

// Exceeds reports whether a stage rate is beyond the estimate.
func (c Forecast) Exceeds(rate float64) bool { return c.SustainableRPS > 0 && rate > c.SustainableRPS }

// Line is the pre-flight sentence, naming the stages the machine cannot
// drive.
func (c Forecast) Line(stages []float64) string {
	if c.SustainableRPS <= 0 {
		return "pre-flight: capacity unknown (" + c.Method + ")"
	}
	what := "drive"
	costs := fmt.Sprintf("generator %.2f CPU-ms per exchange", c.GeneratorCPUMs)
	if c.Server != "" && c.ServerCPUMs > 0 {
		what = "sustain"
		costs = fmt.Sprintf("generator %.2f + %s %.2f CPU-ms per exchange", c.GeneratorCPUMs, c.Server, c.ServerCPUMs)
	}
	s := fmt.Sprintf("pre-flight: %s on %.4g cores (%s): this machine can %s about %s exchanges/s", costs, c.Cores, c.Method, what, units.Thousands(int64(c.SustainableRPS)))
	if c.Server != "" && c.ServerCPUMs > 0 {
		s += " of generator+" + c.Server
	}
	s += fmt.Sprintf(" at %.0f%% CPU", 100*Headroom)
	var over []string
	for _, r := range stages {
		if c.Exceeds(r) {
			over = append(over, units.StageLabel(r))
		}
	}
	switch n := len(over); {
	case n == 1:
		s += "; it cannot drive stage " + over[0] + ": there this machine, not the server, would set the figures (forecast_exceeded)"
	case n > 1:
		s += "; it cannot drive stages " + strings.Join(over[:n-1], ", ") + " and " + over[n-1] + ": there this machine, not the server, would set the figures (forecast_exceeded)"
	}
	if c.OthersCores >= 0.25 {
		s += fmt.Sprintf(" (other processes used %.2f cores meanwhile: less is left)", c.OthersCores)
	}
	return s
}

// Warning is the forecast_exceeded warning of a run at rate, or nil.
func (c Forecast) Warning(run string, rate float64) *stats.Warning {
	if !c.Exceeds(rate) {
		return nil
	}
	w := stats.Warn(stats.WarnForecastExceeded, run, fmt.Sprintf("%s exceeds the pre-flight estimate of about %s exchanges/s for this machine (%s): expect the generator and the host, not the server, to set the figures",
		units.StageLabel(rate), units.Thousands(int64(c.SustainableRPS)), c.Method))
	return &w
}

// roundSig rounds v to n significant digits.
func roundSig(v float64, n int) float64 {
	if v <= 0 {
		return 0
	}
	p := math.Pow(10, float64(n)-math.Ceil(math.Log10(v)))
	return math.Round(v*p) / p
}
