package proc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/tokex-dev/tokex/collector/sample"
)

// The series a scrape keeps; everything else on the page is skipped as it
// streams past, so a page of any size costs one line of memory.
const (
	seriesCPU    = "process_cpu_seconds_total"
	seriesCPUOld = "process_cpu_seconds" // an untyped or gauge family without _total
	seriesMemory = "process_resident_memory_bytes"
)

// Bounds of what a scrape keeps.
const (
	// maxLine is the longest line of the text formats read: the two
	// series' lines are short, a longer line of another series is skipped.
	maxLine = 4 << 10
	// maxFamily is the largest protobuf family read whole; a larger one of
	// another name is skipped.
	maxFamily = 64 << 10
	// maxMemoryBytes is the most resident memory a reading may sum to (a
	// PiB: no real RSS is larger).
	maxMemoryBytes = 1 << 50
)

// exposition sums the two series of one page.
type exposition struct {
	cpu, mem               float64
	hasCPU, hasMem, memBad bool
}

// add files one sample of a kept series. A CPU value that is no counter
// refuses the page; a memory value that is no size leaves memory unknown.
func (e *exposition) add(name string, v float64) error {
	bad := math.IsNaN(v) || math.IsInf(v, 0) || v < 0
	if name == seriesMemory {
		e.memBad = e.memBad || bad
		e.mem += v
		e.hasMem = true
		return nil
	}
	if bad {
		return fmt.Errorf("%s %v is not a CPU counter", name, v)
	}
	e.cpu += v
	e.hasCPU = true
	return nil
}

// reading checks the sums: a CPU counter must be there and be a CPU
// counter, memory when there must be a memory size.
func (e *exposition) reading() (Reading, error) {
	if !e.hasCPU {
		return Reading{}, errors.New("no process_cpu_seconds_total: the server does not export process metrics there")
	}
	if e.cpu > sample.MaxCPUCounterSeconds {
		return Reading{}, fmt.Errorf("process_cpu_seconds_total %v is not a CPU counter (more than %g s: an overflow)", e.cpu, sample.MaxCPUCounterSeconds)
	}
	r := Reading{CPUSeconds: e.cpu}
	if e.hasMem && !e.memBad && e.mem <= maxMemoryBytes {
		r.MemoryBytes = int64(e.mem)
	}
	return r, nil
}

// kept reports whether a series name is one a scrape keeps.
func kept(name []byte) bool {
	switch string(name) {
	case seriesCPU, seriesCPUOld, seriesMemory:
		return true
	}
	return false
}

// parseProcessMetrics reads process_cpu_seconds_total and
// process_resident_memory_bytes from an exposition (text, OpenMetrics or
// delimited protobuf; an unknown content type is read as text) as it
// streams, keeping only their sums. Series of several processes behind
// one endpoint are summed.
func parseProcessMetrics(r io.Reader, format expfmt.Format) (Reading, error) {
	var e exposition
	var err error
	if format.FormatType() == expfmt.TypeProtoDelim {
		err = e.readProto(r)
	} else {
		err = e.readText(r)
	}
	if err != nil {
		return Reading{}, err
	}
	return e.reading()
}

// readText reads the text format and OpenMetrics line by line.
func (e *exposition) readText(r io.Reader) error {
	br := bufio.NewReaderSize(r, maxLine)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if name, _, _ := seriesName(line); kept(name) {
				return fmt.Errorf("line %d: a %s line longer than %d bytes", n, name, maxLine)
			}
			for errors.Is(err, bufio.ErrBufferFull) { // skip the rest of it
				_, err = br.ReadSlice('\n')
			}
		} else if perr := e.line(line); perr != nil {
			var syn syntaxError
			if errors.As(perr, &syn) {
				return fmt.Errorf("not a Prometheus exposition: line %d: %w", n, perr)
			}
			return fmt.Errorf("line %d: %w", n, perr)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// line reads one line: a comment, a sample of a kept series, or another
// sample (its name checked, the rest skipped).
func (e *exposition) line(b []byte) error {
	b = bytes.TrimLeft(bytes.TrimRight(b, " \t\r\n"), " \t")
	if len(b) == 0 || b[0] == '#' {
		return nil
	}
	name, rest, ok := seriesName(b)
	if !ok {
		return syntaxError("not a sample")
	}
	if !kept(name) {
		return nil
	}
	if len(rest) > 0 && rest[0] == '{' {
		if rest, ok = skipLabels(rest); !ok {
			return syntaxError(string(name) + ": unterminated labels")
		}
	}
	rest = bytes.TrimLeft(rest, " \t")
	end := bytes.IndexAny(rest, " \t")
	if end < 0 {
		end = len(rest)
	}
	v, err := strconv.ParseFloat(string(rest[:end]), 64)
	if err != nil {
		return syntaxError(fmt.Sprintf("%s: value %q is not a number", name, truncate(rest[:end])))
	}
	return e.add(string(name), v)
}

// syntaxError is a line that is not the text format.
type syntaxError string

func (s syntaxError) Error() string { return string(s) }

// seriesName splits a sample line into its series name and the rest: a
// plain name, or a quoted one first inside the braces (the UTF-8 form).
func seriesName(b []byte) (name, rest []byte, ok bool) {
	if len(b) > 0 && b[0] == '{' {
		if len(b) < 2 || b[1] != '"' {
			return nil, nil, false
		}
		end := bytes.IndexAny(b[2:], "\"\\")
		if end < 0 || b[2+end] != '"' {
			return b[2:2], b, true // an escaped name: never a kept one
		}
		return b[2 : 2+end], b, true
	}
	i := 0
	for i < len(b) && (b[i] == '_' || b[i] == ':' || b[i] >= 'a' && b[i] <= 'z' || b[i] >= 'A' && b[i] <= 'Z' || i > 0 && b[i] >= '0' && b[i] <= '9') {
		i++
	}
	if i == 0 || i < len(b) && b[i] != '{' && b[i] != ' ' && b[i] != '\t' {
		return nil, nil, false
	}
	return b[:i], b[i:], true
}

// skipLabels skips a label set "{…}", quoted values and their escapes
// included.
func skipLabels(b []byte) ([]byte, bool) {
	quoted := false
	for i := 1; i < len(b); i++ {
		switch {
		case quoted && b[i] == '\\':
			i++
		case b[i] == '"':
			quoted = !quoted
		case !quoted && b[i] == '}':
			return b[i+1:], true
		}
	}
	return nil, false
}

func truncate(b []byte) string {
	if len(b) > 32 {
		return string(b[:32]) + "…"
	}
	return string(b)
}

// readProto reads delimited protobuf families one at a time: a family of
// another name is skipped without being kept, one of the kept series is
// read whole when it is at most maxFamily bytes and refused when larger.
func (e *exposition) readProto(r io.Reader) error {
	br := bufio.NewReader(r)
	var buf []byte
	for {
		size, err := binary.ReadUvarint(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("not a Prometheus exposition: %w", err)
		}
		if size > maxFamily {
			if name := peekFamilyName(br); kept([]byte(name)) {
				return fmt.Errorf("a %s family larger than %d KiB", name, maxFamily>>10)
			}
			if _, err := io.CopyN(io.Discard, br, int64(size)); err != nil {
				return fmt.Errorf("not a Prometheus exposition: %w", err)
			}
			continue
		}
		buf = binary.AppendUvarint(buf[:0], size)
		n := len(buf)
		buf = append(buf, make([]byte, size)...)
		if _, err := io.ReadFull(br, buf[n:]); err != nil {
			return fmt.Errorf("not a Prometheus exposition: %w", err)
		}
		var f dto.MetricFamily
		if err := expfmt.NewDecoder(bytes.NewReader(buf), expfmt.NewFormat(expfmt.TypeProtoDelim)).Decode(&f); err != nil {
			return fmt.Errorf("not a Prometheus exposition: %w", err)
		}
		if err := e.family(&f); err != nil {
			return err
		}
	}
}

// peekFamilyName is the name of the family that starts the buffered
// bytes when it is their first field (it always is as client libraries
// write it), else "".
func peekFamilyName(br *bufio.Reader) string {
	b, _ := br.Peek(64)
	if len(b) < 2 || b[0] != 1<<3|2 { // field 1, length-delimited
		return ""
	}
	if n := int(b[1]); n < 0x80 && 2+n <= len(b) {
		return string(b[2 : 2+n])
	}
	return ""
}

// family adds a decoded family's samples when it is a kept series (the
// OpenMetrics family of process_cpu_seconds_total is named without _total).
func (e *exposition) family(f *dto.MetricFamily) error {
	name := f.GetName()
	if !kept([]byte(name)) {
		return nil
	}
	if name == seriesCPUOld {
		name = seriesCPU
	}
	for _, m := range f.GetMetric() {
		if err := e.add(name, metricValue(m)); err != nil {
			return err
		}
	}
	return nil
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}
