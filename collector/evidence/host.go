package evidence

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
)

// HostFile holds the samples of the machine running the generator: one per
// run folder, and one at the top for the time between runs.
const HostFile = "host.csv"

// HostHeader documents host.csv (see docs/evidence.md). Empty cells
// are unknown: no /proc/pressure, no schedstat.
const HostHeader = "at_unix_us,cpus,busy_cores,steal_cores,runnable,load1,mem_total_bytes,mem_available_bytes," +
	"psi_cpu_some,psi_memory_some,psi_memory_full,generator_cpu_limit_cores,generator_cpus,generator_cpus_busy_cores," +
	"generator_cpu_wait_cores,generator_wait_per_slice_ms"

const hostColumns = 16

// AppendHost appends one CSV line for s.
func AppendHost(buf []byte, s *sample.Host) []byte {
	f := func(v float64) { buf = strconv.AppendFloat(buf, v, 'f', -1, 64) }
	i := func(v int64) { buf = strconv.AppendInt(buf, v, 10) }
	c := func() { buf = append(buf, ',') }
	i(s.AtUS)
	c()
	i(int64(s.CPUs))
	c()
	f(s.BusyCores)
	c()
	f(s.StealCores)
	c()
	i(int64(s.Runnable))
	c()
	f(s.Load1)
	c()
	i(s.MemTotalBytes)
	c()
	i(s.MemAvailableBytes)
	if p := s.PSI; p != nil {
		c()
		f(p.CPUSome)
		c()
		f(p.MemorySome)
		c()
		f(p.MemoryFull)
	} else {
		buf = append(buf, ",,,"...)
	}
	c()
	f(s.GeneratorLimitCores)
	c()
	i(int64(s.GeneratorCPUs))
	c()
	f(s.GeneratorCPUsBusyCores)
	for _, v := range []*float64{s.GeneratorWaitCores, s.GeneratorWaitPerSliceMs} {
		c()
		if v != nil {
			f(*v)
		}
	}
	return append(buf, '\n')
}

// ParseHost parses one line of host.csv.
func ParseHost(line string) (sample.Host, error) {
	var s sample.Host
	p := strings.Split(line, ",")
	if len(p) != hostColumns {
		return s, fmt.Errorf("want %d columns, got %d", hostColumns, len(p))
	}
	var errs []error
	num := func(i int) float64 {
		v, err := strconv.ParseFloat(p[i], 64)
		if err == nil && !(v >= 0 && v <= 1e15) { // NaN and ±Inf too
			err = fmt.Errorf("column %d: %q out of range", i+1, p[i])
		}
		errs = append(errs, err)
		return v
	}
	integer := func(i int) int64 {
		v, err := strconv.ParseInt(p[i], 10, 64)
		if err == nil && v < 0 {
			err = fmt.Errorf("column %d: negative", i+1)
		}
		errs = append(errs, err)
		return v
	}
	s.AtUS = integer(0)
	s.CPUs = int(min(integer(1), 1<<20))
	s.BusyCores, s.StealCores = num(2), num(3)
	s.Runnable = int(min(integer(4), 1<<30))
	s.Load1 = num(5)
	s.MemTotalBytes, s.MemAvailableBytes = integer(6), integer(7)
	switch {
	case p[8] == "" && p[9] == "" && p[10] == "":
	default:
		s.PSI = &sample.Pressure{CPUSome: num(8), MemorySome: num(9), MemoryFull: num(10)}
	}
	s.GeneratorLimitCores = num(11)
	s.GeneratorCPUs = int(min(integer(12), 1<<20))
	s.GeneratorCPUsBusyCores = num(13)
	optional := func(i int) *float64 {
		if p[i] == "" {
			return nil
		}
		v := num(i)
		return &v
	}
	s.GeneratorWaitCores, s.GeneratorWaitPerSliceMs = optional(14), optional(15)
	return s, errors.Join(errs...)
}

// Host reads a run's host.csv (the campaign's, between runs, for id "");
// a missing file (evidence from before it, the kube driver, imports) is no
// samples. A last line cut by a crash is dropped, and said in note.
func (f *Folder) Host(id string) ([]sample.Host, string, error) {
	name, err := hostFile(id)
	if err != nil {
		return nil, "", err
	}
	return readSamples(f, name, HostHeader, ParseHost)
}

// EachHost streams a run's host.csv (the campaign's for id "") to fn, one
// sample at a time, as EachResource does.
func (f *Folder) EachHost(id string, fn func(*sample.Host)) (note string, err error) {
	name, err := hostFile(id)
	if err != nil {
		return "", err
	}
	return eachSampleOf(f, name, HostHeader, ParseHost, fn)
}

// hostFile is the host.csv of run id, or the campaign's for "".
func hostFile(id string) (string, error) {
	if id == "" {
		return HostFile, nil
	}
	return runFile(id, HostFile), CheckID(id)
}

// consumeHost writes a host sample to the open run's host.csv, or to the
// top-level one between runs; each file is created at its first sample.
func (w *Writer) consumeHost(h event.Host) {
	dst, name := &w.topHost, HostFile
	if w.cur != nil && !w.cur.closed {
		dst, name = &w.cur.host, runFile(w.cur.id, HostFile)
	}
	if *dst == nil {
		lf, err := w.openLines(name, HostHeader)
		if err != nil {
			w.fail(err)
			return
		}
		*dst = lf
	}
	w.linebuf = AppendHost(w.linebuf[:0], &sample.Host{AtUS: h.At.UnixMicro(), HostMetrics: h.HostMetrics})
	_, err := (*dst).w.Write(w.linebuf)
	w.fail(err)
}

// closeHost flushes and closes a host.csv opened by consumeHost.
func (w *Writer) closeHost(lf **lineFile) {
	if *lf == nil {
		return
	}
	w.fail((*lf).close())
	*lf = nil
}
