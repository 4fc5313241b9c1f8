package health

import (
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// Live says early what the run's statistics will say: warmup samples show
// but do not count, and a rule becomes the run's once it broke in 10 % of
// the measured samples.
func TestLiveFollowsTheRules(t *testing.T) {
	t.Parallel()
	var l Live
	t0 := time.Unix(1_800_000_000, 0)
	busy := sample.HostMetrics{CPUs: 2, BusyCores: 2, GeneratorLimitCores: 1}
	idle := sample.HostMetrics{CPUs: 2, BusyCores: 0.5, GeneratorLimitCores: 1}
	l.Generator(t0, 0.95) // before any Reset: kept
	l.Host(t0, &busy)
	if l.Now[stats.WarnHostSaturated] != "CPU 100% busy" || l.Now[stats.WarnGeneratorStarved] == "" || len(l.Codes()) != 0 {
		t.Fatalf("warmup sample: now %v codes %v", l.Now, l.Codes())
	}
	l.Reset(false)
	l.Host(t0, &busy) // warmup of the run
	l.Measuring()
	for i := 1; i <= 19; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		l.Generator(at, 0.2)
		l.Host(at, &idle)
	}
	if len(l.Now) != 0 || len(l.Codes()) != 0 {
		t.Fatalf("healthy: now %v codes %v", l.Now, l.Codes())
	}
	l.Host(t0.Add(20*time.Second), &busy) // 1 of 20 measured: below 10 %
	if l.Flagged(stats.WarnHostSaturated) {
		t.Error("one busy second in twenty flagged the run")
	}
	l.Host(t0.Add(21*time.Second), &busy) // 2 of 21: still below
	if l.Flagged(stats.WarnHostSaturated) {
		t.Error("2 of 21 flagged the run")
	}
	l.Host(t0.Add(22*time.Second), &busy) // 3 of 22
	if !l.Flagged(stats.WarnHostSaturated) || l.Flagged(stats.WarnGeneratorStarved) {
		t.Errorf("codes %v", l.Codes())
	}
	l.Window(100, 2, 30, true)
	if l.Now[stats.WarnGeneratorLate] != "send lag p99 30.0 ms > 5.0 ms" || !l.Flagged(stats.WarnGeneratorLate) {
		t.Errorf("late: %v %v", l.Now, l.Codes())
	}
	l.Window(100, 2, 1, true)
	if _, now := l.Now[stats.WarnGeneratorLate]; now {
		t.Error("late after an on-time second")
	}
}
