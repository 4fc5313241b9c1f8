package k6

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// maxExport bounds a summary JSON file: real ones are kilobytes.
const maxExport = 16 << 20

// ParseExport reads k6's machine-readable end-of-test summaries:
//   - the legacy --summary-export file (flat values per metric; its
//     thresholds map says true when a threshold FAILED);
//   - the data handleSummary() receives, as JSON.stringify(data) writes it
//     (values under "values"; thresholds as {"expr": {"ok": bool}});
//   - the v2 machine-readable summary (--new-machine-readable-summary:
//     "version", then results.metrics as a list).
func ParseExport(r io.Reader) (*Summary, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxExport+1))
	if err != nil {
		return nil, fmt.Errorf("k6 summary export: %w", err)
	}
	if len(b) > maxExport {
		return nil, fmt.Errorf("k6 summary export: larger than %d MiB", maxExport>>20)
	}
	var doc struct {
		Metrics map[string]json.RawMessage `json:"metrics"`
		Version string                     `json:"version"`
		Results *struct {
			Metrics []machineMetric `json:"metrics"`
			Checks  *struct {
				Metrics json.RawMessage `json:"metrics"` // a list (k6) or a map (the schema's example)
			} `json:"checks"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("k6 summary export: %w", err)
	}
	if doc.Results != nil && doc.Version != "" {
		return parseMachineReadable(doc.Results.Metrics, doc.Results.Checks)
	}
	if len(doc.Metrics) == 0 {
		return nil, errors.New("k6 summary export: no metrics")
	}
	s := &Summary{Format: "export", Metrics: map[string]*Metric{}}
	names := make([]string, 0, len(doc.Metrics))
	for name := range doc.Metrics {
		names = append(names, name)
	}
	sort.Strings(names) // thresholds in a stable order
	for _, name := range names {
		m, err := s.exportMetric(name, doc.Metrics[name])
		if err != nil {
			return nil, fmt.Errorf("k6 summary export: %s: %w", name, err)
		}
		s.Metrics[name] = m
	}
	return s, nil
}

// exportMetric reads one metric of a legacy export or of handleSummary data.
func (s *Summary) exportMetric(name string, raw json.RawMessage) (*Metric, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	m := &Metric{Name: name, Stats: map[string]float64{}}
	values := fields
	if v, ok := fields["values"]; ok { // handleSummary() data
		s.Format = "handle-summary"
		values = nil
		if err := json.Unmarshal(v, &values); err != nil {
			return nil, err
		}
	}
	for k, v := range values {
		var x float64
		if k != "thresholds" && json.Unmarshal(v, &x) == nil {
			m.Stats[k] = x
		}
	}
	if th, ok := fields["thresholds"]; ok {
		if err := s.exportThresholds(name, th); err != nil {
			return nil, err
		}
	}
	var typ string
	_ = json.Unmarshal(fields["type"], &typ)
	m.classify(typ)
	return m, nil
}

// exportThresholds reads {"expr": true when failed} (legacy export) or
// {"expr": {"ok": false when failed}} (handleSummary data).
func (s *Summary) exportThresholds(metric string, raw json.RawMessage) error {
	var th map[string]json.RawMessage
	if err := json.Unmarshal(raw, &th); err != nil {
		return fmt.Errorf("thresholds: %w", err)
	}
	exprs := make([]string, 0, len(th))
	for e := range th {
		exprs = append(exprs, e)
	}
	sort.Strings(exprs)
	for _, expr := range exprs {
		var failed bool
		var ok struct {
			OK *bool `json:"ok"`
		}
		switch v := bytes.TrimSpace(th[expr]); {
		case json.Unmarshal(v, &failed) == nil:
		case json.Unmarshal(v, &ok) == nil && ok.OK != nil:
			failed = !*ok.OK
		default:
			return fmt.Errorf("threshold %q: neither true/false nor {\"ok\": …}", expr)
		}
		s.Thresholds = append(s.Thresholds, Threshold{Metric: metric, Expr: expr, Passed: !failed})
		s.Crossed = s.Crossed || failed
	}
	return nil
}

// classify sets Kind and the typed fields from Stats, by the declared type
// when there is one, else by the values present.
func (m *Metric) classify(typ string) {
	st := m.Stats
	switch {
	case typ == "trend" || typ == "" && (has(st, "avg") || has(st, "med")):
		m.Kind = "trend"
		for _, p := range []string{"90", "95", "99"} { // the v2 summary writes p95
			if v, ok := st["p"+p]; ok && !has(st, "p("+p+")") {
				st["p("+p+")"] = v
			}
		}
	case typ == "counter" || typ == "" && has(st, "count"):
		m.Kind, m.Count, m.PerSecond = "counter", st["count"], st["rate"]
	case typ == "rate" || typ == "" && (has(st, "passes") || has(st, "fails")):
		m.Kind, m.Ratio = "rate", st["rate"]
		if !has(st, "rate") {
			m.Ratio = st["value"]
		}
		m.Passes, m.Total = int64(st["passes"]), int64(st["passes"]+st["fails"])
		if has(st, "matches") || has(st, "total") { // v2 summary
			m.Passes, m.Total = int64(st["matches"]), int64(st["total"])
		}
	case typ == "gauge" || typ == "" && has(st, "value"):
		m.Kind, m.Value = "gauge", st["value"]
	}
}

// machineMetric is one metric of the v2 machine-readable summary.
type machineMetric struct {
	Name   string             `json:"name"`
	Type   string             `json:"type"`
	Values map[string]float64 `json:"values"`
}

func parseMachineReadable(metrics []machineMetric, checks *struct {
	Metrics json.RawMessage `json:"metrics"`
}) (*Summary, error) {
	if checks != nil && len(checks.Metrics) > 0 {
		var list []machineMetric
		if json.Unmarshal(checks.Metrics, &list) != nil {
			var byKey map[string]machineMetric
			if err := json.Unmarshal(checks.Metrics, &byKey); err != nil {
				return nil, fmt.Errorf("k6 summary: results.checks.metrics: %w", err)
			}
			for _, m := range byKey {
				list = append(list, m)
			}
		}
		metrics = append(metrics, list...)
	}
	if len(metrics) == 0 {
		return nil, errors.New("k6 summary: no metrics in results.metrics")
	}
	s := &Summary{Format: "machine-readable", Metrics: map[string]*Metric{}}
	for _, mm := range metrics {
		if mm.Name == "" {
			continue
		}
		m := &Metric{Name: mm.Name, Stats: mm.Values}
		if m.Stats == nil {
			m.Stats = map[string]float64{}
		}
		m.classify(mm.Type)
		s.Metrics[mm.Name] = m
	}
	return s, nil
}

func has(m map[string]float64, k string) bool { _, ok := m[k]; return ok }
