// Package health says early, as a run's samples stream in, what its
// statistics will say of the machine that ran the load: the per-sample
// rules of collector/stats applied live, for the dashboard and the
// progress printer.
package health

import (
	"fmt"
	"time"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// Live applies the per-sample rules to a run as its samples stream in, for
// the dashboard and the progress printer: what the last sample showed
// (Now) and whether a rule has broken often enough in the measured phase to
// become the run's warning (Flagged). The run's stats.json decides; Live
// only says it early.
type Live struct {
	// Now holds the reason each rule broke in the latest sample, by code.
	Now map[stats.WarningCode]string

	genAt          time.Time
	genCores       float64
	hostN, windowN int
	broke          map[stats.WarningCode]int
	measuring      bool
}

// Reset starts a new run; measuring tells whether samples count yet.
func (l *Live) Reset(measuring bool) {
	*l = Live{Now: map[stats.WarningCode]string{}, broke: map[stats.WarningCode]int{}, measuring: measuring}
}

// Measuring marks the start of the measured phase.
func (l *Live) Measuring() { l.measuring = true }

// Generator records the generator's CPU; the host sample taken at the same
// instant follows it.
func (l *Live) Generator(at time.Time, cores float64) { l.genAt, l.genCores = at, cores }

// Host applies the host and starvation rules to one sample.
func (l *Live) Host(at time.Time, h *sample.HostMetrics) {
	l.init()
	l.set(stats.WarnHostSaturated, stats.Saturation(h))
	starved := ""
	if at.Equal(l.genAt) {
		starved = stats.Starvation(h, l.genCores)
	}
	l.set(stats.WarnGeneratorStarved, starved)
	if l.measuring {
		l.hostN++
	}
}

// Window applies the late rule to one second's send lag.
func (l *Live) Window(rate, latencyP50, sendLagP99 float64, measured bool) {
	l.init()
	late := ""
	if b := stats.LateBound(rate, latencyP50); sendLagP99 > b {
		late = "send lag p99 " + ms(sendLagP99) + " > " + ms(b)
	}
	if measured {
		l.windowN++
		if late != "" {
			l.broke[stats.WarnGeneratorLate]++
		}
	}
	if late == "" {
		delete(l.Now, stats.WarnGeneratorLate)
	} else {
		l.Now[stats.WarnGeneratorLate] = late
	}
}

func (l *Live) set(code stats.WarningCode, why string) {
	if why == "" {
		delete(l.Now, code)
		return
	}
	l.Now[code] = why
	if l.measuring {
		l.broke[code]++
	}
}

func (l *Live) init() {
	if l.Now == nil {
		l.Now, l.broke = map[stats.WarningCode]string{}, map[stats.WarningCode]int{}
	}
}

// Flagged reports whether code has broken in enough of the measured
// samples to become the run's warning.
func (l *Live) Flagged(code stats.WarningCode) bool {
	n := l.hostN
	if code == stats.WarnGeneratorLate {
		n = l.windowN
	}
	return stats.Flags(l.broke[code], n)
}

// Codes lists the flagged codes in a fixed order.
func (l *Live) Codes() []stats.WarningCode {
	var out []stats.WarningCode
	for _, c := range stats.InvalidatingCodes {
		if l.Flagged(c) {
			out = append(out, c)
		}
	}
	return out
}

// ms writes milliseconds as the run's warnings do: one decimal, two below
// 1 ms.
func ms(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}
