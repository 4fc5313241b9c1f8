package k6import

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/internal/lines"
)

// ReadMonitorCSV reads the article's monitor CSV: timestamp,kind,name,cpu,memory
// with kubectl-top style quantities (cpu "250m" or cores, memory "512Mi" or
// bytes) and an RFC 3339 or unix-seconds timestamp. kind pod/engine becomes
// the engine role, node stays node.
//
// Malformed lines (too long, unreadable, a value that is not a finite
// non-negative number, a time outside years 1–9999) are counted and
// skipped; at most evidence.MaxResourceRows samples are read.
func ReadMonitorCSV(r io.Reader) ([]sample.Resource, int, error) {
	lr := lines.NewReader(r, 64<<10)
	var out []sample.Resource
	bad, line, long := 0, 0, 0
	for {
		b, err := lr.Next()
		bad += lr.Long - long
		long = lr.Long
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return out, bad, err
		}
		line = lr.Line
		t := strings.TrimSpace(string(b))
		if t == "" || (line == 1 && strings.HasPrefix(strings.ToLower(t), "timestamp")) {
			continue
		}
		f := strings.Split(t, ",")
		if len(f) < 5 {
			bad++
			continue
		}
		at, err1 := parseTime(strings.TrimSpace(f[0]))
		cpu, err2 := parseCPU(strings.TrimSpace(f[3]))
		mem, err3 := parseBytes(strings.TrimSpace(f[4]))
		if err1 != nil || err2 != nil || err3 != nil || at.Year() < 1 || at.Year() > 9999 {
			bad++
			continue
		}
		if len(out) >= evidence.MaxResourceRows {
			return nil, bad, fmt.Errorf("more than %d samples", evidence.MaxResourceRows)
		}
		kind := strings.ToLower(strings.TrimSpace(f[1]))
		switch kind {
		case "pod", "engine":
			kind = "engine"
		}
		out = append(out, sample.Resource{AtUS: at.UnixMicro(), Kind: kind, Name: strings.TrimSpace(f[2]),
			CPUMillicores: cpu, MemoryBytes: mem, Source: "monitor-csv"})
	}
	if len(out) == 0 && bad > 0 {
		return nil, bad, fmt.Errorf("no readable sample in %d lines", bad)
	}
	return out, bad, nil
}

func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02 15:04:05", s); err == nil {
		return t.UTC(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0 && v < 253402300800) { // before year 10000
		return time.Time{}, fmt.Errorf("bad timestamp %q", s)
	}
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
}

// parseCPU returns millicores from "250m", "1.5" (cores) or "1500000n".
func parseCPU(s string) (float64, error) {
	mult := 1000.0
	switch {
	case strings.HasSuffix(s, "m"):
		s, mult = strings.TrimSuffix(s, "m"), 1
	case strings.HasSuffix(s, "u"):
		s, mult = strings.TrimSuffix(s, "u"), 1e-3
	case strings.HasSuffix(s, "n"):
		s, mult = strings.TrimSuffix(s, "n"), 1e-6
	}
	v, err := strconv.ParseFloat(s, 64)
	if err == nil && !(v >= 0 && v*mult < 1e12) { // NaN, ±Inf, negative, absurd
		err = fmt.Errorf("bad CPU value %q", s)
	}
	return v * mult, err
}

// parseBytes reads Ki/Mi/Gi/Ti, K/M/G/T or plain bytes.
func parseBytes(s string) (int64, error) {
	units := []struct {
		suf string
		m   float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}}
	m := 1.0
	for _, u := range units {
		if strings.HasSuffix(s, u.suf) {
			s, m = strings.TrimSuffix(s, u.suf), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err == nil && !(v >= 0 && v*m < 1<<62) {
		err = fmt.Errorf("bad memory value %q", s)
	}
	return int64(v * m), err
}
