// Package k6 reads k6's output formats with tokex's own parsers (k6's Go
// module is AGPL and not used): the end-of-test summary text of v0.4x
// (legacy), v1.x and v2.x, the --summary-export JSON, and --out json NDJSON.
package k6

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/internal/lines"
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

// Threshold is one threshold verdict. A legacy (v0.4x) summary marks the
// metric line ✓/✗ without the expression; Expr is then empty.
type Threshold struct {
	Metric string
	Expr   string
	Passed bool
	Actual string
}

// Summary is a parsed end-of-test summary.
type Summary struct {
	Format string // "legacy" (v0.4x), "v1" (v1.x/v2.x sections), "export", "handle-summary", "machine-readable"
	// Metrics are the test's totals (TOTAL RESULTS; the whole legacy summary).
	Metrics map[string]*Metric
	// Sections are --summary-mode=full's per-scenario and per-group results,
	// by "scenario NAME" and "scenario NAME › group NAME" (nested groups
	// chain on).
	Sections   map[string]map[string]*Metric
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
	metricLine  = regexp.MustCompile(`^\s*(?:([✓✗]) )?(\{ [^}]*\}|[A-Za-z_][\w{}:., -]*?)\.{2,}: (.*)$`)
	thresholdRE = regexp.MustCompile(`^\s*([✓✗]) '([^']*)' (.*)$`)
	logrusRE    = regexp.MustCompile(`^time="[^"]*" level=(\w+) msg="((?:[^"\\]|\\.)*)"`)
	legacyLogRE = regexp.MustCompile(`^(WARN|ERRO|INFO)\[\d+\] (.*?)\s*(?:\s\w+=\S+)*$`)
	crossedRE   = regexp.MustCompile(`^thresholds on metrics '[^']*' have been crossed$`)
	statRE      = regexp.MustCompile(`([a-z]+|p\([\d.]+\))=(\S+)`)
	groupRE     = regexp.MustCompile(`^(\s*)↳ GROUP: (.*)$`)
)

// summaryParser is ParseSummary's state: where in the summary a line is.
type summaryParser struct {
	s            *Summary
	section      string   // "": totals; else a key of Sections
	scenario     string   // the section of the current "█ SCENARIO:"
	groups       []string // nested "↳ GROUP:" names under it
	groupIndent  []int
	parent       string // last top-level metric, for "{ tag:value }" sub-lines
	thMetric     string // metric whose thresholds are being listed
	thParent     string // the last metric named there without a tag filter
	inThresholds bool
	found        bool
	blocks       map[string]bool // "█ THRESHOLDS" and "█ TOTAL RESULTS" seen
	items        int             // metric lines kept
}

// maxSummaryItems bounds the metrics, thresholds and warnings kept from one
// summary.
const maxSummaryItems = 1000

// ParseSummary reads a k6 log or summary text and extracts the summary:
// legacy (v0.4x, metrics marked ✓/✗ by their thresholds, "█ group" check
// headers), v1/v2 compact and --summary-mode=full (per-scenario and group
// sections, kept apart from the totals). It accepts surrounding log noise
// (banner, progress, logrus, raw log lines).
func ParseSummary(r io.Reader) (*Summary, error) {
	p := &summaryParser{s: &Summary{Metrics: map[string]*Metric{}, Sections: map[string]map[string]*Metric{}, Format: "legacy"}}
	lr := lines.NewReader(r, 1<<20) // longer lines are noise: skipped
	for {
		b, err := lr.Next()
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			break // a cut log still holds the summary lines before the cut
		}
		if err != nil {
			return nil, err
		}
		if err := p.line(strings.TrimRight(string(b), " \t\r")); err != nil {
			return nil, err
		}
	}
	if !p.found {
		return nil, fmt.Errorf("no k6 end-of-test summary found")
	}
	return p.s, nil
}

func (p *summaryParser) line(line string) error {
	trim := strings.TrimSpace(line)
	switch {
	case trim == "":
		return nil
	case strings.HasPrefix(trim, "█ THRESHOLDS"):
		p.s.Format, p.inThresholds = "v1", true
		return p.block("THRESHOLDS")
	case strings.HasPrefix(trim, "█ TOTAL RESULTS"):
		p.s.Format, p.inThresholds, p.section, p.scenario, p.groups, p.groupIndent = "v1", false, "", "", nil, nil
		return p.block("TOTAL RESULTS")
	case strings.HasPrefix(trim, "█ SCENARIO: "):
		p.s.Format, p.inThresholds, p.groups, p.groupIndent = "v1", false, nil, nil
		p.scenario = "scenario " + strings.TrimPrefix(trim, "█ SCENARIO: ")
		p.section = p.scenario
		return nil
	case strings.HasPrefix(trim, "█ "):
		return nil // a legacy group's checks follow; its metrics are the totals
	}
	if m := groupRE.FindStringSubmatch(line); m != nil {
		p.group(len(m[1]), m[2])
		return nil
	}
	if p.logLine(line, trim) {
		return nil
	}
	if p.inThresholds {
		if m := thresholdRE.FindStringSubmatch(line); m != nil {
			if len(p.s.Thresholds) < maxSummaryItems {
				p.s.Thresholds = append(p.s.Thresholds, Threshold{Metric: p.thMetric, Expr: m[2], Passed: m[1] == "✓", Actual: m[3]})
			}
		} else if strings.HasPrefix(trim, "{") { // a submetric under the last metric
			p.thMetric = p.thParent + strings.ReplaceAll(trim, " ", "")
		} else if !strings.ContainsAny(trim, " ") || strings.Contains(trim, "{") {
			p.thMetric, p.thParent = trim, trim
		}
		return nil
	}
	return p.metric(line)
}

// errTwoSummaries refuses a text holding two end-of-test summaries (two
// runs pasted into one file): their thresholds and counts would merge.
var errTwoSummaries = errors.New("two k6 end-of-test summaries in one file (two runs pasted together?): refused, as their counts and thresholds would mix; keep one run per file")

// block notes a summary's top-level block; a second one of a kind is a
// second summary.
func (p *summaryParser) block(name string) error {
	if p.blocks == nil {
		p.blocks = map[string]bool{}
	}
	if p.blocks[name] || name == "THRESHOLDS" && p.blocks["TOTAL RESULTS"] {
		return errTwoSummaries
	}
	p.blocks[name] = true
	return nil
}

// group enters a "↳ GROUP:" section; its indentation says how deep it is.
func (p *summaryParser) group(indent int, name string) {
	for len(p.groupIndent) > 0 && p.groupIndent[len(p.groupIndent)-1] >= indent {
		p.groups, p.groupIndent = p.groups[:len(p.groups)-1], p.groupIndent[:len(p.groupIndent)-1]
	}
	p.groups, p.groupIndent = append(p.groups, name), append(p.groupIndent, indent)
	key := p.scenario
	for _, g := range p.groups {
		if key != "" {
			key += " › "
		}
		key += "group " + g
	}
	p.section = key
}

// logLine recognises k6's own log lines (logfmt, legacy, or raw as with
// --log-format=raw, where only the thresholds-crossed line is known).
func (p *summaryParser) logLine(line, trim string) bool {
	if m := logrusRE.FindStringSubmatch(line); m != nil {
		p.s.logLine(m[1], strings.ReplaceAll(m[2], `\"`, `"`))
		return true
	}
	if m := legacyLogRE.FindStringSubmatch(line); m != nil {
		p.s.logLine(map[string]string{"WARN": "warning", "ERRO": "error", "INFO": "info"}[m[1]], m[2])
		return true
	}
	if crossedRE.MatchString(trim) {
		p.s.logLine("error", trim)
		return true
	}
	return false
}

// metric files one metric line in the current section.
func (p *summaryParser) metric(line string) error {
	m := metricLine.FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	name := strings.TrimSpace(m[2])
	if strings.HasPrefix(name, "{") {
		if p.parent == "" {
			return nil
		}
		name = p.parent + "{" + strings.TrimSpace(strings.Trim(name, "{}")) + "}"
	} else {
		p.parent = name
	}
	if m[1] != "" { // legacy: the metric's thresholds passed (✓) or not (✗)
		if len(p.s.Thresholds) < maxSummaryItems {
			p.s.Thresholds = append(p.s.Thresholds, Threshold{Metric: name, Passed: m[1] == "✓"})
		}
		if m[1] == "✗" {
			p.s.Crossed = true
		}
	}
	met, err := parseValue(name, strings.TrimSpace(m[3]))
	if err != nil {
		return fmt.Errorf("k6 summary: %s: %w", name, err)
	}
	if met == nil {
		return nil
	}
	p.found = true
	if p.items++; p.items > maxSummaryItems {
		return nil // a log may be long; what tokex keeps of it is not
	}
	sec := p.s.Metrics
	if p.section != "" {
		if p.s.Sections[p.section] == nil {
			p.s.Sections[p.section] = map[string]*Metric{}
		}
		sec = p.s.Sections[p.section]
	}
	if _, twice := sec[name]; twice {
		return errTwoSummaries
	}
	sec[name] = met
	return nil
}

func (s *Summary) logLine(level, msg string) {
	if (level == "warning" || level == "error") && len(s.Warnings) < maxSummaryItems {
		s.Warnings = append(s.Warnings, msg)
	}
	if strings.Contains(msg, "have been crossed") || strings.Contains(msg, "some thresholds have failed") {
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
