package k6

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// k6's default log format is logfmt: a console.log line is msg's value
// (issue 24 item 4). Each tokex2 line of a real agent log, written as k6
// writes console output in the logrus layout of
// testdata/k6/gen-k6v2.2.0-pod-quiet.log, reads as the raw line does.
func TestLinesInsideLogfmt(t *testing.T) {
	t.Parallel()
	s := bufio.NewScanner(fixture(t, "tokex2-k6v2.2.0-redirect-target-agent-0.log"))
	n := 0
	for s.Scan() {
		raw, ok, err := ParseLine(s.Text())
		if !ok {
			continue
		}
		n++
		logfmt := `time="2026-12-01T21:14:26Z" level=info msg="` + s.Text() + `" source=console`
		got, ok, err2 := ParseLine(logfmt)
		if !ok || err2 != nil || err != nil || got != raw {
			t.Fatalf("%s: ok=%v err=%v, raw err=%v\n got %+v\nwant %+v", logfmt, ok, err2, err, got, raw)
		}
	}
	if n != 242 {
		t.Fatalf("%d lines, want the fixture's 242", n)
	}
}

// Two pasted runs are refused, never merged (issue 24 item 4): the v1
// layout (two THRESHOLDS blocks) and the legacy one (metrics twice).
func TestTwoSummariesInOneFileRefused(t *testing.T) {
	t.Parallel()
	read := func(name string) string {
		b, err := io.ReadAll(fixture(t, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct{ a, b string }{
		{"tokex2-k6v2.2.0-late-starts-agent-0.log", "tokex2-k6v2.2.0-redirect-target-agent-0.log"},
		{"k6learn-legacy-summary-constant-arrival.txt", "k6learn-legacy-summary-constant-arrival.txt"},
		{"k6docs-next-summary-full.txt", "k6docs-next-summary-compact.txt"},
	} {
		for _, one := range []string{c.a, c.b} {
			if _, err := ParseSummary(strings.NewReader(read(one))); err != nil {
				t.Fatalf("%s alone: %v", one, err)
			}
		}
		_, err := ParseSummary(strings.NewReader(read(c.a) + "\n" + read(c.b)))
		if err == nil || !strings.Contains(err.Error(), "two k6 end-of-test summaries") {
			t.Errorf("%s + %s: %v", c.a, c.b, err)
		}
	}
}

// k6's documented error codes read as words (issue 24 item 4).
func TestErrorText(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]string{
		"1310": "k6: TLS: x509: certificate signed by unknown authority (k6 error 1310)",
		"1050": "k6: request timeout (k6 error 1050)",
		"1212": "k6: TCP dial: connection refused (k6 error 1212)",
		"1220": "k6: TCP: connection reset by peer (k6 error 1220)",
		"1101": "k6: DNS: no IP found for the host (k6 error 1101)",
		"1503": "k6: HTTP 503 (k6 error 1503)",
		"1611": "k6: HTTP/2 GOAWAY NO_ERROR (k6 error 1611)",
		"1632": "k6: HTTP/2 stream error PROTOCOL_ERROR (k6 error 1632)",
		"1664": "k6: HTTP/2 connection error HTTP_1_1_REQUIRED (k6 error 1664)",
		"1669": "k6: HTTP/2 connection error code 18 (k6 error 1669)",
		"1650": "k6: HTTP/2 connection error (k6 error 1650)",
		"1701": "k6: response decompression error (k6 error 1701)",
		"1999": "", "0": "", "other": "", "01310": "", "": "",
	} {
		if got := ErrorText(code); got != want {
			t.Errorf("%q: %q, want %q", code, got, want)
		}
	}
}
