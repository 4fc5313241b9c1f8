package evidence

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// RequestsHeader documents requests.csv.gz (see README "Evidence folder").
const RequestsHeader = "agent,seq,phase,scheduled_unix_us,send_lag_us,duration_us,status,outcome,detail"

// ResourcesHeader documents resources.csv.
const ResourcesHeader = "at_unix_us,kind,name,cpu_millicores,memory_bytes,cpu_seconds_total,source"

// clean keeps a free-text field inside its CSV column, and keeps a
// spreadsheet from reading it as a formula (a leading =, +, -, @, tab or CR
// gets a leading ').
func clean(s string) string {
	if strings.ContainsAny(s, ",\n\r\"") {
		s = strings.NewReplacer(",", ";", "\n", " ", "\r", " ", "\"", "'").Replace(s)
	}
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		s = "'" + s
	}
	return s
}

// AppendRequest appends one CSV line for r to buf.
func AppendRequest(buf []byte, r *stats.Request) []byte {
	buf = strconv.AppendInt(buf, int64(r.Agent), 10)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, r.Seq, 10)
	buf = append(buf, ',')
	buf = append(buf, r.Phase...)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, r.ScheduledUS, 10)
	buf = append(buf, ',')
	if !r.Dropped() {
		buf = strconv.AppendInt(buf, r.SendLagUS, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.DurationUS, 10)
	} else {
		buf = append(buf, ',')
	}
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, int64(r.Status), 10)
	buf = append(buf, ',')
	buf = append(buf, clean(r.Outcome)...)
	buf = append(buf, ',')
	buf = append(buf, clean(exchange.SafeDetail(r.Detail))...)
	return append(buf, '\n')
}

// ParseRequest parses one line of requests.csv.
func ParseRequest(line string) (stats.Request, error) {
	var r stats.Request
	var f [9]string
	n := 0
	for n < 8 {
		i := strings.IndexByte(line, ',')
		if i < 0 {
			return r, errors.New("too few columns")
		}
		f[n], line = line[:i], line[i+1:]
		n++
	}
	f[8] = line
	var err error
	atoi := func(s string) int64 {
		if err != nil || s == "" {
			return 0
		}
		var v int64
		v, err = strconv.ParseInt(s, 10, 64)
		return v
	}
	r.Agent = int(atoi(f[0]))
	r.Seq = atoi(f[1])
	r.Phase = stats.Phase(f[2])
	r.ScheduledUS = atoi(f[3])
	r.SendLagUS = atoi(f[4])
	r.DurationUS = atoi(f[5])
	r.Status = int(atoi(f[6]))
	r.Outcome = f[7]
	r.Detail = f[8]
	if err != nil {
		return r, err
	}
	if r.Phase != stats.Warmup && r.Phase != stats.Measured {
		return r, fmt.Errorf("unknown phase %q", f[2])
	}
	if r.Outcome == "" {
		return r, errors.New("empty outcome")
	}
	return r, nil
}

// ReadRequests reads a requests.csv.gz file.
func ReadRequests(path string) ([]stats.Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return parseRequests(path, zr)
}

func parseRequests(path string, rd io.Reader) ([]stats.Request, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var out []stats.Request
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			if sc.Text() != RequestsHeader {
				return nil, fmt.Errorf("%s: unexpected header %q", path, sc.Text())
			}
			continue
		}
		r, err := ParseRequest(sc.Text())
		if err != nil {
			return out, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		// A run cut by a crash leaves a truncated gzip stream: keep what was read.
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return out, fmt.Errorf("%s: truncated after %d rows: %w", path, len(out), err)
		}
		return out, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// AppendResource appends one CSV line for s.
func AppendResource(buf []byte, s *stats.ResourceSample) []byte {
	buf = strconv.AppendInt(buf, s.AtUS, 10)
	buf = append(buf, ',')
	buf = append(buf, clean(s.Kind)...)
	buf = append(buf, ',')
	buf = append(buf, clean(s.Name)...)
	buf = append(buf, ',')
	buf = strconv.AppendFloat(buf, s.CPUMillicores, 'f', 3, 64)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, s.MemoryBytes, 10)
	buf = append(buf, ',')
	buf = strconv.AppendFloat(buf, s.CPUSecondsTotal, 'f', 6, 64)
	buf = append(buf, ',')
	buf = append(buf, clean(s.Source)...)
	return append(buf, '\n')
}

// ReadResources reads a resources.csv file; a missing file is no samples.
func ReadResources(path string) ([]stats.ResourceSample, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var out []stats.ResourceSample
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			if sc.Text() != ResourcesHeader {
				return nil, fmt.Errorf("%s: unexpected header %q", path, sc.Text())
			}
			continue
		}
		p := strings.Split(sc.Text(), ",")
		if len(p) != 7 {
			return out, fmt.Errorf("%s:%d: want 7 columns, got %d", path, line, len(p))
		}
		var s stats.ResourceSample
		var e1, e2, e3, e4 error
		s.AtUS, e1 = strconv.ParseInt(p[0], 10, 64)
		s.Kind, s.Name, s.Source = p[1], p[2], p[6]
		s.CPUMillicores, e2 = strconv.ParseFloat(p[3], 64)
		s.MemoryBytes, e3 = strconv.ParseInt(p[4], 10, 64)
		s.CPUSecondsTotal, e4 = strconv.ParseFloat(p[5], 64)
		if err := errors.Join(e1, e2, e3, e4); err != nil {
			return out, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}
