package k6

import (
	"encoding/json"
	"fmt"
	"io"
)

// ParseExport reads a legacy --summary-export JSON file into a Summary.
// Its thresholds map says true when a threshold FAILED.
func ParseExport(r io.Reader) (*Summary, error) {
	var doc struct {
		Metrics map[string]map[string]json.RawMessage `json:"metrics"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("k6 summary export: %w", err)
	}
	if len(doc.Metrics) == 0 {
		return nil, fmt.Errorf("k6 summary export: no metrics")
	}
	s := &Summary{Format: "export", Metrics: map[string]*Metric{}}
	for name, fields := range doc.Metrics {
		m := &Metric{Name: name, Stats: map[string]float64{}}
		for k, raw := range fields {
			if k == "thresholds" {
				var th map[string]bool
				_ = json.Unmarshal(raw, &th)
				for expr, failed := range th {
					s.Thresholds = append(s.Thresholds, Threshold{Metric: name, Expr: expr, Passed: !failed})
					if failed {
						s.Crossed = true
					}
				}
				continue
			}
			var v float64
			if json.Unmarshal(raw, &v) == nil {
				m.Stats[k] = v
			}
		}
		switch {
		case has(m.Stats, "avg"):
			m.Kind = "trend"
		case has(m.Stats, "count"):
			m.Kind, m.Count, m.PerSecond = "counter", m.Stats["count"], m.Stats["rate"]
		case has(m.Stats, "passes") || has(m.Stats, "fails"):
			m.Kind = "rate"
			m.Passes, m.Total = int64(m.Stats["passes"]), int64(m.Stats["passes"]+m.Stats["fails"])
			m.Ratio = m.Stats["value"]
		case has(m.Stats, "value"):
			m.Kind, m.Value = "gauge", m.Stats["value"]
		}
		s.Metrics[name] = m
	}
	return s, nil
}

func has(m map[string]float64, k string) bool { _, ok := m[k]; return ok }
