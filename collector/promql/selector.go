// Package promql measures the engine's CPU and memory over a run's exact
// window by asking an existing Prometheus (its HTTP API, PromQL): by
// default cAdvisor's container_cpu_usage_seconds_total and
// container_memory_working_set_bytes for the engine Pods, or counter and
// gauge selectors the user gives (process_cpu_seconds_total{job="..."}).
// Every query is recorded as sent, and the data are checked — missing
// series, samples that do not cover the window, a scrape interval too
// coarse for the run — with coded warnings, never a silent zero.
package promql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Selector is a PromQL instant-vector selector: a metric name and label
// matchers. Only selectors are accepted from a config, so that tokex can
// put them inside rate(…[window]) and count their samples.
type Selector struct {
	Metric   string
	Matchers []Matcher
}

// Matcher is one label matcher: name op "value".
type Matcher struct {
	Name  string
	Op    string // =, !=, =~, !~
	Value string
}

// Bounds of a selector from a config.
const (
	MaxSelectorBytes = 4096
	MaxMatchers      = 32
)

// String renders the selector in PromQL, values quoted with Go's escapes
// (which PromQL's double-quoted strings read the same).
func (s Selector) String() string {
	var b strings.Builder
	b.WriteString(s.Metric)
	if len(s.Matchers) == 0 {
		return b.String()
	}
	b.WriteByte('{')
	for i, m := range s.Matchers {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.Name)
		b.WriteString(m.Op)
		b.WriteString(strconv.Quote(m.Value))
	}
	b.WriteByte('}')
	return b.String()
}

// With returns the selector with matchers added after its own.
func (s Selector) With(ms ...Matcher) Selector {
	return Selector{Metric: s.Metric, Matchers: append(append([]Matcher{}, s.Matchers...), ms...)}
}

// ParseSelector reads `metric{label="value",…}`: a metric name, then
// optionally label matchers (=, !=, =~, !~) with a double-quoted,
// single-quoted or backquoted value. Anything else — a function, an
// operator, a range, an offset — is refused: the config names series, tokex
// writes the queries.
func ParseSelector(text string) (Selector, error) {
	if len(text) > MaxSelectorBytes {
		return Selector{}, fmt.Errorf("longer than %d bytes", MaxSelectorBytes)
	}
	p := &parser{s: text}
	p.space()
	var sel Selector
	sel.Metric = p.name(true)
	if sel.Metric == "" {
		return Selector{}, p.fail("a metric name (like process_cpu_seconds_total)")
	}
	p.space()
	if p.eat('{') {
		if err := p.matchers(&sel); err != nil {
			return Selector{}, err
		}
	}
	p.space()
	if p.i < len(p.s) {
		return Selector{}, p.fail("the end of the selector (only a metric name and {label matchers}: tokex writes the functions and the range)")
	}
	return sel, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) fail(want string) error {
	if p.i >= len(p.s) {
		return fmt.Errorf("expected %s at the end", want)
	}
	return fmt.Errorf("expected %s at byte %d (%q)", want, p.i+1, clip(p.s[p.i:]))
}

func clip(s string) string {
	if len(s) > 16 {
		return s[:16] + "…"
	}
	return s
}

func (p *parser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *parser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// name reads a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) or, without colons,
// a label name.
func (p *parser) name(metric bool) string {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || metric && c == ':' || p.i > start && c >= '0' && c <= '9'
		if !ok {
			break
		}
		p.i++
	}
	return p.s[start:p.i]
}

func (p *parser) matchers(sel *Selector) error {
	for {
		p.space()
		if p.eat('}') {
			return nil
		}
		if len(sel.Matchers) == MaxMatchers {
			return fmt.Errorf("more than %d label matchers", MaxMatchers)
		}
		var m Matcher
		if m.Name = p.name(false); m.Name == "" {
			return p.fail("a label name or }")
		}
		p.space()
		if m.Op = p.op(); m.Op == "" {
			return p.fail("=, !=, =~ or !~")
		}
		p.space()
		v, err := p.str()
		if err != nil {
			return err
		}
		m.Value = v
		sel.Matchers = append(sel.Matchers, m)
		p.space()
		if p.eat(',') {
			continue
		}
		if !p.eat('}') {
			return p.fail(", or }")
		}
		return nil
	}
}

func (p *parser) op() string {
	for _, op := range []string{"=~", "!~", "!=", "="} {
		if strings.HasPrefix(p.s[p.i:], op) {
			p.i += len(op)
			return op
		}
	}
	return ""
}

// str reads a quoted string: "…" and '…' with Go's escapes, `…` raw.
func (p *parser) str() (string, error) {
	if p.i >= len(p.s) || strings.IndexByte("\"'`", p.s[p.i]) < 0 {
		return "", p.fail("a quoted value")
	}
	q := p.s[p.i]
	start := p.i
	p.i++
	for p.i < len(p.s) && p.s[p.i] != q {
		if p.s[p.i] == '\\' && q != '`' {
			p.i++
		}
		p.i++
	}
	if p.i >= len(p.s) {
		return "", errors.New("a quoted value is not closed")
	}
	p.i++
	lit := p.s[start:p.i]
	if q == '\'' { // as a double-quoted literal: \' means ', a bare " needs escaping
		inner := lit[1 : len(lit)-1]
		var b strings.Builder
		for j := 0; j < len(inner); j++ {
			switch {
			case inner[j] == '\\' && j+1 < len(inner) && inner[j+1] == '\'':
				b.WriteByte('\'')
				j++
			case inner[j] == '\\' && j+1 < len(inner):
				b.WriteString(inner[j : j+2])
				j++
			case inner[j] == '"':
				b.WriteString(`\"`)
			default:
				b.WriteByte(inner[j])
			}
		}
		lit = `"` + b.String() + `"`
	}
	v, err := strconv.Unquote(lit)
	if err != nil {
		return "", fmt.Errorf("the value %s: %v", clip(lit), err)
	}
	return v, nil
}
