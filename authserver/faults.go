package authserver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// faults applies the configured fault injection to a request.
type faults struct {
	cfg   FaultConfig
	start time.Time
}

func newFaults(cfg FaultConfig) *faults {
	if !cfg.Enabled() {
		return nil
	}
	return &faults{cfg: cfg, start: time.Now()}
}

// String describes the active faults for the start-up banner.
func (f *faults) String() string {
	if f == nil {
		return ""
	}
	var parts []string
	l := f.cfg.Latency
	if l.Fixed > 0 {
		parts = append(parts, "fixed latency "+l.Fixed.String())
	}
	switch l.Distribution {
	case "uniform":
		parts = append(parts, "uniform latency 0.."+l.Max.String())
	case "exponential":
		parts = append(parts, "exponential latency mean "+l.Mean.String())
	case "lognormal":
		parts = append(parts, fmt.Sprintf("lognormal latency mean %s stddev %s", l.Mean, l.StdDev))
	}
	if f.cfg.Stall.Every > 0 {
		parts = append(parts, fmt.Sprintf("stall %s every %s", f.cfg.Stall.Duration, f.cfg.Stall.Every))
	}
	if f.cfg.ErrorRatio > 0 {
		parts = append(parts, fmt.Sprintf("%.2f%% errors (503)", f.cfg.ErrorRatio*100))
	}
	return strings.Join(parts, ", ")
}

// delay is how long to hold the request arriving at now.
func (f *faults) delay(now time.Time) time.Duration {
	var d time.Duration
	if st := f.cfg.Stall; st.Every > 0 {
		phase := now.Sub(f.start) % st.Every
		if phase < st.Duration {
			d += st.Duration - phase
		}
	}
	l := f.cfg.Latency
	d += l.Fixed
	var r time.Duration
	switch l.Distribution {
	case "uniform":
		r = time.Duration(rand.Int64N(int64(l.Max) + 1))
	case "exponential":
		r = time.Duration(rand.ExpFloat64() * float64(l.Mean))
	case "lognormal":
		// Parameters of the underlying normal from the wanted mean and stddev.
		m, s := float64(l.Mean), float64(l.StdDev)
		sigma2 := math.Log(1 + (s*s)/(m*m))
		mu := math.Log(m) - sigma2/2
		r = time.Duration(math.Exp(mu + math.Sqrt(sigma2)*rand.NormFloat64()))
	}
	if l.Max > 0 && r > l.Max {
		r = l.Max
	}
	return d + r
}

func (f *faults) fail() bool {
	return f.cfg.ErrorRatio > 0 && rand.Float64() < f.cfg.ErrorRatio
}
