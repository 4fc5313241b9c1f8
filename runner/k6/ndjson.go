package k6

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Point is one sample of --out json.
type Point struct {
	Metric string
	Time   time.Time
	Value  float64
	Tags   map[string]string
}

// NDJSONStats counts what a stream held.
type NDJSONStats struct {
	Lines     int
	Points    int
	Metrics   int
	Malformed int
	// FirstBad is the line number of the first malformed line (0: none).
	FirstBad int
}

// ReadNDJSON streams Points of k6's --out json to fn. Metric declarations
// are counted; malformed lines are counted, never fatal.
func ReadNDJSON(r io.Reader, fn func(Point) error) (NDJSONStats, error) {
	var st NDJSONStats
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	for sc.Scan() {
		st.Lines++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var rec struct {
			Type   string `json:"type"`
			Metric string `json:"metric"`
			Data   struct {
				Time  time.Time         `json:"time"`
				Value *float64          `json:"value"`
				Tags  map[string]string `json:"tags"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &rec); err != nil || rec.Metric == "" {
			st.bad()
			continue
		}
		switch rec.Type {
		case "Metric":
			st.Metrics++
		case "Point":
			if rec.Data.Value == nil || rec.Data.Time.IsZero() {
				st.bad()
				continue
			}
			st.Points++
			if err := fn(Point{Metric: rec.Metric, Time: rec.Data.Time, Value: *rec.Data.Value, Tags: rec.Data.Tags}); err != nil {
				return st, err
			}
		default:
			st.bad()
		}
		if st.FirstBad == 0 && st.Malformed > 0 {
			st.FirstBad = st.Lines
		}
	}
	if err := sc.Err(); err != nil {
		return st, fmt.Errorf("line %d: %w", st.Lines+1, err)
	}
	return st, nil
}

func (s *NDJSONStats) bad() {
	s.Malformed++
	if s.FirstBad == 0 {
		s.FirstBad = s.Lines
	}
}
