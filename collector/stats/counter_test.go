package stats

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/sample"
)

// TestCPUCounterThatIsNoCounter: an engine counter that overflows (jumps
// to 10¹⁵ s) or goes back gives no CPU figure of its own and a coded
// warning; the CPU per exchange comes from the sampled rates (issue 25
// item 7: it read −9.2e15 CPU-ms per exchange with a wrong warning).
func TestCPUCounterThatIsNoCounter(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	m := RunMeta{ID: "r", TargetRPS: 10, Status: StatusDone, Started: start,
		MeasuredStart: start.Add(2 * time.Second), MeasuredEnd: start.Add(12 * time.Second)}
	var reqs []Request
	for i := 0; i < 120; i++ {
		at := start.Add(time.Duration(i) * 100 * time.Millisecond)
		reqs = append(reqs, Request{Seq: int64(i), ScheduledUS: at.UnixMicro(), SendLagUS: 100, DurationUS: 1000,
			Status: 200, Outcome: "ok", Phase: Measured})
	}
	for name, counter := range map[string]func(s int, v float64) float64{
		"overflow": func(s int, v float64) float64 {
			if s >= 7 {
				return 1e15 + v // what a 64-bit overflow read as seconds looks like
			}
			return v
		},
		"jump": func(s int, v float64) float64 {
			if s >= 7 {
				return 5e12 + v
			}
			return v
		},
		"back": func(s int, v float64) float64 {
			if s == 7 {
				return v - 50
			}
			return v
		},
	} {
		t.Run(name, func(t *testing.T) {
			var res []sample.Resource
			for s := 0; s <= 13; s++ {
				at := start.Add(time.Duration(s)*time.Second + 300*time.Millisecond)
				res = append(res, sample.Resource{AtUS: at.UnixMicro(), Kind: "engine", Name: "e", CPUMillicores: 500,
					CPUSecondsTotal: counter(s, 100+0.5*at.Sub(start).Seconds()), MemoryBytes: 1 << 20})
			}
			r := ComputeRun(m, reqs, res, Thresholds{P95Ms: 500, SuccessRatio: 0.99})
			c := r.EngineCPU
			// 0.5 cores for 10 s over 100 exchanges: 50 CPU-ms each.
			if c == nil || c.Method != "rate" || math.Abs(c.CPUMsPerExchange-50) > 0.01 {
				t.Fatalf("engine cpu = %+v", c)
			}
			var codes []string
			for _, w := range r.Warnings {
				codes = append(codes, string(w.Code))
				if w.Code == WarnCPUCounterInvalid && !strings.Contains(w.Detail, "CPU counter of e") {
					t.Errorf("warning %q", w.Detail)
				}
			}
			if got := strings.Join(codes, ","); got != string(WarnCPUCounterInvalid) {
				t.Errorf("warnings %s, want only %s", got, WarnCPUCounterInvalid)
			}
		})
	}
}

// round3 never goes through an int64, whatever the figure.
func TestRound3OfHugeFigures(t *testing.T) {
	t.Parallel()
	for _, v := range []float64{1e16, 1e21, 9.3e18, -1e19} {
		if got := Round3(v); math.Abs(got-v) > math.Abs(v)*1e-15 {
			t.Errorf("Round3(%g) = %g", v, got)
		}
	}
	if Round3(1.23456) != 1.235 || Round3(-1.23456) != -1.235 {
		t.Errorf("round3 changed: %v %v", Round3(1.23456), Round3(-1.23456))
	}
}
