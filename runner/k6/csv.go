package k6

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/internal/lines"
)

// IsCSVHeader reports whether line is the header of k6's --out csv file.
func IsCSVHeader(line string) bool {
	return strings.HasPrefix(strings.TrimPrefix(line, "\ufeff"), "metric_name,timestamp,metric_value,")
}

// ReadCSV streams the samples of k6's --out csv file to fn, as Points.
// Columns are found by name (metric_name, timestamp, metric_value, one per
// system tag, extra_tags as k=v&k=v, metadata); the timestamp may be in any
// of k6's timeFormat values (unix seconds by default, unix_milli/micro/nano,
// rfc3339, rfc3339_nano). Malformed rows are counted, never fatal; Stats.Lines
// counts data rows.
func ReadCSV(r io.Reader, fn func(Point) error) (NDJSONStats, error) {
	var st NDJSONStats
	// k6 writes one record per line: lines are read (and over-long ones
	// skipped and counted) before the CSV parser sees them, so no record
	// costs more than MaxNDJSONLine.
	lr := lines.NewReader(r, MaxNDJSONLine)
	record := func(b []byte) ([]string, error) {
		cr := csv.NewReader(bytes.NewReader(b))
		cr.FieldsPerRecord = -1
		return cr.Read()
	}
	first, err := lr.Next()
	if err != nil {
		return st, fmt.Errorf("k6 csv: no header: %w", err)
	}
	header, err := record(first)
	if err != nil {
		return st, fmt.Errorf("k6 csv: no header: %w", err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	if !IsCSVHeader(strings.Join(header, ",")) {
		return st, errors.New("k6 csv: the header does not start with metric_name,timestamp,metric_value")
	}
	cols := append([]string(nil), header...)
	long := 0
	for {
		b, err := lr.Next()
		if lr.Long > long {
			st.Lines += lr.Long - long
			st.Malformed += lr.Long - long
			if st.FirstBad == 0 {
				st.FirstBad = st.Lines
			}
			long = lr.Long
		}
		if errors.Is(err, io.EOF) {
			return st, nil
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			st.Truncated = true
			return st, nil
		}
		if err != nil {
			return st, fmt.Errorf("k6 csv: row %d: %w", st.Lines+1, err)
		}
		st.Lines++
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		rec, err := record(b)
		if err != nil {
			st.bad()
			continue
		}
		p, ok := csvPoint(cols, rec)
		if !ok {
			st.bad()
			continue
		}
		st.Points++
		if err := fn(p); err != nil {
			return st, err
		}
	}
}

func csvPoint(cols, rec []string) (Point, bool) {
	if len(rec) != len(cols) || rec[0] == "" {
		return Point{}, false
	}
	at, ok := csvTime(rec[1])
	v, err := strconv.ParseFloat(rec[2], 64)
	if !ok || err != nil {
		return Point{}, false
	}
	p := Point{Metric: rec[0], Time: at, Value: v, Tags: map[string]string{}}
	for i := 3; i < len(cols); i++ {
		switch cols[i] {
		case "metadata":
		case "extra_tags":
			for _, kv := range strings.Split(rec[i], "&") {
				if k, val, found := strings.Cut(kv, "="); found && k != "" {
					p.Tags[k] = val
				}
			}
		default:
			if rec[i] != "" {
				p.Tags[cols[i]] = rec[i]
			}
		}
	}
	return p, true
}

// csvTime reads a timestamp in any of k6's CSV time formats; bare integers
// are told apart by magnitude (seconds have 10 digits until 2286).
func csvTime(s string) (time.Time, bool) {
	if strings.Contains(s, "T") {
		t, err := time.Parse(time.RFC3339Nano, s)
		return t, err == nil && t.Year() > 1 && t.Year() < 10000
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, false
	}
	switch {
	case n < 1e11:
		return time.Unix(n, 0).UTC(), true
	case n < 1e14:
		return time.UnixMilli(n).UTC(), true
	case n < 1e17:
		return time.UnixMicro(n).UTC(), true
	default:
		return time.Unix(0, n).UTC(), true
	}
}
