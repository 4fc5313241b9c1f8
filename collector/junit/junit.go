// Package junit writes tokex's verdicts as JUnit XML for CI systems: one
// test case per threshold per stage (run, capacity) or per compared figure
// (compare), the figures in the message. The shape is the common one of
// Apache Ant's JUnit task, which Jenkins, GitLab and GitHub's reporters
// read: testsuites/testsuite/testcase with failure, error or skipped
// (testdata/JUnit.xsd, checked with xmllint).
package junit

import (
	"encoding/xml"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Suites is a JUnit document.
type Suites struct {
	XMLName xml.Name `xml:"testsuites"`
	Suites  []Suite  `xml:"testsuite"`
}

// Suite is one stage (or the comparison of one stage, or the search).
type Suite struct {
	Name       string     `xml:"name,attr"`
	Package    string     `xml:"package,attr"`
	ID         int        `xml:"id,attr"`
	Timestamp  string     `xml:"timestamp,attr"`
	Hostname   string     `xml:"hostname,attr"`
	Tests      int        `xml:"tests,attr"`
	Failures   int        `xml:"failures,attr"`
	Errors     int        `xml:"errors,attr"`
	Skipped    int        `xml:"skipped,attr"`
	Time       string     `xml:"time,attr"`
	Properties Properties `xml:"properties"`
	Cases      []Case     `xml:"testcase"`
	SystemOut  string     `xml:"system-out"`
	SystemErr  string     `xml:"system-err"`
}

// Properties are a suite's settings (the campaign, the thresholds).
type Properties struct {
	Property []Property `xml:"property"`
}

// Property is one setting.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Case is one check.
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr"`
	Skipped   *Message `xml:"skipped"`
	Error     *Message `xml:"error"`
	Failure   *Message `xml:"failure"`
}

// Message is a failure's, error's or skip's text.
type Message struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// Outcome of a case.
type Outcome int

const (
	Pass Outcome = iota
	Fail
	Skip
	Err
)

// Add appends a case with its outcome and message (the message is the
// failure's text too, so a CI page that shows either shows the figures).
func (s *Suite) Add(name string, o Outcome, msg string, seconds float64) {
	c := Case{Name: token(name), Classname: token(s.Package + "." + s.Name), Time: decimal(seconds)}
	m := &Message{Message: msg, Text: msg}
	switch o {
	case Fail:
		m.Type = "threshold"
		c.Failure = m
		s.Failures++
	case Err:
		m.Type = "error"
		c.Error = m
		s.Errors++
	case Skip:
		c.Skipped = &Message{Message: msg}
		s.Skipped++
	default: // a passed case has no message in the schema: the figures go to the suite's output
		s.SystemOut += c.Name + ": " + msg + "\n"
	}
	s.Tests++
	s.Cases = append(s.Cases, c)
	s.Time = decimal(parse(s.Time) + seconds)
}

// NewSuite starts a suite; at is when what it judges began.
func NewSuite(pkg, name string, id int, at time.Time, props ...Property) Suite {
	host, err := os.Hostname()
	if err != nil || strings.TrimSpace(host) == "" {
		host = "localhost"
	}
	return Suite{Name: token(name), Package: token(pkg), ID: id, Timestamp: at.UTC().Format("2006-01-02T15:04:05"),
		Hostname: token(host), Time: "0", Properties: Properties{Property: props}}
}

// Marshal renders the document with an XML declaration.
func (d *Suites) Marshal() ([]byte, error) {
	b, err := xml.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// Failed reports whether any case failed or errored.
func (d *Suites) Failed() bool {
	for _, s := range d.Suites {
		if s.Failures+s.Errors > 0 {
			return true
		}
	}
	return false
}

// token is a name as the schema's xs:token: no leading, trailing or
// repeated spaces, no tabs or newlines, never empty.
func token(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	return s
}

func decimal(v float64) string {
	if v < 0 || v != v {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func parse(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// Prop is a property.
func Prop(name string, value any) Property {
	return Property{Name: token(name), Value: fmt.Sprint(value)}
}
