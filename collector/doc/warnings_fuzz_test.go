package doc

import (
	"math"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// FuzzGroups: whatever a summary's warnings say (summary.json is
// evidence, and evidence may be hostile), grouping them never panics, reads
// no figure that is not finite, keeps every warning in the details, and
// says each code in one line.
func FuzzGroups(f *testing.F) {
	f.Add("host_saturated", "01-r1-20rps", "host saturated in 2 of 3 measured seconds (CPU ≥ 90% busy in 2 s, mean 100%; up to 5 runnable threads on 2 CPUs; processes other than the generator and the engine used 1.92 cores on average): latency and CPU per exchange include queueing for the machine, not only the server")
	f.Add("generator_late", "02-r1-40rps", "send lag p99 26.0 ms exceeds 5.0 ms (arrival interval 25.0 ms, latency p50 2.8 ms): the generator did not keep its schedule")
	f.Add("dropped_arrivals", "00-run1", "240 arrivals dropped: the in-flight cap was full")
	f.Add("note", "", "a note\nover two lines")
	f.Add("stage_has_failed_run", "", "20/s: 2 of 2 runs failed")
	f.Fuzz(func(t *testing.T, code, run, detail string) {
		s := &summary.Summary{Status: summary.CampaignDone, Stages: []*summary.Stage{{TargetRPS: 20, Runs: []*stats.Run{{ID: "01-r1-20rps"}, {ID: run}}}},
			Warnings: []stats.Warning{{Code: stats.WarningCode(code), Run: run, Detail: detail}, {Code: stats.WarningCode(code), Run: "01-r1-20rps", Detail: detail + detail}}}
		gs := Groups(s, &Page{Status: summary.CampaignDone})
		n := 0
		for i := range gs {
			g := &gs[i]
			n += len(g.Details)
			for _, v := range []float64{g.othersMax, g.top} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("figure %v from %q", v, detail)
				}
			}
			if g.cpus > 0 && (math.IsInf(g.othersMin, 0) || g.othersMin > g.othersMax) {
				t.Fatalf("others %v–%v from %q", g.othersMin, g.othersMax, detail)
			}
			line := g.Line(s).String()
			if !strings.ContainsAny(code+run, "\n") && strings.Contains(line, "\n") {
				t.Fatalf("a group's line spans lines: %q", line)
			}
		}
		if n != 2 {
			t.Fatalf("%d details of 2 warnings", n)
		}
		_ = CampaignVerdict(s, &Page{Status: summary.CampaignDone}, gs).String()
	})
}
