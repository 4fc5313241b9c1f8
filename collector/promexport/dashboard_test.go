package promexport

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// DashboardFile is the Grafana dashboard of a campaign live.
const DashboardFile = "../../deploy/grafana/tokex-campaign.json"

type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

// Dashboard returns every PromQL expression of the dashboard: its panels'
// queries and its variables'.
func Dashboard(t *testing.T) (exprs []string, titles []string) {
	t.Helper()
	b, err := os.ReadFile(DashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			if q.RefID == "" || q.Expr == "" {
				t.Errorf("panel %q: a query without refId or expr", p.Title)
			}
			exprs = append(exprs, q.Expr)
			titles = append(titles, p.Title)
		}
	}
	for _, v := range d.Templating.List {
		var q struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &q) == nil && strings.Contains(q.Query, "(") {
			exprs = append(exprs, strings.TrimSuffix(strings.TrimPrefix(q.Query, "label_values("), ", campaign)"))
			titles = append(titles, "variable "+v.Name)
		}
	}
	return exprs, titles
}

var (
	reString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	reGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	reMatchers = regexp.MustCompile(`\{([^}]*)\}`)
	reRange    = regexp.MustCompile(`\[[^\]]*\]`)
	reIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	keywords   = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "offset", "bool", "e"}
)

// names are the metric names an expression reads, and the label names its
// matchers and groupings use.
func names(expr string) (metrics, labels []string) {
	s := reString.ReplaceAllString(expr, `""`)
	for _, m := range reGrouping.FindAllStringSubmatch(s, -1) {
		for _, l := range strings.Split(m[2], ",") {
			labels = append(labels, strings.TrimSpace(l))
		}
	}
	s = reGrouping.ReplaceAllString(s, " ")
	for _, m := range reMatchers.FindAllStringSubmatch(s, -1) {
		for _, kv := range strings.Split(m[1], ",") {
			if l := reIdent.FindString(kv); l != "" {
				labels = append(labels, l)
			}
		}
	}
	s = reMatchers.ReplaceAllString(s, " ")
	s = reRange.ReplaceAllString(s, " ")
	for _, loc := range reIdent.FindAllStringIndex(s, -1) {
		id := s[loc[0]:loc[1]]
		rest := strings.TrimLeft(s[loc[1]:], " ")
		if strings.HasPrefix(rest, "(") || slices.Contains(keywords, id) || loc[0] > 0 && (s[loc[0]-1] >= '0' && s[loc[0]-1] <= '9' || s[loc[0]-1] == '$') {
			continue // a function, a keyword, an exponent, a variable
		}
		metrics = append(metrics, id)
	}
	return metrics, labels
}

// served are the series names and label names an exporter fed a whole
// campaign serves, while its run is under way and once it finished.
func served(t *testing.T) (series, labels map[string]bool) {
	e := New()
	at := time.Unix(1_800_000_000, 0)
	for _, ev := range stream(at) {
		e.Consume(ev)
	}
	during := gather(t, e)
	e.Consume(event.RunFinished{At: at, RunID: "01-r1-100rps", Status: stats.StatusDone, Stats: &stats.Run{EngineCPU: &stats.CPU{Source: "proc"}}})
	series, labels = map[string]bool{}, map[string]bool{"le": true}
	all := gather(t, e)
	for name, f := range during {
		if all[name] == nil {
			all[name] = f
		}
	}
	for name, f := range all {
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				series[name+s] = true
			}
		} else {
			series[name] = true
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
	}
	return series, labels
}

// TestDashboardQueriesNameServedMetrics: every query of the Grafana
// dashboard reads metrics tokex serves, by labels they carry.
func TestDashboardQueriesNameServedMetrics(t *testing.T) {
	series, labels := served(t)
	exprs, titles := Dashboard(t)
	if len(exprs) < 10 {
		t.Fatalf("%d queries", len(exprs))
	}
	for i, expr := range exprs {
		ms, ls := names(expr)
		if len(ms) == 0 {
			t.Errorf("%s: %q reads no metric", titles[i], expr)
		}
		for _, m := range ms {
			if !series[m] {
				t.Errorf("%s: %q reads %s, which tokex does not serve", titles[i], expr, m)
			}
		}
		for _, l := range ls {
			if !labels[l] {
				t.Errorf("%s: %q uses the label %s, which no series has", titles[i], expr, l)
			}
		}
	}
}

// TestDashboardCheckCanFail: the check finds a metric that is not served
// and a label no series has.
func TestDashboardCheckCanFail(t *testing.T) {
	ms, ls := names(`sum by (pod) (rate(tokex_exchange_total{campaign=~"$campaign",x="a}b"}[$__rate_interval])) / on (run) tokex_in_flight * 2e3`)
	if !slices.Equal(ms, []string{"tokex_exchange_total", "tokex_in_flight"}) || !slices.Equal(ls, []string{"pod", "run", "campaign", "x"}) {
		t.Fatalf("metrics %v labels %v", ms, ls)
	}
	series, labels := served(t)
	if series["tokex_exchange_total"] || labels["pod"] {
		t.Fatal("served")
	}
}
