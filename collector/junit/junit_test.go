package junit

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/compare"
	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// Validate checks a JUnit file against testdata/JUnit.xsd with xmllint; it
// skips t, saying why, when xmllint is not installed.
func Validate(t *testing.T, file string) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint is not installed (Debian: libxml2-utils; scripts/prometheus-e2e/install.sh installs it): the JUnit schema cannot be checked")
	}
	out, err := exec.Command(xmllint, "--noout", "--schema", "testdata/JUnit.xsd", file).CombinedOutput()
	if err != nil {
		t.Fatalf("%s does not validate against JUnit.xsd: %v\n%s", file, err, out)
	}
}

func write(t *testing.T, d *Suites) string {
	t.Helper()
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func run(id string, rate float64, p95 float64, passed bool, status stats.RunStatus) *stats.Run {
	th := []stats.ThresholdResult{
		{Name: "p95_ms <", Limit: 50, Actual: p95, Passed: p95 < 50},
		{Name: "success_ratio >=", Limit: 0.99, Actual: 1, Passed: true},
		{Name: "dropped <=", Limit: 0, Actual: 0, Passed: true},
	}
	return &stats.Run{ID: id, TargetRPS: rate, Status: status, ThresholdsPassed: passed, Thresholds: th, MeasuredSeconds: 5,
		Started: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Reason: map[bool]string{true: "", false: "interrupted"}[status == stats.StatusDone]}
}

func campaign() *summary.Summary {
	return &summary.Summary{CampaignID: "20261201-100000.000-ci", Target: "https://as.example/token", Driver: "local", Status: summary.CampaignDone,
		Started: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Thresholds: stats.Thresholds{P95Ms: 50, SuccessRatio: 0.99},
		Stages: []*summary.Stage{
			{TargetRPS: 100, ReportedRun: "01-r1-100rps", Runs: []*stats.Run{run("01-r1-100rps", 100, 12.5, true, stats.StatusDone), run("03-r2-100rps", 100, 13, true, stats.StatusDone)}},
			{TargetRPS: 250, ReportedRun: "02-r1-250rps", Runs: []*stats.Run{run("02-r1-250rps", 250, 61.2, false, stats.StatusDone), run("04-r2-250rps", 250, 49, false, stats.StatusAborted)}},
		}}
}

// TestRunJUnit: a case per threshold per stage with every run's figure in
// the message, failed when a run failed it, an error for a run that could
// not finish; the file validates against the common JUnit schema.
func TestRunJUnit(t *testing.T) {
	d := FromSummary(campaign(), "run")
	path := write(t, d)
	if len(d.Suites) != 2 || !d.Failed() {
		t.Fatalf("suites %+v", d.Suites)
	}
	s100, s250 := d.Suites[0], d.Suites[1]
	if s100.Tests != 4 || s100.Failures != 0 || s100.Errors != 0 || s250.Failures != 1 || s250.Errors != 1 {
		t.Errorf("counts: %+v / %+v", s100, s250)
	}
	f := s250.Cases[0]
	if f.Name != "p95_ms < 50" || f.Classname != "tokex.run.stage 250/s" || f.Failure == nil ||
		!strings.Contains(f.Failure.Message, "1/2 runs passed (✗ 02-r1-250rps 61.2 reported, ✓ 04-r2-250rps 49)") {
		t.Errorf("failed case %+v %+v", f, f.Failure)
	}
	if !strings.Contains(s100.SystemOut, "p95_ms < 50: p95_ms < 50 at 100/s: 2/2 runs passed (✓ 01-r1-100rps 12.5 reported, ✓ 03-r2-100rps 13)") {
		t.Errorf("passed figures not in system-out: %q", s100.SystemOut)
	}
	if e := s250.Cases[3].Error; e == nil || !strings.Contains(e.Message, "04-r2-250rps aborted: interrupted") {
		t.Errorf("unfinished run: %+v", s250.Cases[3])
	}
	Validate(t, path)
}

// TestCapacityJUnit: at a rate the search found broken a failed threshold
// is what it looked for (skipped, saying so); the capacity case carries the
// command's verdict.
func TestCapacityJUnit(t *testing.T) {
	s := campaign()
	s.Stages[1].Runs[1].Status = stats.StatusDone
	s.Capacity = &curve.Result{Status: curve.StatusFound, Capacity: 100, Upper: 250, Objective: curve.Objective{P95Ms: 50},
		Probes: []curve.Probe{{Rate: 100, Verdict: curve.Pass, P95Ms: 12.5}, {Rate: 250, Verdict: curve.Broken, Broken: []string{"p95 61.2 ms ≥ 50 ms"}}}}
	d := FromSummary(s, "capacity")
	if d.Failed() || len(d.Suites) != 3 {
		t.Fatalf("a search that found its capacity failed: %+v", d.Suites)
	}
	if c := d.Suites[1].Cases[0]; c.Skipped == nil || !strings.HasPrefix(c.Skipped.Message, "above the capacity") {
		t.Errorf("broken rate's threshold: %+v", c)
	}
	capa := d.Suites[2]
	if last := capa.Cases[len(capa.Cases)-1]; last.Name != "capacity" || last.Failure != nil || !strings.Contains(capa.SystemOut, "capacity ≥ 100/s, < 250/s") {
		t.Errorf("capacity case %+v, out %q", last, capa.SystemOut)
	}
	Validate(t, write(t, d))
	s.Capacity.Status, s.Capacity.Capacity = curve.StatusBelowMin, 0
	if d := FromSummary(s, "capacity"); !d.Failed() {
		t.Error("a search that found no capacity passed")
	}
}

// TestCompareJUnit: a case per compared figure per stage; a gated figure
// worse beyond noise fails with the figures, one that cannot be judged is
// skipped.
func TestCompareJUnit(t *testing.T) {
	r := &compare.Result{A: "a", B: "b", Stages: []compare.Stage{
		{TargetRPS: 100, Metrics: []compare.Metric{
			{Name: "p95", Unit: "ms", A: 10, B: 14, Diff: 4, DiffPct: 40, Noise: 0.5, Rounds: [2]int{3, 3}, Verdict: "B higher"},
			{Name: "p50", Unit: "ms", A: 5, B: 7, Diff: 2, DiffPct: 40, Noise: 0.5, Rounds: [2]int{3, 3}, Verdict: "B higher"},
			{Name: "cpu_ms_per_exchange", Unit: "CPU-ms", A: 1, B: 1.01, Diff: 0.01, DiffPct: 1, Noise: 0.05, Rounds: [2]int{3, 3}, Verdict: "within noise"},
			{Name: "p99", Unit: "ms", A: 1, B: 2, Diff: 1, DiffPct: 100, Rounds: [2]int{1, 1}, Verdict: "noise unknown (one round each)"},
		}},
		{TargetRPS: 500, Only: "B"},
	}}
	d := FromCompare(r, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	s := d.Suites[0]
	if s.Tests != 4 || s.Failures != 1 || s.Skipped != 1 || d.Suites[1].Skipped != 1 {
		t.Fatalf("counts %+v", d.Suites)
	}
	if f := s.Cases[0].Failure; f == nil || !strings.Contains(f.Message, "regression: p95 at 100/s: A 10.000 ms, B 14.000 ms, B − A +4.000 (+40.0 %), noise ±0.500 (3/3 rounds)") {
		t.Errorf("regression case %+v", s.Cases[0])
	}
	if s.Cases[1].Failure != nil {
		t.Error("p50 is not gated")
	}
	if got := r.Regressions(); len(got) != 1 || got[0].String() != "100/s p95: 10.00 → 14.00 ms (+4.00 ms, +40.0 %), beyond the round-to-round noise of ±0.50 ms (3/3 rounds)" {
		t.Errorf("regressions %v", got)
	}
	if u := r.Unjudged(); len(u) != 2 {
		t.Errorf("unjudged %v", u)
	}
	Validate(t, write(t, d))
}

// TestValidatorCatchesABrokenFile: the schema check fails on a file the
// schema refuses (no failures attribute, a time zone in the timestamp, two
// outcomes in one case), and hostile text stays well-formed XML.
func TestValidatorCatchesABrokenFile(t *testing.T) {
	if _, err := exec.LookPath("xmllint"); err != nil {
		t.Skip("xmllint is not installed (Debian: libxml2-utils)")
	}
	good, _ := FromSummary(campaign(), "run").Marshal()
	for name, breakIt := range map[string]func(string) string{
		"no failures attribute": func(s string) string { return strings.Replace(s, ` failures="0"`, "", 1) },
		"a time zone": func(s string) string {
			return strings.Replace(s, `timestamp="2026-12-01T10:00:00"`, `timestamp="2026-12-01T10:00:00Z"`, 1)
		},
		"two outcomes": func(s string) string {
			return strings.Replace(s, `<failure message=`, `<skipped message="x"></skipped><failure message=`, 1)
		},
	} {
		path := filepath.Join(t.TempDir(), "bad.xml")
		bad := breakIt(string(good))
		if bad == string(good) {
			t.Fatalf("%s: nothing changed", name)
		}
		_ = os.WriteFile(path, []byte(bad), 0o644)
		if err := exec.Command("xmllint", "--noout", "--schema", "testdata/JUnit.xsd", path).Run(); err == nil {
			t.Errorf("%s: validated", name)
		}
	}
	s := campaign()
	s.Reason, s.Status, s.Target = "\x00\x1b[31m]]><x/>\ufffe", summary.CampaignFailed, "<&>"
	d := FromSummary(s, "run")
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, &Suites{}); err != nil {
		t.Fatalf("hostile text broke the XML: %v", err)
	}
	Validate(t, write(t, d))
}
