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
		if got := round3(v); math.Abs(got-v) > math.Abs(v)*1e-15 {
			t.Errorf("round3(%g) = %g", v, got)
		}
	}
	if round3(1.23456) != 1.235 || round3(-1.23456) != -1.235 {
		t.Errorf("round3 changed: %v %v", round3(1.23456), round3(-1.23456))
	}
}

// The runs' verified tokens add up in the totals and are said in
// summary.md (issue 23 item 6: the evidence did not say how many).
func TestVerifiedTokensAreCounted(t *testing.T) {
	t.Parallel()
	runs := []*Run{
		{ID: "s", Sanity: true, Status: StatusDone, Verification: &sample.Verification{Sample: 0.1, Checked: 99, Failed: 99}},
		{ID: "a", TargetRPS: 10, Status: StatusDone, Requests: 100, OK: 98, Verification: &sample.Verification{Sample: 0.1, Checked: 11, Failed: 2}},
		{ID: "b", TargetRPS: 20, Status: StatusDone, Requests: 200, OK: 200, Verification: &sample.Verification{Sample: 0.1, Checked: 19}},
		{ID: "c", TargetRPS: 30, Status: StatusAborted, Verification: &sample.Verification{Sample: 0.1, Checked: 5, Failed: 5}},
	}
	s := &Summary{}
	BuildSummary(s, runs, false)
	if v := s.Totals.Verified; v == nil || v.Checked != 30 || v.Failed != 2 || v.Sample != 0.1 {
		t.Fatalf("totals %+v", s.Totals.Verified)
	}
	runs[1].Verification = nil
	BuildSummary(s, runs[1:2], true)
	if s.Totals.Verified != nil {
		t.Errorf("no verification, yet %+v", s.Totals.Verified)
	}
}
