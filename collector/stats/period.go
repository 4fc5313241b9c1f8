package stats

import (
	"math"

	"github.com/tokex-dev/tokex/collector/curve"
)

// maxPeriodSeconds bounds the per-second tally (24 h, the longest phase).
const maxPeriodSeconds = 24 * 3600

// secondTally keeps each measured second's latencies (from the scheduled
// time, so a stall cannot hide), by the second the arrival was scheduled
// in, for the latency periodicity.
type secondTally struct {
	startUS int64
	secs    []Samples
}

func (p *secondTally) add(scheduledUS, latencyUS int64) {
	i := (scheduledUS - p.startUS) / 1e6
	if scheduledUS < p.startUS || i >= maxPeriodSeconds {
		return
	}
	for int64(len(p.secs)) <= i {
		p.secs = append(p.secs, Samples{})
	}
	p.secs[i].Add(latencyUS)
}

// period looks for a wave in the per-second p95, then in the p99.
func (p *secondTally) period() *curve.Period {
	p95 := make([]float64, len(p.secs))
	p99 := make([]float64, len(p.secs))
	for i := range p.secs {
		if p.secs[i].Len() == 0 {
			p95[i], p99[i] = math.NaN(), math.NaN()
			continue
		}
		l := p.secs[i].Summarize()
		p95[i], p99[i] = l.P95, l.P99
	}
	if w := curve.FindPeriod(p95, "p95"); w != nil {
		return w
	}
	return curve.FindPeriod(p99, "p99")
}
