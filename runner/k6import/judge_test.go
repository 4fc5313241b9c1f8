package k6import

import (
	"bufio"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/k6"
)

// TestImportRedirectsAreNoSuccess: tokex's agent script against a target
// answering every exchange with 307, under real k6 v2.2.0 (issue 24 item
// 1). k6 tags each 307 expected_response:true; the script's lines say
// http_error 307, its checks were 0 %, k6 exited 99. The import says so,
// judged by the lines, or without them by k6's checks points.
func TestImportRedirectsAreNoSuccess(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"tokex lines": {"tokex2-k6v2.2.0-redirect-target-agent-0.ndjson.gz": "agent-0.ndjson.gz",
			"tokex2-k6v2.2.0-redirect-target-agent-0.log": "agent-0.log", "tokex2-k6v2.2.0-redirect-target-summary-export.json": "agent-0.json"},
		"checks points": {"tokex2-k6v2.2.0-redirect-target-agent-0.ndjson.gz": "agent-0.ndjson.gz"},
	} {
		r, ws := importRun(t, files)
		if r.Requests != 201 || r.OK != 0 || r.SuccessRatio != 0 || r.ThresholdsPassed || r.Errors["http_error:307"] != 201 {
			t.Errorf("%s: %d requests, %d ok (%.2f), passed %v, errors %v\n%s", name, r.Requests, r.OK, r.SuccessRatio, r.ThresholdsPassed, r.Errors, ws)
		}
		if strings.Contains(ws, "success_unknown") || strings.Contains(ws, "incomplete") {
			t.Errorf("%s: warnings\n%s", name, ws)
		}
	}
}

// Without tokex lines and k6 checks nothing judged the exchanges: said as
// success_unknown, which fails the run's verdict unless allowed; 307s are
// not counted as successes.
func TestImportWithoutChecksSaysSuccessUnknown(t *testing.T) {
	src := t.TempDir()
	in, err := os.Open(fixturePath(t, "tokex2-k6v2.2.0-redirect-target-agent-0.ndjson.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), `"metric":"checks"`) {
			b.WriteString(sc.Text() + "\n")
		}
	}
	_ = os.WriteFile(filepath.Join(src, "agent-0.ndjson"), []byte(b.String()), 0o644)
	res, err := Import(Options{Dir: src, Out: t.TempDir(), Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0}, Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Summary.Stages[0].Runs[0]
	var codes []string
	for _, w := range r.Warnings {
		codes = append(codes, string(w.Code))
	}
	if r.OK != 0 || r.ThresholdsPassed || !strings.Contains(strings.Join(codes, ","), "success_unknown") {
		t.Errorf("%d ok, passed %v, warnings %v", r.OK, r.ThresholdsPassed, r.Warnings)
	}
}

// A wrong CA: k6's error tag (x509: unknown authority) is the top error's
// description (issue 24 item 4).
func TestImportCarriesK6ErrorText(t *testing.T) {
	r, ws := importRun(t, map[string]string{"tokex2-k6v2.2.0-wrong-ca-agent-0.ndjson.gz": "agent-0.ndjson.gz",
		"tokex2-k6v2.2.0-wrong-ca-agent-0.log": "agent-0.log"})
	if len(r.TopErrors) != 1 || doc.ErrorKindText(r.TopErrors[0]) != `conn_error:1310 ×201 ("k6: x509: unknown authority (k6 error 1310)")` {
		t.Errorf("top errors %v\n%s", r.TopErrors, ws)
	}
}

// TestImportedRowsTakeTheLinesHops: a request point matched to a tokex4
// line of the agent script gets its grant, hop and issued token size; one
// matched to no line gets none.
func TestImportedRowsTakeTheLinesHops(t *testing.T) {
	j := &judge{}
	for _, l := range []judged{{outcome: "ok", hop: 2, tokenBytes: 905}, {outcome: "ok", kind: "client_credentials", tokenBytes: 600}} {
		k := judgeKey{stats.Measured, 200, map[int]int64{2: 5000, 0: 3000}[l.hop]}
		if j.lines == nil {
			j.lines = map[judgeKey][]judged{}
		}
		j.lines[k] = append(j.lines[k], l)
		j.nLines++
	}
	point := func(ms float64) k6.Point {
		return k6.Point{Metric: "http_req_duration", Value: ms, Tags: map[string]string{"status": "200", "scenario": "measured"}}
	}
	for _, tc := range []struct {
		ms   float64
		want stats.Request
	}{
		{5, stats.Request{Outcome: "ok", Hop: 2, TokenBytes: 905}},
		{3, stats.Request{Outcome: "ok", Kind: "client_credentials", TokenBytes: 600}},
		{4, stats.Request{Outcome: "ok"}},
	} {
		o, detail, _ := j.outcome(0, point(tc.ms), stats.Measured)
		r := stats.Request{Outcome: o, Detail: detail}
		j.agentic(&r)
		if r != tc.want {
			t.Errorf("%g ms: %+v, want %+v", tc.ms, r, tc.want)
		}
	}
}
