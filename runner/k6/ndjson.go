package k6

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tokex-dev/tokex/internal/lines"
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
	Malformed int // including lines longer than MaxNDJSONLine
	// FirstBad is the line number of the first malformed line (0: none).
	FirstBad int
	// Truncated: the stream was cut (a .gz file ending mid-stream); the
	// points before the cut were read.
	Truncated bool
}

// MaxNDJSONLine bounds a line of --out json (k6 writes a few hundred bytes).
const MaxNDJSONLine = 1 << 20

// ReadNDJSON streams Points of k6's --out json to fn. Metric declarations
// are counted; malformed and over-long lines are counted, never fatal.
func ReadNDJSON(r io.Reader, fn func(Point) error) (NDJSONStats, error) {
	var st NDJSONStats
	lr := lines.NewReader(r, MaxNDJSONLine)
	long := 0
	for {
		b, err := lr.Next()
		if lr.Long > long {
			st.Malformed += lr.Long - long
			long = lr.Long
			if st.FirstBad == 0 || lr.FirstLong < st.FirstBad {
				st.FirstBad = lr.FirstLong
			}
		}
		if err == io.EOF {
			break
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			st.Truncated = true
			break
		}
		if err != nil {
			return st, fmt.Errorf("line %d: %w", lr.Line+1, err)
		}
		st.Lines = lr.Line
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
	}
	st.Lines = lr.Line
	return st, nil
}

func (s *NDJSONStats) bad() {
	s.Malformed++
	if s.FirstBad == 0 {
		s.FirstBad = s.Lines
	}
}
