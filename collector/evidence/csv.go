package evidence

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/units"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/lines"
)

// RequestsHeader documents requests.csv.gz (see docs/evidence.md).
// count is empty for one arrival; a dropped row imported from a k6 total
// carries the number of arrivals it stands for. retried is 1 for a request
// sent again on a new connection after a keep-alive race, else empty. kind
// is the grant (empty: a token exchange; client_credentials, jwt_bearer),
// hop the exchange's place in its delegation chain (empty outside one),
// token_bytes the issued access_token's length of a success (else empty).
const RequestsHeader = "agent,seq,phase,scheduled_unix_us,send_lag_us,duration_us,status,outcome,detail,count,retried,kind,hop,token_bytes"

// requestsHeaderV3 is the header before kind, hop and token_bytes existed,
// requestsHeaderV2 before retried did, requestsHeaderV1 before count; all
// still read.
const (
	requestsHeaderV3 = "agent,seq,phase,scheduled_unix_us,send_lag_us,duration_us,status,outcome,detail,count,retried"
	requestsHeaderV2 = "agent,seq,phase,scheduled_unix_us,send_lag_us,duration_us,status,outcome,detail,count"
	requestsHeaderV1 = "agent,seq,phase,scheduled_unix_us,send_lag_us,duration_us,status,outcome,detail"
)

// requestColumns is the number of columns of the current layout.
const requestColumns = 14

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
	buf = append(buf, clean(string(r.Outcome))...)
	buf = append(buf, ',')
	buf = append(buf, clean(exchange.SafeDetail(r.Detail))...)
	buf = append(buf, ',')
	if r.Dropped() && r.Count > 1 {
		buf = strconv.AppendInt(buf, r.Count, 10)
	}
	buf = append(buf, ',')
	if r.Retried && !r.Dropped() {
		buf = append(buf, '1')
	}
	buf = append(buf, ',')
	if r.Kind != exchange.GrantExchange {
		buf = append(buf, clean(string(r.Kind))...)
	}
	buf = append(buf, ',')
	if r.Hop != 0 {
		buf = strconv.AppendInt(buf, int64(r.Hop), 10)
	}
	buf = append(buf, ',')
	if r.TokenBytes != 0 && r.OK() {
		buf = strconv.AppendInt(buf, int64(r.TokenBytes), 10)
	}
	return append(buf, '\n')
}

// ParseRequest parses one line of requests.csv (the current layout).
func ParseRequest(line string) (stats.Request, error) { return parseRequest(line, requestColumns) }

func parseRequest(line string, cols int) (stats.Request, error) {
	var r stats.Request
	var f [requestColumns]string
	n := 0
	for n < cols-1 {
		i := strings.IndexByte(line, ',')
		if i < 0 {
			return r, errors.New("too few columns")
		}
		f[n], line = line[:i], line[i+1:]
		n++
	}
	f[n] = line
	var err error
	atoi := func(s string) int64 {
		if err != nil || s == "" {
			return 0
		}
		var v int64
		v, err = strconv.ParseInt(s, 10, 64)
		return v
	}
	agent := atoi(f[0])
	r.Agent = int(agent)
	r.Seq = atoi(f[1])
	r.Phase = stats.Phase(f[2])
	r.ScheduledUS = atoi(f[3])
	r.SendLagUS = atoi(f[4])
	r.DurationUS = atoi(f[5])
	status := atoi(f[6])
	r.Status = int(status)
	r.Outcome = exchange.Outcome(f[7])
	r.Detail = f[8]
	r.Count = atoi(f[9])
	r.Retried = f[10] == "1"
	r.Kind = exchange.Grant(f[11])
	hop := atoi(f[12])
	r.Hop = int(min(max(hop, -1), stats.MaxChain+1))
	tokenBytes := atoi(f[13])
	r.TokenBytes = int(min(max(tokenBytes, -1), stats.MaxTokenBytes+1))
	if err == nil {
		err = checkAgentic(&r, f[11], hop, tokenBytes)
	}
	switch {
	case err != nil:
		return r, err
	case agent < 0 || agent > math.MaxInt32 || status < 0 || status > 999:
		return r, errors.New("agent or status out of range")
	case r.Phase != stats.Warmup && r.Phase != stats.Measured:
		return r, fmt.Errorf("unknown phase %q", clip(f[2]))
	case r.Outcome == "":
		return r, errors.New("empty outcome")
	case r.Count < 0 || (r.Count > 1 && !r.Dropped()):
		return r, errors.New("count is for dropped rows only")
	case f[10] != "" && (!r.Retried || r.Dropped()):
		return r, errors.New("retried is 1 or empty, and empty for a dropped row")
	case r.Count == 1:
		r.Count = 0
	}
	if r.Dropped() { // never sent: no lag or duration (written empty), whatever a hostile row says
		r.SendLagUS, r.DurationUS = 0, 0
	}
	return r, nil
}

// checkAgentic checks a row's kind, hop and token_bytes (empty in the
// layouts before them).
func checkAgentic(r *stats.Request, kind string, hop, tokenBytes int64) error {
	switch {
	case kind == string(exchange.GrantExchange):
		return errors.New("kind is empty for a token exchange")
	case !r.Kind.Known():
		return fmt.Errorf("unknown kind %q", clip(kind))
	case hop < 0 || hop > stats.MaxChain:
		return fmt.Errorf("hop must be empty or 1 to %d", stats.MaxChain)
	case hop > 0 && r.Kind != "":
		return errors.New("only a token exchange has a hop")
	case tokenBytes < 0 || tokenBytes > stats.MaxTokenBytes:
		return errors.New("token_bytes out of range")
	case tokenBytes > 0 && !r.OK():
		return errors.New("token_bytes is for successes only")
	}
	return nil
}

// RowInfo says what reading a requests.csv.gz met.
type RowInfo struct {
	Rows int64
	// Truncated: the file ends in the middle of its gzip stream (tokex was
	// killed while writing it); the rows before the cut were read.
	Truncated bool
}

// Note describes a problem for the report and the run's warnings.
func (i RowInfo) Note() string {
	if !i.Truncated {
		return ""
	}
	return fmt.Sprintf("%s is truncated after %s rows (tokex stopped while writing it): figures from it are partial", RequestsFile, units.Thousands(i.Rows))
}

// readRequests streams a requests.csv.gz to fn, within stats.MaxRunRows and
// MaxRequestBytes decompressed.
func readRequests(name string, r io.Reader, fn func(*stats.Request)) (RowInfo, error) {
	var info RowInfo
	zr, err := gzip.NewReader(bufio.NewReaderSize(r, 1<<16))
	if err != nil {
		return info, fmt.Errorf("%s: %w", name, err)
	}
	lim := lines.Cap(zr, limits.requestBytes)
	info, err = parseRequests(name, lim, fn)
	if lim.Hit {
		return info, fmt.Errorf("%s: refused: more than %s bytes decompressed (a run tokex writes stays far below; a compression bomb?)", name, units.Thousands(limits.requestBytes))
	}
	return info, err
}

// parseRequests reads the CSV text of requests.csv.gz.
func parseRequests(name string, r io.Reader, fn func(*stats.Request)) (RowInfo, error) {
	var info RowInfo
	lr := lines.NewReader(r, maxRowLine)
	cols := 0
	for {
		b, err := lr.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			info.Truncated = true
			break
		}
		if err != nil {
			return info, fmt.Errorf("%s: %w", name, err)
		}
		if lr.Long > 0 {
			return info, fmt.Errorf("%s:%d: a line longer than %d bytes", name, lr.FirstLong, maxRowLine)
		}
		if cols == 0 {
			switch string(b) {
			case RequestsHeader:
				cols = requestColumns
			case requestsHeaderV3:
				cols = 11
			case requestsHeaderV2:
				cols = 10
			case requestsHeaderV1:
				cols = 9
			default:
				return info, fmt.Errorf("%s: unexpected header %q", name, clip(string(b)))
			}
			continue
		}
		if info.Rows >= limits.runRows {
			return info, fmt.Errorf("%s: refused: more than %s rows", name, units.Thousands(limits.runRows))
		}
		q, err := parseRequest(string(b), cols)
		if err != nil {
			return info, fmt.Errorf("%s:%d: %w", name, lr.Line, err)
		}
		info.Rows++
		fn(&q)
	}
	if lr.Long > 0 {
		return info, fmt.Errorf("%s:%d: a line longer than %d bytes", name, lr.FirstLong, maxRowLine)
	}
	if cols == 0 && !info.Truncated {
		return info, fmt.Errorf("%s: empty (no header)", name)
	}
	return info, nil
}

// AppendResource appends one CSV line for s.
func AppendResource(buf []byte, s *sample.Resource) []byte {
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

// parseSamples reads a CSV of samples (resources.csv, host.csv) whose
// first line is header, each line parsed by parse, at most
// MaxResourceRows. A last line cut by a crash is dropped and reported by
// torn; any other malformed line is an error.
func parseSamples[T any](name string, r io.Reader, header string, parse func(string) (T, error)) (out []T, torn bool, err error) {
	torn, err = eachSample(name, r, header, parse, func(s *T) { out = append(out, *s) })
	return out, torn, err
}

// eachSample is parseSamples streaming: each sample is handed to fn and
// not kept, so a file of MaxResourceRows samples costs one line.
func eachSample[T any](name string, r io.Reader, header string, parse func(string) (T, error), fn func(*T)) (torn bool, err error) {
	lr := lines.NewReader(r, maxRowLine)
	rows := 0
	for {
		b, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
		if lr.Long > 0 {
			return false, fmt.Errorf("%s:%d: a line longer than %d bytes", name, lr.FirstLong, maxRowLine)
		}
		if lr.Line == 1 {
			if string(b) != header {
				return false, fmt.Errorf("%s: unexpected header %q", name, clip(string(b)))
			}
			continue
		}
		s, perr := parse(string(b))
		if perr != nil && lr.Partial {
			return true, nil
		}
		if perr != nil {
			return false, fmt.Errorf("%s:%d: %w", name, lr.Line, perr)
		}
		if rows >= MaxResourceRows {
			return false, fmt.Errorf("%s: refused: more than %s samples", name, units.Thousands(MaxResourceRows))
		}
		rows++
		fn(&s)
	}
	return false, nil
}

// readSamples reads one sample file of the folder (name relative to it);
// a missing file is no samples, a torn last line is said in note.
func readSamples[T any](f *Folder, name, header string, parse func(string) (T, error)) (samples []T, note string, err error) {
	note, err = eachSampleOf(f, name, header, parse, func(s *T) { samples = append(samples, *s) })
	return samples, note, err
}

// eachSampleOf is readSamples streaming (see eachSample).
func eachSampleOf[T any](f *Folder, name, header string, parse func(string) (T, error), fn func(*T)) (note string, err error) {
	fh, err := f.d.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer fh.Close()
	torn, err := eachSample(f.d.Join(name), fh, header, parse, fn)
	if torn {
		note = path.Base(name) + " ends with a torn line (tokex stopped while writing it); it was skipped"
	}
	return note, err
}

func parseResource(line string) (sample.Resource, error) {
	var s sample.Resource
	p := strings.Split(line, ",")
	if len(p) != 7 {
		return s, fmt.Errorf("want 7 columns, got %d", len(p))
	}
	var e1, e2, e3, e4 error
	s.AtUS, e1 = strconv.ParseInt(p[0], 10, 64)
	s.Kind, s.Name, s.Source = p[1], p[2], p[6]
	s.CPUMillicores, e2 = strconv.ParseFloat(p[3], 64)
	s.MemoryBytes, e3 = strconv.ParseInt(p[4], 10, 64)
	s.CPUSecondsTotal, e4 = strconv.ParseFloat(p[5], 64)
	if err := errors.Join(e1, e2, e3, e4); err != nil {
		return s, err
	}
	if !finite(s.CPUMillicores) || !finite(s.CPUSecondsTotal) {
		return s, errors.New("a value is not a finite number")
	}
	return s, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
