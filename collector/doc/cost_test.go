package doc

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/search"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

var updateCost = flag.Bool("update-cost", false, "rewrite testdata/cost-*: only on the code the goldens describe")

// costRuns are three rounds at each rate of a server whose engine uses
// cores(rate), served exactly at the target and measured for 10 s, the
// cores off by 0.003 + 1 % (seeded: the same runs every time).
func costRuns(cores func(float64) float64, rates []float64) []*stats.Run {
	rng := rand.New(rand.NewPCG(23, 1))
	var runs []*stats.Run
	i := 0
	for round := 1; round <= 3; round++ {
		for _, r := range rates {
			c := cores(r)
			c += (0.003 + 0.01*c) * rng.NormFloat64()
			n := int64(r * 10)
			runs = append(runs, &stats.Run{ID: fmt.Sprintf("%02d-r%d-%grps", i, round, r), Index: i, Round: round, TargetRPS: r,
				Status: stats.StatusDone, Requests: n, OK: n, SuccessRatio: 1, AchievedRatio: 1, AchievedRPS: r, MeasuredSeconds: 10,
				LatencyMs: stats.Latency{Count: n, P50: 2, P95: 4, P99: 6}, ThresholdsPassed: true,
				EngineCPU: &stats.CPU{AvgCores: c, CPUMsPerExchange: c * 1000 / r, Exchanges: n, Source: "proc"}})
			i++
		}
	}
	return runs
}

// falls is issue 23's server whose cost falls with the rate: 24 CPU-ms
// for one more exchange up to 10/s, falling to 8 by 16/s (the known-cost
// server's rate-dependent mode).
func falls(r float64) float64 {
	switch {
	case r <= 10:
		return 0.024 * r
	case r < 16:
		return 0.24 + 0.024*(r-10) - 0.016*(r-10)*(r-10)/12
	}
	return 0.24 + 0.096 + 0.008*(r-16)
}

func costSummary(cores func(float64) float64, rates []float64) *summary.Summary {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := &summary.Summary{CampaignID: "cost", Name: "cost", Driver: "local", Target: "http://127.0.0.1:1/token", Status: summary.CampaignDone,
		Started: t0, Finished: t0.Add(time.Hour), Thresholds: stats.Thresholds{P95Ms: 100, SuccessRatio: 0.99},
		Idle: &summary.Idle{Start: t0, End: t0.Add(30 * time.Second), Cores: 0.001, Method: "cumulative", Samples: 30}}
	summary.BuildSummary(s, costRuns(cores, rates), true)
	return s
}

// golden is testdata/name, written first from got with -update-cost
// (got "": read only).
func golden(t *testing.T, name, got string) string {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateCost && got != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCostBeforeTheCurveReportsTheSame: evidence written before the cost
// curve reads and reports as it did. A straight line's campaign, recomputed,
// renders the summary.md the code before the curve rendered (marginal cost,
// engine at rest, observed figures, projection); the summary.json that code
// wrote for a falling cost (the fit refused as non-linear, no curve) renders
// its summary.md unchanged.
func TestCostBeforeTheCurveReportsTheSame(t *testing.T) {
	t.Parallel()
	straight := costSummary(func(r float64) float64 { return 0.02 + 0.0025*r }, []float64{100, 250, 500})
	search.Project(straight, 1000)
	if got := Campaign(straight, nil).Markdown(); got != golden(t, "cost-straight.md", got) {
		t.Errorf("a straight line's summary.md changed:\n%s", got)
	}
	old := costSummary(falls, []float64{5, 10, 16, 30, 50})
	search.Project(old, 40)
	if *updateCost {
		b, _ := json.MarshalIndent(old, "", "  ")
		golden(t, "cost-falling-before.json", string(b))
		golden(t, "cost-falling-before.md", Campaign(old, nil).Markdown())
	}
	var read summary.Summary
	if err := json.Unmarshal([]byte(golden(t, "cost-falling-before.json", "")), &read); err != nil {
		t.Fatal(err)
	}
	if got, want := Campaign(&read, nil).Markdown(), golden(t, "cost-falling-before.md", ""); got != want {
		t.Errorf("an old summary.json renders differently:\n%s\nwant\n%s", got, want)
	}
}

// TestCostCurveAnswersAFallingCost is issue 23's item 5: a server whose CPU
// per exchange falls 45 % between 5/s and 50/s got "not given, the fit is
// poor (non-linear …)". Now the marginal cost is given: where a straight
// line holds and its cost, every band between measured rates, the
// operating rate's, a campaign-wide marginal_cost_varies warning, and the
// projection says what it extrapolates.
func TestCostCurveAnswersAFallingCost(t *testing.T) {
	t.Parallel()
	s := costSummary(falls, []float64{5, 10, 16, 30, 50})
	search.Project(s, 40)
	md := Campaign(s, nil).Markdown()
	for _, want := range []string{
		"marginal cost falls with the rate: no single straight line holds over 5–50/s; one does over 5–",
		"marginal cost between neighbouring measured rates, from those two rates alone, CPU-ms per exchange (95% CI): 5–10/s ",
		"one more exchange at 40/s costs ",
		", between the measured 30–50/s alone; on the straight line over 16–50/s: ",
		"the cost follows the curve through every measured rate, within the measured 5–50/s",
		"**marginal_cost_varies**: no single CPU-ms per exchange describes this server",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "not given") {
		t.Errorf("summary.md still refuses:\n%s", md)
	}
	search.Project(s, 100)
	if md := Campaign(s, nil).Markdown(); !strings.Contains(md, "extrapolated beyond the measured 5–50/s along the straight line of the curve's last segment (16–50/s, ") {
		t.Errorf("a projection beyond the measured rates does not say so:\n%s", md)
	}
	// summary.json keeps the curve, and reads back to the same report.
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var read summary.Summary
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	if got := Campaign(&read, nil).Markdown(); got != Campaign(s, nil).Markdown() {
		t.Errorf("summary.json reads back differently:\n%s\nwant\n%s", got, Campaign(s, nil).Markdown())
	}
}

// TestCostCurveFromAHostileSummary: a summary.json's cost curve is read,
// not trusted: segments without figures, no bands, more breaks than
// segments render without a panic.
func TestCostCurveFromAHostileSummary(t *testing.T) {
	t.Parallel()
	for _, curveJSON := range []string{
		`{"segments":[{"from_rate":1,"to_rate":2},{"from_rate":2,"to_rate":3,"marginal":null}],"bands":[{"from_rate":1,"to_rate":2}]}`,
		`{"segments":[{},{}],"breaks":[1,2,3,4],"bands":[]}`,
		`{"segments":[],"breaks":[5]}`,
		`{"segments":[{"marginal":{"cpu_ms":1e308,"ci95":[-1e308,1e308]}},{"marginal":{"cpu_ms":-5}}],"bands":[{"marginal":{"cpu_ms":3}}]}`,
	} {
		var s summary.Summary
		doc := `{"status":"done","marginal_cost":{"fit":{"points":3,"poor":"x"},"curve":` + curveJSON + `},"projection":{"line":"p"}}`
		if err := json.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatal(err)
		}
		d := Campaign(&s, &Page{})
		_, _ = d.Markdown(), d.Text()
		if err := d.HTML(io.Discard); err != nil {
			t.Fatal(err)
		}
		_ = CostShort(s.Cost)
		_ = CostLines(&s)
	}
}

// TestCostLinesNameTheCeiling: runs a capacity search left out of the
// fit are named in the cost's words, by count and rate.
func TestCostLinesNameTheCeiling(t *testing.T) {
	c := &summary.Cost{LeftOut: []summary.LeftOut{{Run: "05-r1-80rps", TargetRPS: 80}, {Run: "06-r2-80rps", TargetRPS: 80}, {Run: "07-r1-60rps", TargetRPS: 60}}}
	got := strings.Join(costLines(c), "\n")
	if want := "left out of the fit: 3 runs of the probes that broke the objective (60/s, 80/s): at the engine's ceiling they measure it, not the cost"; !strings.Contains(got, want) {
		t.Errorf("got\n%s\nwant a line\n%s", got, want)
	}
	// A summary.json may list any number: the words stay one short line,
	// in n log n.
	var b strings.Builder
	b.WriteString(`{"left_out":[`)
	for i := range 200_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"run":"r%d","target_rps":%d}`, i, i)
	}
	b.WriteString(`]}`)
	var hostile summary.Cost
	if err := json.Unmarshal([]byte(b.String()), &hostile); err != nil {
		t.Fatal(err)
	}
	for _, l := range costLines(&hostile) {
		if strings.HasPrefix(l, "left out") && (len(l) > 300 || !strings.Contains(l, "200000 runs") || !strings.Contains(l, "and 199992 more rates")) {
			t.Errorf("%d bytes: %.300s", len(l), l)
		}
	}
}
