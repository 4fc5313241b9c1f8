package k6

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/stats"
)

// fixture opens a real k6 output from the repository's testdata/k6 (see its SOURCES.md).
func fixture(t testing.TB, name string) *os.File {
	t.Helper()
	dir, _ := os.Getwd()
	for ; dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
	}
	f, err := os.Open(filepath.Join(dir, "testdata", "k6", name))
	if err != nil {
		t.Fatalf("fixture: %v (the k6 fixtures live in testdata/k6)", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseSummaryFixtures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file                  string
		format                string
		reqs, iters, dropped  float64
		p95                   float64
		failedRatio           float64
		thresholds, thrFailed int
		crossed               bool
	}{
		{"gen-k6v2.2.0-pod-quiet.log", "v1", 215, 175, 166, 290.84, 0.1069, 5, 3, true},
		{"k6docs-next-summary-compact.txt", "v1", 45, 45, 0, 148.21, 0, 3, 0, false},
		// --summary-mode=full: the totals, not the last scenario or group section.
		{"k6docs-next-summary-full.txt", "v1", 65, 45, 0, 145.17, 0, 3, 0, false},
		// Legacy summaries whose metrics with thresholds are marked ✓/✗.
		{"k6docs-v0.47-legacy-summary-constant-arrival-thresholds.txt", "legacy", 1501, 1501, 0, 113.18, 0, 2, 1, true},
		{"k6docs-v0.47-legacy-summary-groups-thresholds.txt", "legacy", 180, 45, 0, 215.95, 0, 1, 1, true},
		// tokex's own script under real k6, raw log format.
		{"tokex-script-k6v2.2.0-drops-agent-0.log", "v1", 201, 201, 300, 208.38, 0.0646, 6, 2, true},
		{"k6learn-legacy-summary-constant-arrival.txt", "legacy", 410, 410, 1091, 165.43, 0, 0, 0, false},
		{"mini-nginx-v1-summary-constant-arrival-dropped.txt", "v1", 1767, 1767, 12568, 17980, 0, 4, 3, true},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			s, err := ParseSummary(fixture(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if s.Format != c.format {
				t.Errorf("format %s", s.Format)
			}
			if n, _ := s.Counter("http_reqs"); n != c.reqs {
				t.Errorf("http_reqs %v", n)
			}
			if n, _ := s.Counter("iterations"); n != c.iters {
				t.Errorf("iterations %v", n)
			}
			if n, _ := s.Counter("dropped_iterations"); n != c.dropped {
				t.Errorf("dropped %v", n)
			}
			d := s.Metrics["http_req_duration"]
			if d == nil || d.Kind != "trend" || d.Stats["p(95)"] != c.p95 {
				t.Errorf("http_req_duration %+v", d)
			}
			if f := s.Metrics["http_req_failed"]; f == nil || f.Kind != "rate" || f.Ratio != c.failedRatio {
				t.Errorf("http_req_failed %+v", f)
			}
			failed := 0
			for _, th := range s.Thresholds {
				if !th.Passed {
					failed++
				}
			}
			if len(s.Thresholds) != c.thresholds || failed != c.thrFailed || s.Crossed != c.crossed {
				t.Errorf("thresholds %d failed %d crossed %v: %+v", len(s.Thresholds), failed, s.Crossed, s.Thresholds)
			}
		})
	}
}

func TestSummaryDetails(t *testing.T) {
	t.Parallel()
	s, err := ParseSummary(fixture(t, "gen-k6v2.2.0-pod-quiet.log"))
	if err != nil {
		t.Fatal(err)
	}
	sub := s.Metrics["http_req_duration{scenario:steady_orders}"]
	if sub == nil || sub.Stats["p(95)"] != 280.12 {
		t.Errorf("submetric %+v", sub)
	}
	if f := s.Metrics["http_req_failed"]; f.Passes != 23 || f.Total != 215 {
		t.Errorf("rate counts %+v", f)
	}
	if len(s.Warnings) == 0 || !strings.Contains(s.Warnings[0], "Insufficient VUs") {
		t.Errorf("warnings %v", s.Warnings)
	}
	legacy, _ := ParseSummary(fixture(t, "k6learn-legacy-summary-constant-arrival.txt"))
	if f := legacy.Metrics["http_req_failed"]; f.Passes != 0 || f.Total != 410 {
		t.Errorf("legacy rate %+v", f)
	}
	if b := legacy.Metrics["http_req_blocked"]; b.Stats["min"] != 0.001 {
		t.Errorf("µs parsing %+v", b.Stats)
	}
}

func TestParseExport(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"gen-k6v2.2.0-summary-export-legacy.json", "k6repo-summary_test-old-json-export.json"} {
		s, err := ParseExport(fixture(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(s.Metrics) == 0 {
			t.Errorf("%s: no metrics", name)
		}
	}
	s, _ := ParseExport(fixture(t, "gen-k6v2.2.0-summary-export-legacy.json"))
	if n, _ := s.Counter("http_reqs"); n != 215 {
		t.Errorf("http_reqs %v", n)
	}
	if !s.Crossed {
		t.Error("failed thresholds not seen")
	}
}

func TestReadNDJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file      string
		durations int
		malformed int
	}{
		{"gen-k6v2.2.0-out.ndjson", 117, 0},
		{"kirilly-k6-load-template-results.ndjson", -1, 0},
		{"k6repo-json_test-expected.ndjson", -1, 0},
	} {
		n := 0
		st, err := ReadNDJSON(fixture(t, c.file), func(p Point) error {
			if p.Metric == "http_req_duration" {
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if st.Malformed != c.malformed || st.Points == 0 {
			t.Errorf("%s: %+v", c.file, st)
		}
		if c.durations >= 0 && n != c.durations {
			t.Errorf("%s: %d durations", c.file, n)
		}
	}
	st, _ := ReadNDJSON(strings.NewReader("{\"type\":\"Point\"}\nnot json\n{\"metric\":\"x\",\"type\":\"Point\",\"data\":{\"time\":\"2026-01-01T00:00:00Z\",\"value\":1}}\n"), func(Point) error { return nil })
	if st.Malformed != 2 || st.Points != 1 || st.FirstBad != 1 {
		t.Errorf("malformed handling %+v", st)
	}
}

func FuzzParseSummary(f *testing.F) {
	f.Add("     http_reqs......................: 410    13.617531/s\n")
	f.Add("  █ THRESHOLDS\n\n    http_req_failed\n    ✓ 'rate<0.01' rate=0.00%\n")
	f.Add("    http_req_duration..: avg=1ms min=2µs med=1m2s max=x p(95)=3s\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseSummary(strings.NewReader(s))
	})
}

func FuzzReadNDJSON(f *testing.F) {
	f.Add(`{"metric":"http_reqs","type":"Point","data":{"time":"2026-11-30T14:36:01.7Z","value":1,"tags":{"a":"b"}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ReadNDJSON(strings.NewReader(s), func(Point) error { return nil })
	})
}

func TestScriptAndLines(t *testing.T) {
	t.Parallel()
	js, err := Script(ScriptParams{MaxVUs: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"constant-arrival-rate", "crypto.subtle.sign(SIGNERS[alg].signParams", "name: 'ECDSA', namedCurve: 'P-256'", "'status is 200'", "'has access_token'",
		"'has issued_token_type'", "const VUS = 50;", "console.log(`tokex4,", "exec.scenario.iterationInInstance", "http_reqs{scenario:measured}"} {
		if !strings.Contains(js, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	for _, leak := range []string{"console.log(SECRET", "console.log(token", "${token}`)", "${SECRET}`)"} {
		if strings.Contains(js, leak) {
			t.Errorf("script logs secret material: %q", leak)
		}
	}
	cases := []struct {
		line string
		ok   bool
		bad  bool
		want stats.Request
	}{
		{"tokex1,3,measured,42,1789978138123456,1000,5321,200,ok,", true, false,
			stats.Request{Agent: 3, Phase: stats.Measured, Seq: 42, ScheduledUS: 1789978138123456, SendLagUS: 1000, DurationUS: 5321, Status: 200, Outcome: "ok"}},
		{"2026-11-30T10:00:00.1Z stdout F tokex1,0,warmup,1,5,0,7,400,oauth_error,invalid_grant", true, false,
			stats.Request{Phase: stats.Warmup, Seq: 1, ScheduledUS: 5, DurationUS: 7, Status: 400, Outcome: "oauth_error", Detail: "invalid_grant"}},
		{"     http_reqs......................: 410    13.617531/s", false, false, stats.Request{}},
		{"tokex1,3,measured,42,17899", true, true, stats.Request{}},
		{"tokex2,3,measured,42,1789978138123000,4000,5321,200,ok,,1000,3000", true, false,
			stats.Request{Agent: 3, Phase: stats.Measured, Seq: 42, ScheduledUS: 1789978138123000, SendLagUS: 4000, DurationUS: 5321, Status: 200, Outcome: "ok"}},
		{"tokex2,3,measured,42,1789978138123000,4000,5321,200,ok,", true, true, stats.Request{}}, // a tokex1 layout under tokex2
		{"tokex1,3,later,42,1,1,1,200,ok,", true, true, stats.Request{}},
		{"tokex3,3,measured,42,1789978138123000,4000,5321,200,ok,,1000,3000,40", true, false,
			stats.Request{Agent: 3, Phase: stats.Measured, Seq: 42, ScheduledUS: 1789978138123000, SendLagUS: 4000, DurationUS: 5321, Status: 200, Outcome: "ok"}},
		{"tokex3,3,measured,42,1789978138123000,4000,5321,200,ok,,1000,3000", true, true, stats.Request{}}, // a tokex2 layout under tokex3
		{"tokex3,3,measured,42,1789978138123000,4000,5321,200,ok,,1000,3000,-2", true, true, stats.Request{}},
		{"tokex4,3,measured,42,1789978138123000,4000,5321,200,ok,,1000,3000,40,,,812", true, false,
			stats.Request{Agent: 3, Phase: stats.Measured, Seq: 42, ScheduledUS: 1789978138123000, SendLagUS: 4000, DurationUS: 5321, Status: 200, Outcome: "ok", TokenBytes: 812}},
		{"tokex4,3,measured,42,1789978138130000,1000,6000,200,ok,,0,0,40,,2,905", true, false,
			stats.Request{Agent: 3, Phase: stats.Measured, Seq: 42, ScheduledUS: 1789978138130000, SendLagUS: 1000, DurationUS: 6000, Status: 200, Outcome: "ok", Hop: 2, TokenBytes: 905}},
		{"tokex4,3,measured,42,1789978138123000,4000,5321,400,oauth_error,invalid_grant,1000,3000,40,client_credentials,,", true, false,
			stats.Request{Agent: 3, Phase: stats.Measured, Seq: 42, ScheduledUS: 1789978138123000, SendLagUS: 4000, DurationUS: 5321, Status: 400, Outcome: "oauth_error", Detail: "invalid_grant", Kind: "client_credentials"}},
		{"tokex4,3,measured,42,1,4000,5321,200,ok,,1000,3000,40", true, true, stats.Request{}},            // a tokex3 layout under tokex4
		{"tokex4,3,measured,42,1,4000,5321,200,ok,,1000,3000,40,exchange,,", true, true, stats.Request{}}, // the exchange is written empty
		{"tokex4,3,measured,42,1,4000,5321,200,ok,,1000,3000,40,,6,", true, true, stats.Request{}},
		{"tokex4,3,measured,42,1,4000,5321,200,ok,,1000,3000,40,jwt_bearer,1,", true, true, stats.Request{}},
		{"tokex4,3,measured,42,1,4000,5321,400,oauth_error,x,1000,3000,40,,1,900", true, true, stats.Request{}},
	}
	for _, c := range cases {
		r, ok, err := ParseLine(c.line)
		if ok != c.ok || (err != nil) != c.bad {
			t.Errorf("%q: ok=%v err=%v", c.line, ok, err)
			continue
		}
		if ok && !c.bad && r.Request != c.want {
			t.Errorf("%q: %+v", c.line, r)
		}
	}
	s, _ := ParseSummary(strings.NewReader("  █ THRESHOLDS\n\n    http_reqs{scenario:measured}\n    ✓ 'count>=0' count=1500\n\n  █ TOTAL RESULTS\n    http_reqs......: 1800 10/s\n"))
	if n, ok := s.ScenarioCount("http_reqs", "measured"); !ok || n != 1500 {
		t.Errorf("scenario count %v %v", n, ok)
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add("tokex1,3,measured,42,1789978138123456,1000,5321,200,ok,")
	f.Add("tokex4,3,measured,42,1789978138130000,1000,6000,200,ok,,0,0,40,,2,905")
	f.Fuzz(func(t *testing.T, s string) {
		r, ok, err := ParseLine(s)
		if ok && err == nil && r.Outcome == "" {
			t.Fatal("accepted a line without outcome")
		}
		if ok && err == nil && (r.Hop < 0 || r.Hop > stats.MaxChain || !r.Kind.Known() || r.TokenBytes > 0 && !r.OK()) {
			t.Fatalf("accepted %+v", r.Request)
		}
	})
}

// TestScriptIsValidJavaScript parses the generated script as an ES module
// with node, which this machine image ships (k6 itself cannot run here).
func TestScriptIsValidJavaScript(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	js, _ := Script(ScriptParams{})
	p := filepath.Join(t.TempDir(), "exchange.mjs")
	_ = os.WriteFile(p, []byte(js), 0o644)
	if out, err := exec.Command(node, "--check", p).CombinedOutput(); err != nil {
		t.Fatalf("node --check: %v\n%s", err, out)
	}
}
