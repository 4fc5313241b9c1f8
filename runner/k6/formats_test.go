package k6

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// The expected figures below were read off each fixture by hand (the line
// quoted in the comment), not computed by the parser under test.

func TestFullModeSectionsKeptApart(t *testing.T) {
	t.Parallel()
	s, err := ParseSummary(fixture(t, "k6docs-next-summary-full.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		section, metric string
		count, p95      float64
	}{
		// "█ TOTAL RESULTS": http_reqs 65, http_req_duration p(95)=145.17ms
		{"", "http_reqs", 65, 0}, {"", "http_req_duration", 0, 145.17},
		// "█ SCENARIO: left": http_reqs 40, p(95)=207.85ms
		{"scenario left", "http_reqs", 40, 0}, {"scenario left", "http_req_duration", 0, 207.85},
		// "↳ GROUP: crocodiles results": http_reqs 20, p(95)=255.24ms
		{"scenario left › group crocodiles results", "http_reqs", 20, 0},
		{"scenario left › group crocodiles results", "http_req_duration", 0, 255.24},
	}
	for _, c := range cases {
		ms := s.Metrics
		if c.section != "" {
			ms = s.Sections[c.section]
		}
		m := ms[c.metric]
		if m == nil || c.count > 0 && m.Count != c.count || c.p95 > 0 && m.Stats["p(95)"] != c.p95 {
			t.Errorf("%q %s: %+v", c.section, c.metric, m)
		}
	}
	if n, ok := s.ScenarioCount("http_reqs", "left"); !ok || n != 40 {
		t.Errorf("scenario count from the full section: %v %v", n, ok)
	}
}

func TestNestedGroups(t *testing.T) {
	t.Parallel()
	// The nesting k6's own TestSummaryNestedGroups asserts for full mode.
	text := "  █ SCENARIO: default\n\n    http_reqs..........: 9 1/s\n\n    ↳ GROUP: E\n      http_reqs........: 5 1/s\n" +
		"      ↳ GROUP: D\n        http_reqs......: 3 1/s\n    ↳ GROUP: F\n      http_reqs........: 1 1/s\n"
	s, err := ParseSummary(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]float64{"scenario default": 9, "scenario default › group E": 5,
		"scenario default › group E › group D": 3, "scenario default › group F": 1} {
		if m := s.Sections[key]["http_reqs"]; m == nil || m.Count != want {
			t.Errorf("%s: %+v", key, m)
		}
	}
}

func TestLegacyMarkedMetrics(t *testing.T) {
	t.Parallel()
	s, err := ParseSummary(fixture(t, "k6docs-v0.47-legacy-summary-constant-arrival-thresholds.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// "✗ http_req_duration...: … p(95)=113.18ms" and its sub-line below it,
	// not under http_req_connecting two lines up.
	if m := s.Metrics["http_req_duration{expected_response:true}"]; m == nil || m.Stats["p(95)"] != 113.18 {
		t.Errorf("sub-line: %+v", m)
	}
	if m := s.Metrics["http_req_connecting{expected_response:true}"]; m != nil {
		t.Errorf("sub-line misfiled under http_req_connecting: %+v", m)
	}
	// "✓ http_req_failed......: 0.00%   ✓ 0         ✗ 1501"
	if m := s.Metrics["http_req_failed"]; m == nil || m.Passes != 0 || m.Total != 1501 {
		t.Errorf("http_req_failed %+v", m)
	}
	// "checks.........................: 100.00% ✓ 4503      ✗ 0"
	if m := s.Metrics["checks"]; m == nil || m.Ratio != 1 || m.Passes != 4503 || m.Total != 4503 {
		t.Errorf("checks %+v", m)
	}
	want := []Threshold{{Metric: "http_req_duration", Passed: false}, {Metric: "http_req_failed", Passed: true}}
	if len(s.Thresholds) != 2 || s.Thresholds[0] != want[0] || s.Thresholds[1] != want[1] {
		t.Errorf("thresholds %+v", s.Thresholds)
	}
	if len(s.Warnings) != 1 || s.Warnings[0] != "some thresholds have failed" {
		t.Errorf("warnings %q", s.Warnings)
	}

	// "█ GET home - …" group headers do not make a legacy summary v1.
	g, err := ParseSummary(fixture(t, "k6docs-v0.47-legacy-summary-groups-thresholds.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// "group_duration.................: … p(95)=9.32s"; "checks: 50.00% ✓ 45 ✗ 45"
	if m := g.Metrics["group_duration"]; m == nil || m.Stats["p(95)"] != 9320 {
		t.Errorf("group_duration %+v", m)
	}
	if m := g.Metrics["checks"]; m == nil || m.Ratio != 0.5 || m.Passes != 45 || m.Total != 90 {
		t.Errorf("checks %+v", m)
	}

	// k6's own legacy text summary (internal/js/summary_test.go).
	k, err := ParseSummary(fixture(t, "k6repo-summary_test-legacy-text-summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// "✓ checks......: 75.00% 45 out of 60", "✗ http_reqs...: 3      3/s",
	// "✗ my_trend....: avg=15ms … p(95)=19.5ms p(99.9)=19.99ms", "vus: 1 min=1 max=1"
	if m := k.Metrics["checks"]; m == nil || m.Ratio != 0.75 || m.Passes != 45 || m.Total != 60 {
		t.Errorf("checks %+v", m)
	}
	if n, ok := k.Counter("http_reqs"); !ok || n != 3 || k.Metrics["http_reqs"].PerSecond != 3 {
		t.Errorf("http_reqs %v", n)
	}
	if m := k.Metrics["my_trend"]; m == nil || m.Stats["p(95)"] != 19.5 || m.Stats["p(99.9)"] != 19.99 {
		t.Errorf("my_trend %+v", m)
	}
	if m := k.Metrics["vus"]; m == nil || m.Kind != "gauge" || m.Value != 1 {
		t.Errorf("vus %+v", m)
	}
	if k.Format != "legacy" || len(k.Thresholds) != 3 || !k.Thresholds[0].Passed || k.Thresholds[1].Passed || k.Thresholds[2].Passed || !k.Crossed {
		// thresholds in file order: checks ✓, http_reqs ✗, my_trend ✗
		t.Errorf("format %s thresholds %+v crossed %v", k.Format, k.Thresholds, k.Crossed)
	}
}

func TestHandleSummaryData(t *testing.T) {
	t.Parallel()
	s, err := ParseExport(fixture(t, "k6repo-summary_test-handlesummary-raw-data.json"))
	if err != nil {
		t.Fatal(err)
	}
	// metrics.http_reqs.values: {"count": 3, "rate": 3}
	if n, ok := s.Counter("http_reqs"); !ok || n != 3 || s.Metrics["http_reqs"].PerSecond != 3 {
		t.Errorf("http_reqs %v %v", n, ok)
	}
	// metrics.checks.values: {"passes": 45, "fails": 15, "rate": 0.75}
	if m := s.Metrics["checks"]; m.Kind != "rate" || m.Ratio != 0.75 || m.Passes != 45 || m.Total != 60 {
		t.Errorf("checks %+v", m)
	}
	// metrics.my_trend.values: "p(95)": 19.5
	if m := s.Metrics["my_trend"]; m.Kind != "trend" || m.Stats["p(95)"] != 19.5 {
		t.Errorf("my_trend %+v", m)
	}
	// thresholds: checks "rate>70" ok:true; http_reqs "rate<100" ok:false; my_trend "my_trend<1000" ok:false
	want := []Threshold{{Metric: "checks", Expr: "rate>70", Passed: true}, {Metric: "http_reqs", Expr: "rate<100"},
		{Metric: "my_trend", Expr: "my_trend<1000"}}
	if len(s.Thresholds) != 3 || s.Thresholds[0] != want[0] || s.Thresholds[1] != want[1] || s.Thresholds[2] != want[2] || !s.Crossed {
		t.Errorf("thresholds %+v crossed %v", s.Thresholds, s.Crossed)
	}
	if s.Format != "handle-summary" {
		t.Errorf("format %s", s.Format)
	}
}

func TestMachineReadableSummary(t *testing.T) {
	t.Parallel()
	s, err := ParseExport(fixture(t, "k6summary-example-summary-v1-basic.json"))
	if err != nil {
		t.Fatal(err)
	}
	// results.metrics: http_reqs count 1500; http_req_duration "p(95)": 421.32;
	// http_req_failed rate 0.02, passes 1470, fails 30; vus value 10;
	// results.checks.metrics.checksTotal count 3000, checksSucceeded rate 0.95.
	if n, _ := s.Counter("http_reqs"); n != 1500 {
		t.Errorf("http_reqs %v", n)
	}
	if m := s.Metrics["http_req_duration"]; m == nil || m.Stats["p(95)"] != 421.32 {
		t.Errorf("http_req_duration %+v", m)
	}
	if m := s.Metrics["http_req_failed"]; m == nil || m.Ratio != 0.02 || m.Passes != 1470 || m.Total != 1500 {
		t.Errorf("http_req_failed %+v", m)
	}
	if m := s.Metrics["vus"]; m == nil || m.Kind != "gauge" || m.Value != 10 {
		t.Errorf("vus %+v", m)
	}
	if n, _ := s.Counter("checks_total"); n != 3000 || s.Metrics["checks_succeeded"].Ratio != 0.95 {
		t.Errorf("checks %v %+v", n, s.Metrics["checks_succeeded"])
	}
	// The shape k6 v2.2.0 itself writes, per the expectations of its
	// TestMachineReadableSummary: checks as a list, p90/p95, matches/total.
	k6shape := `{"config": {"duration": 1.2, "execution": "local", "script": "script.js"},
	 "metadata": {"generated_at": "2026-11-30T18:00:00.5Z", "k6_version": "2.2.0"},
	 "results": {"checks": {"metrics": [{"contains": "default", "name": "checks_total", "type": "counter", "values": {"count": 1}},
	   {"contains": "default", "name": "checks_failed", "type": "rate", "values": {"matches": 0, "rate": 0, "total": 1}}],
	   "results": [{"fails": 0, "name": "TRUE is TRUE", "passes": 1}]},
	  "metrics": [{"contains": "time", "name": "iteration_duration", "type": "trend", "values": {"avg": 1, "max": 2, "med": 1, "min": 0.5, "p90": 1.8, "p95": 1.9}},
	   {"contains": "default", "name": "iterations", "type": "counter", "values": {"count": 1}}]},
	 "version": "1.0.0"}`
	k, err := ParseExport(strings.NewReader(k6shape))
	if err != nil {
		t.Fatal(err)
	}
	if m := k.Metrics["iteration_duration"]; m.Stats["p(95)"] != 1.9 || k.Metrics["checks_failed"].Total != 1 || k.Format != "machine-readable" {
		t.Errorf("%+v %+v", m, k.Metrics["checks_failed"])
	}
}

func TestScenarioCountRefusesNonsense(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"NaN", "-3", "1e400", "2.5", "Inf"} {
		s, err := ParseSummary(strings.NewReader("  █ THRESHOLDS\n\n    http_reqs{scenario:measured}\n    ✓ 'count>=0' count=" + v +
			"\n\n  █ TOTAL RESULTS\n    http_reqs......: 1800 10/s\n"))
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := s.ScenarioCount("http_reqs", "measured"); ok {
			t.Errorf("count=%s read as %v", v, n)
		}
	}
}

func TestReadCSV(t *testing.T) {
	t.Parallel()
	// Expected figures from Python's csv module over the same file:
	// 1999 data rows; 118 http_req_duration rows (84 tagged
	// scenario=steady_orders, 34 browse), the first at 1796049361 with
	// 16.942012; 92 dropped_iterations rows; extra_tags carry instance_id=0.
	var durations, steady, dropped int
	var first Point
	st, err := ReadCSV(fixture(t, "gen-k6v2.2.0-out.csv"), func(p Point) error {
		switch p.Metric {
		case "http_req_duration":
			if durations == 0 {
				first = p
			}
			durations++
			if p.Tags["scenario"] == "steady_orders" {
				steady++
			}
			if p.Tags["instance_id"] != "0" || p.Tags["testrun_name"] != "demo-run" {
				t.Fatalf("extra_tags not read: %v", p.Tags)
			}
		case "dropped_iterations":
			dropped++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != 1999 || st.Points != 1999 || st.Malformed != 0 {
		t.Errorf("stats %+v", st)
	}
	if durations != 118 || steady != 84 || dropped != 92 {
		t.Errorf("%d durations, %d steady_orders, %d dropped", durations, steady, dropped)
	}
	if first.Time.Unix() != 1796049361 || first.Value != 16.942012 || first.Tags["status"] != "201" && first.Tags["status"] != "200" {
		t.Errorf("first point %+v", first)
	}

	// Every timeFormat k6 offers, and rows that are not samples.
	text := "metric_name,timestamp,metric_value,scenario,extra_tags,metadata\n" +
		"http_reqs,1796049361,1.000000,a,,\n" +
		"http_reqs,1796049361123,1.000000,a,,\n" +
		"http_reqs,1796049361123456,1.000000,a,,\n" +
		"http_reqs,1796049361123456789,1.000000,a,,\n" +
		"http_reqs,2026-11-30T14:36:01.5Z,1.000000,a,k=v&x=y=z,\n" +
		"http_reqs,yesterday,1,a,,\n" +
		"http_reqs,1796049361,NaNish,a,,\n" +
		"too,few\n" +
		"\"unterminated,1,2,3,4,5\n"
	var got []Point
	st, err = ReadCSV(strings.NewReader(text), func(p Point) error { got = append(got, p); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.Points != 5 || st.Malformed != 4 || st.FirstBad != 6 {
		t.Errorf("stats %+v", st)
	}
	wantUS := []int64{1796049361000000, 1796049361123000, 1796049361123456, 1796049361123456, 1796049361500000}
	for i, p := range got {
		if p.Time.UnixMicro() != wantUS[i] {
			t.Errorf("row %d: %v", i, p.Time)
		}
	}
	if len(got) == 5 && (got[4].Tags["k"] != "v" || got[4].Tags["x"] != "y=z") {
		t.Errorf("extra_tags %v", got[4].Tags)
	}
	if _, err := ReadCSV(strings.NewReader("timestamp,value\n1,2\n"), func(Point) error { return nil }); err == nil {
		t.Error("accepted a CSV that is not k6's")
	}
}

func FuzzReadCSV(f *testing.F) {
	f.Add("metric_name,timestamp,metric_value,scenario,extra_tags,metadata\nhttp_reqs,1796049361,1.000000,a,k=v,\n")
	f.Add("metric_name,timestamp,metric_value,extra_tags,metadata\nx,2026-11-30T14:36:01.5Z,1,,\n\"a\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ReadCSV(strings.NewReader(s), func(Point) error { return nil })
	})
}

func FuzzParseExport(f *testing.F) {
	f.Add(`{"metrics":{"http_reqs":{"count":3,"rate":1,"thresholds":{"count>1":true}}}}`)
	f.Add(`{"metrics":{"checks":{"type":"rate","values":{"passes":1,"fails":2,"rate":0.3},"thresholds":{"rate>0.9":{"ok":false}}}}}`)
	f.Add(`{"version":"1.0.0","results":{"metrics":[{"name":"x","type":"trend","values":{"p95":1}}],"checks":{"metrics":{"a":{"name":"c","type":"counter","values":{"count":1}}}}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseExport(strings.NewReader(s))
	})
}

func TestLogLine(t *testing.T) {
	t.Parallel()
	cases := []struct{ line, level, msg string }{
		// testdata/k6/tokex-script-k6v2.2.0-drops-agent-0.log (--log-format=raw)
		{"Insufficient VUs, reached 2 active VUs and cannot initialize more", "warn", "Insufficient VUs, reached 2 active VUs and cannot initialize more"},
		{"thresholds on metrics 'checks{scenario:measured}, dropped_iterations{scenario:measured}' have been crossed", "error",
			"thresholds on metrics 'checks{scenario:measured}, dropped_iterations{scenario:measured}' have been crossed"},
		// testdata/k6/gen-k6v2.2.0-pod-quiet.log (logfmt)
		{`time="2026-11-30T14:36:01Z" level=warning msg="Insufficient VUs, reached 4 active VUs and cannot initialize more" executor=constant-arrival-rate scenario=steady_orders`,
			"warn", "Insufficient VUs, reached 4 active VUs and cannot initialize more"},
		// testdata/k6/mini-nginx-v1-summary-constant-arrival-dropped.txt (legacy)
		{"WARN[0008] Insufficient VUs, reached 1000 active VUs and cannot initialize more  executor=constant-arrival-rate scenario=vegeta_like",
			"warn", "Insufficient VUs, reached 1000 active VUs and cannot initialize more"},
		{"ERRO[0030] some thresholds have failed", "error", "some thresholds have failed"},
		// the summary is indented; request lines are not logs
		{"    http_reqs......................: 201    7.973559/s", "", ""},
		{"  █ THRESHOLDS ", "", ""},
		{"tokex1,0,measured,160,1796064369036000,12004000,203591,200,ok,", "", ""},
		{"", "", ""},
	}
	for _, c := range cases {
		level, msg, ok := LogLine(c.line)
		if ok != (c.level != "") || level != c.level || msg != c.msg {
			t.Errorf("%q: %q %q %v", c.line, level, msg, ok)
		}
	}
}

// A record longer than MaxNDJSONLine is skipped and counted, and a cut
// file keeps the rows before the cut (issue 9 items 14 and 16 for CSV).
func TestReadCSVBoundsRecordsAndKeepsACutFile(t *testing.T) {
	t.Parallel()
	const header = "metric_name,timestamp,metric_value,extra_tags,metadata\n"
	row := "http_req_duration,1796049361,5.5,,\n"
	long := "http_req_duration,1796049361,5.5,\"" + strings.Repeat("x", MaxNDJSONLine+1) + "\",\n"
	in := io.MultiReader(strings.NewReader(header+row+long+row+"http_req_dura"), iotest.ErrReader(io.ErrUnexpectedEOF))
	n := 0
	st, err := ReadCSV(in, func(Point) error { n++; return nil })
	if err != nil || n != 2 || st.Malformed != 1 || st.FirstBad != 2 || !st.Truncated {
		t.Fatalf("points %d stats %+v err %v", n, st, err)
	}
}
