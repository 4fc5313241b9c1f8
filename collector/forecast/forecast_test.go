package forecast

import (
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/stats"
)

func TestEstimate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   Forecast
		want float64
	}{
		// The article's campaign on the embedded default, 2 cores: RS256 on
		// both sides, the measured costs.
		{"embedded RS256 on 2 cores", Forecast{Cores: 2, GeneratorCores: 2, GeneratorCPUMs: 2.3, ServerCPUMs: 1.4, Server: "embedded server"}, 430},
		{"GOMAXPROCS=1 bounds the generator", Forecast{Cores: 2, GeneratorCores: 1, GeneratorCPUMs: 2.3, ServerCPUMs: 1.4, Server: "embedded server"}, 350},
		{"remote server: the generator alone", Forecast{Cores: 2, GeneratorCores: 2, GeneratorCPUMs: 2.3}, 700},
		{"ES256 both sides", Forecast{Cores: 2, GeneratorCPUMs: 0.25, ServerCPUMs: 0.21, Server: "embedded server"}, 3500},
		{"no cost measured", Forecast{Cores: 2}, 0},
	}
	for _, c := range cases {
		if got := Estimate(c.in).SustainableRPS; got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLineAndWarning(t *testing.T) {
	t.Parallel()
	c := Estimate(Forecast{Cores: 2, GeneratorCores: 2, GeneratorCPUMs: 2.3, ServerCPUMs: 1.4, Server: "embedded server", Method: "200 calibration exchanges"})
	line := c.Line([]float64{100, 250, 500})
	want := "pre-flight: generator 2.30 + embedded server 1.40 CPU-ms per exchange on 2 cores (200 calibration exchanges): " +
		"this machine can sustain about 430 exchanges/s of generator+embedded server at 80% CPU; it cannot drive stage 500/s: " +
		"there this machine, not the server, would set the figures (forecast_exceeded)"
	if line != want {
		t.Errorf("line:\n got %s\nwant %s", line, want)
	}
	// Every stage it cannot drive, in words, before the first run (issue 27 item 2).
	if l := c.Line([]float64{100, 500, 1000, 2000}); !strings.HasSuffix(l, "; it cannot drive stages 500/s, 1000/s and 2000/s: there this machine, not the server, would set the figures (forecast_exceeded)") {
		t.Errorf("three stages beyond it: %s", l)
	}
	if strings.Contains(c.Line([]float64{100, 250}), "cannot drive") {
		t.Error("stages within capacity said to exceed it")
	}
	if w := c.Warning("r", 250); w != nil {
		t.Errorf("250/s: %+v", w)
	}
	w := c.Warning("r", 500)
	if w == nil || w.Code != stats.WarnForecastExceeded || w.Code.Invalidating() || !strings.Contains(w.Detail, "500/s exceeds the pre-flight estimate of about 430 exchanges/s") {
		t.Errorf("500/s: %+v", w)
	}
	remote := Estimate(Forecast{Cores: 2, GeneratorCPUMs: 2.3, Method: "signing only"})
	if got := remote.Line(nil); !strings.Contains(got, "this machine can drive about 700 exchanges/s at 80% CPU") {
		t.Errorf("remote line: %s", got)
	}
	if got := (Forecast{Method: "calibration failed"}).Line(nil); got != "pre-flight: capacity unknown (calibration failed)" {
		t.Errorf("unknown: %s", got)
	}
}

func TestLineSaysOthersLoad(t *testing.T) {
	t.Parallel()
	c := Estimate(Forecast{Cores: 2, GeneratorCPUMs: 1, Method: "m", OthersCores: 1.74})
	if got := c.Line(nil); !strings.HasSuffix(got, "(other processes used 1.74 cores meanwhile: less is left)") {
		t.Errorf("line: %s", got)
	}
}
