// Package k6 reads k6's output formats with tokex's own parsers (k6's Go
// module is AGPL and not used): the end-of-test summary text of v0.4x
// (legacy), v1.x and v2.x, the --summary-export JSON, and --out json NDJSON.
package k6

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Metric is one metric line of an end-of-test summary.
type Metric struct {
	Name string
	Kind string // trend, rate, counter, gauge
	// counter: Count and PerSecond; rate: Ratio, Passes, Total; gauge: Value,
	// Min, Max; trend: the statistics, in milliseconds for time trends.
	Count     float64
	PerSecond float64
	Ratio     float64
	Passes    int64
	Total     int64
	Value     float64
	Stats     map[string]float64 // avg, min, med, max, p(90), p(95), …
}

// Threshold is one threshold verdict of a v1/v2 summary.
type Threshold struct {
	Metric string
	Expr   string
	Passed bool
	Actual string
}

// Summary is a parsed end-of-test summary.
type Summary struct {
	Format     string // "legacy" (v0.4x) or "v1" (v1.x/v2.x sections)
	Metrics    map[string]*Metric
	Thresholds []Threshold
	// Crossed is true when k6 logged that thresholds were crossed (exit 99).
	Crossed bool
	// Warnings are k6's own WARN/ERRO lines (Insufficient VUs, …).
	Warnings []string
}

// Counter returns a counter's count, or false.
func (s *Summary) Counter(name string) (float64, bool) {
	m := s.Metrics[name]
	if m == nil || m.Kind != "counter" {
		return 0, false
	}
	return m.Count, true
}

var (
	metricLine  = regexp.MustCompile(`^\s*(\{ [^}]*\}|[A-Za-z_][\w{}:., -]*?)\.{2,}: (.*)$`)
	thresholdRE = regexp.MustCompile(`^\s*([✓✗]) '([^']*)' (.*)$`)
	logrusRE    = regexp.MustCompile(`^time="[^"]*" level=(\w+) msg="((?:[^"\\]|\\.)*)"`)
	legacyLogRE = regexp.MustCompile(`^(WARN|ERRO|INFO)\[\d+\] (.*?)\s*(?:\s\w+=\S+)*$`)
	statRE      = regexp.MustCompile(`([a-z]+|p\([\d.]+\))=(\S+)`)
)

// ParseSummary reads a k6 log or summary text and extracts the summary. It
// accepts surrounding log noise (banner, progress, logrus lines).
func ParseSummary(r io.Reader) (*Summary, error) {
	s := &Summary{Metrics: map[string]*Metric{}, Format: "legacy"}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 4<<20)
	var parent string     // last top-level metric, for "{ tag:value }" sub-lines
	var thMetric string   // metric whose thresholds are being listed
	inThresholds := false // inside "█ THRESHOLDS"
	found := false
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		trim := strings.TrimSpace(line)
		switch {
		case trim == "":
			continue
		case strings.HasPrefix(trim, "█ THRESHOLDS"):
			s.Format, inThresholds = "v1", true
			continue
		case strings.HasPrefix(trim, "█ "):
			s.Format, inThresholds = "v1", false
			continue
		}
		if m := logrusRE.FindStringSubmatch(line); m != nil {
			s.logLine(m[1], strings.ReplaceAll(m[2], `\"`, `"`))
			continue
		}
		if m := legacyLogRE.FindStringSubmatch(line); m != nil {
			s.logLine(map[string]string{"WARN": "warning", "ERRO": "error", "INFO": "info"}[m[1]], m[2])
			continue
		}
		if inThresholds {
			if m := thresholdRE.FindStringSubmatch(line); m != nil {
				s.Thresholds = append(s.Thresholds, Threshold{Metric: thMetric, Expr: m[2], Passed: m[1] == "✓", Actual: m[3]})
			} else if !strings.ContainsAny(trim, " ") || strings.Contains(trim, "{") {
				thMetric = trim
			}
			continue
		}
		m := metricLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := strings.TrimSpace(m[1])
		if strings.HasPrefix(name, "{") {
			if parent == "" {
				continue
			}
			name = parent + "{" + strings.TrimSpace(strings.Trim(name, "{}")) + "}"
		} else {
			parent = name
		}
		met, err := parseValue(name, strings.TrimSpace(m[2]))
		if err != nil {
			return nil, fmt.Errorf("k6 summary: %s: %w", name, err)
		}
		if met != nil {
			s.Metrics[name] = met
			found = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("no k6 end-of-test summary found")
	}
	return s, nil
}

func (s *Summary) logLine(level, msg string) {
	if level == "warning" || level == "error" {
		s.Warnings = append(s.Warnings, msg)
	}
	if strings.Contains(msg, "have been crossed") {
		s.Crossed = true
	}
}

// parseValue reads the right-hand side of a metric line.
func parseValue(name, v string) (*Metric, error) {
	m := &Metric{Name: name}
	f := strings.Fields(v)
	switch {
	case strings.Contains(v, "avg=") || strings.Contains(v, "med="):
		m.Kind, m.Stats = "trend", map[string]float64{}
		for _, kv := range statRE.FindAllStringSubmatch(v, -1) {
			x, err := ParseDuration(kv[2])
			if err != nil {
				return nil, err
			}
			m.Stats[kv[1]] = x
		}
	case len(f) > 0 && strings.HasSuffix(f[0], "%"):
		m.Kind = "rate"
		r, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64)
		if err != nil {
			return nil, err
		}
		m.Ratio = r / 100
		// v1: "93.33% 56 out of 60"; legacy: "0.00%  ✓ 0  ✗ 410" (✓ passes, ✗ fails)
		if len(f) >= 5 && f[2] == "out" && f[3] == "of" {
			m.Passes, _ = strconv.ParseInt(f[1], 10, 64)
			m.Total, _ = strconv.ParseInt(f[4], 10, 64)
		} else if len(f) >= 5 && f[1] == "✓" && f[3] == "✗" {
			p, _ := strconv.ParseInt(f[2], 10, 64)
			n, _ := strconv.ParseInt(f[4], 10, 64)
			m.Passes, m.Total = p, p+n
		}
	case len(f) >= 2 && strings.HasPrefix(f[1], "min="):
		m.Kind = "gauge"
		m.Value, _ = strconv.ParseFloat(f[0], 64)
	case len(f) >= 2 && strings.HasSuffix(f[len(f)-1], "/s"):
		m.Kind = "counter"
		c, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			// data_received: "34 kB  3.9 kB/s" – sizes are not used by tokex
			return nil, nil
		}
		m.Count = c
		m.PerSecond, _ = strconv.ParseFloat(strings.TrimSuffix(f[len(f)-1], "/s"), 64)
	default:
		return nil, nil
	}
	return m, nil
}

// ParseDuration reads k6's time values ("1.2ms", "17.98s", "86.77µs",
// "1m2s", or a bare number for non-time trends) as milliseconds.
func ParseDuration(s string) (float64, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, nil
	}
	d, err := time.ParseDuration(strings.ReplaceAll(s, "µs", "us"))
	if err != nil {
		return 0, fmt.Errorf("bad value %q", s)
	}
	return float64(d) / float64(time.Millisecond), nil
}
