package knowncost

import (
	"fmt"
	"sync"
	"time"
)

// Profile is a cost that depends on the rate the server serves, as real
// servers' does (batching, a JIT warming up, GC amortised over more
// requests): one more request costs High up to From requests/s; between
// From and To that marginal cost falls linearly to Low, and above To it
// is Low. The engine's cores are the integral, Cores(rate), and each
// request burns Cores(rate) ÷ rate, so the cost per request falls from
// High towards Low as the rate grows.
//
// From == To is a batching server: below From requests/s each request
// is a batch of its own (High = the batch's overhead + Low), above it
// batches run From times a second, a fixed (High − Low) × From of CPU a
// second plus Low a request. A zero Low is a fixed cost of High.
type Profile struct {
	High, Low time.Duration
	From, To  float64 // requests/s
}

// Fixed reports a profile whose cost does not depend on the rate.
func (p Profile) Fixed() bool { return p.Low <= 0 || p.Low == p.High }

// Validate says what makes the profile unusable, or nil.
func (p Profile) Validate() error {
	switch {
	case p.High <= 0:
		return fmt.Errorf("the cost must be above 0")
	case p.Fixed():
		return nil
	case p.Low < 0 || p.From < 0 || p.To < p.From:
		return fmt.Errorf("a rate-dependent cost needs a low cost above 0 and 0 ≤ from ≤ to rates (got low %s, from %g/s, to %g/s)", p.Low, p.From, p.To)
	}
	return nil
}

// Marginal is the CPU-ms one more request costs at rate.
func (p Profile) Marginal(rate float64) float64 {
	hi, lo := ms(p.High), ms(p.Low)
	switch {
	case p.Fixed() || rate <= p.From:
		return hi
	case rate >= p.To:
		return lo
	}
	return hi - (hi-lo)*(rate-p.From)/(p.To-p.From)
}

// Cores is the CPU a second (cores) the requests burn at rate: the
// integral of Marginal from 0.
func (p Profile) Cores(rate float64) float64 {
	hi, lo := ms(p.High), ms(p.Low)
	if p.Fixed() || rate <= p.From {
		return hi * rate / 1000
	}
	x := min(rate, p.To) - p.From
	c := hi*p.From + hi*x
	if p.To > p.From {
		c -= (hi - lo) * x * x / (2 * (p.To - p.From))
	}
	if rate > p.To {
		c += lo * (rate - p.To)
	}
	return c / 1000
}

// PerRequest is what one request burns at rate: Cores(rate) ÷ rate, High
// at rate 0 (the first request, an idle server).
func (p Profile) PerRequest(rate float64) time.Duration {
	if p.Fixed() || rate <= 0 {
		return p.High
	}
	return time.Duration(p.Cores(rate) / rate * float64(time.Second))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// rateMeter is the server's own arrival rate: the arrivals in the last
// window, (count − 1) ÷ the time between the first and the last of them,
// exact for evenly spaced arrivals however much of the window they fill
// (a run that just started after a pause).
type rateMeter struct {
	mu sync.Mutex
	at []int64 // ring of arrival times, ns
	n  int
}

// meterSize bounds the ring: 2 s at 16,000 requests/s.
const meterSize = 1 << 15

// arrive records an arrival at now (ns) and returns the rate it sees over
// the window (0 before a second arrival in it).
func (m *rateMeter) arrive(now int64, window time.Duration) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.at == nil {
		m.at = make([]int64, meterSize)
	}
	m.at[m.n%meterSize] = now
	m.n++
	count, first := 0, now
	for i := m.n - 1; i >= max(0, m.n-meterSize); i-- {
		t := m.at[i%meterSize]
		if now-t > int64(window) {
			break
		}
		count, first = count+1, t
	}
	if count < 2 || now <= first {
		return 0
	}
	return float64(count-1) / (float64(now-first) / 1e9)
}
