package k6

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// Line is one per-request line of the agent script: the request row, and
// how its send lag splits (-1 in lines of the first version, tokex1).
type Line struct {
	stats.Request
	StartLagUS int64 // scheduled slot → k6 began the iteration
	MintUS     int64 // minting and signing the subject token
	// Began is how many iterations k6 had begun in the scenario on this
	// agent before this one (exec.scenario.iterationInInstance); -1 in
	// lines before tokex3. Seq is then the slot of the begin time, which
	// is the arrival's only while k6 begins iterations on time.
	Began int64
}

// BeganUS is when k6 began the iteration (µs), or false for tokex1 lines.
func (l *Line) BeganUS() (int64, bool) {
	if l.MintUS < 0 { // tokex1: no start lag
		return 0, false
	}
	return l.ScheduledUS + l.StartLagUS, true
}

// ParseLine reads one per-request line of the agent script. ok is false for
// lines that are not tokex lines (k6's summary, warnings); err is set for a
// tokex line that is malformed (cut by log rotation, say).
func ParseLine(s string) (l Line, ok bool, err error) {
	l.StartLagUS, l.MintUS, l.Began = -1, -1, -1
	if m := logrusRE.FindStringSubmatch(s); m != nil {
		s = m[2] // k6's default logfmt: the line is msg's value (quotes never occur in it)
	}
	fields := 0
	i := -1
	for _, v := range []struct {
		prefix string
		fields int
	}{{LinePrefix, 15}, {linePrefixV3, 12}, {linePrefixV2, 11}, {linePrefixV1, 9}} {
		if i = strings.Index(s, v.prefix); i >= 0 {
			fields = v.fields
			break
		}
	}
	if i < 0 {
		return l, false, nil
	}
	f := strings.Split(strings.TrimRight(s[i+len(LinePrefix):], "\r\n"), ",")
	if len(f) != fields {
		return l, true, fmt.Errorf("want %d fields", fields)
	}
	n := func(x string) int64 {
		if err != nil {
			return 0
		}
		var v int64
		v, err = strconv.ParseInt(x, 10, 64)
		return v
	}
	r := &l.Request
	r.Agent = int(n(f[0]))
	r.Phase = stats.Phase(f[1])
	r.Seq = n(f[2])
	r.ScheduledUS = n(f[3])
	r.SendLagUS = n(f[4])
	r.DurationUS = n(f[5])
	r.Status = int(n(f[6]))
	r.Outcome, r.Detail = exchange.Outcome(f[7]), f[8]
	if fields >= 11 {
		l.StartLagUS, l.MintUS = n(f[9]), n(f[10])
	}
	if fields >= 12 {
		l.Began = n(f[11])
	}
	if fields == 15 {
		err = agentic(r, f[12], f[13], f[14], err)
	}
	if err != nil {
		return l, true, err
	}
	if fields >= 11 && (l.MintUS < 0 || l.Began < -1) {
		return l, true, errors.New("negative mint time or iteration count")
	}
	if r.Phase != stats.Warmup && r.Phase != stats.Measured {
		return l, true, errors.New("unknown phase " + f[1])
	}
	switch r.Outcome {
	case exchange.OutcomeOK, exchange.OutcomeOAuthError, exchange.OutcomeHTTPError, exchange.OutcomeBadResponse,
		exchange.OutcomeTimeout, exchange.OutcomeConnError:
	default:
		return l, true, errors.New("unknown outcome " + f[7])
	}
	return l, true, nil
}

// agentic reads a tokex4 line's kind, hop and token size.
func agentic(r *stats.Request, kind, hop, size string, err error) error {
	if err != nil {
		return err
	}
	num := func(s string, hi int) (int, error) {
		if s == "" {
			return 0, nil
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v > hi {
			return 0, fmt.Errorf("%q out of range", s)
		}
		return v, nil
	}
	r.Kind = exchange.Grant(kind)
	if r.Kind == exchange.GrantExchange || !r.Kind.Known() {
		return errors.New("unknown kind " + kind)
	}
	if r.Hop, err = num(hop, stats.MaxChain); err != nil || r.Hop > 0 && r.Kind != "" {
		return errors.Join(err, errors.New("a hop outside 1–5 or on a plain grant"))
	}
	if r.TokenBytes, err = num(size, stats.MaxTokenBytes); err != nil || r.TokenBytes > 0 && r.Outcome != exchange.OutcomeOK {
		return errors.Join(err, errors.New("a token size out of range or on a failure"))
	}
	return nil
}

// LogLine recognises one of k6's own log lines in a Pod log: logfmt
// (time=… level=… msg=…), legacy (WARN[0008] …) or raw (--log-format=raw,
// as tokex runs k6: the message alone, unindented). The end-of-test summary
// is indented, so it is never taken for a log line. level is info, warn or
// error; a raw line is a warning unless it says thresholds were crossed.
func LogLine(line string) (level, msg string, ok bool) {
	line = strings.TrimRight(line, " \t\r\n")
	if line == "" || line[0] == ' ' || line[0] == '\t' || strings.HasPrefix(line, LinePrefix) || strings.HasPrefix(line, linePrefixV3) ||
		strings.HasPrefix(line, linePrefixV2) || strings.HasPrefix(line, linePrefixV1) {
		return "", "", false
	}
	levels := map[string]string{"warning": "warn", "WARN": "warn", "error": "error", "ERRO": "error", "fatal": "error",
		"FATA": "error", "info": "info", "INFO": "info", "debug": "info", "DEBU": "info"}
	if m := logrusRE.FindStringSubmatch(line); m != nil {
		return levels[m[1]], strings.ReplaceAll(m[2], `\"`, `"`), true
	}
	if m := legacyLogRE.FindStringSubmatch(line); m != nil {
		return levels[m[1]], m[2], true
	}
	if crossedRE.MatchString(line) {
		return "error", line, true
	}
	return "warn", line, true
}

// ScenarioCount reads a per-scenario count: from the always-true threshold
// the agent script sets on it (http_reqs{scenario:measured}: count=N), else
// from --summary-mode=full's scenario section, else from the sub-line of
// the totals. ok is false when the summary says nothing, or nonsense.
func (s *Summary) ScenarioCount(metric, scenario string) (float64, bool) {
	want := metric + "{scenario:" + scenario + "}"
	for _, t := range s.Thresholds {
		if strings.ReplaceAll(t.Metric, " ", "") != want {
			continue
		}
		if v, found := strings.CutPrefix(t.Actual, "count="); found {
			return count(strconv.ParseFloat(strings.TrimSpace(v), 64))
		}
	}
	for _, m := range []*Metric{s.Sections["scenario "+scenario][metric], s.Metrics[want]} {
		if m != nil && m.Kind == "counter" {
			return count(m.Count, nil)
		}
	}
	return 0, false
}

// count accepts a finite, non-negative whole count.
func count(v float64, err error) (float64, bool) {
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v != math.Trunc(v) {
		return 0, false
	}
	return v, true
}
