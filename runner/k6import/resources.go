package k6import

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/stats"
)

// ReadMonitorCSV reads the article's monitor CSV: timestamp,kind,name,cpu,memory
// with kubectl-top style quantities (cpu "250m" or cores, memory "512Mi" or
// bytes) and an RFC 3339 or unix-seconds timestamp. kind pod/engine becomes
// the engine role, node stays node.
func ReadMonitorCSV(r io.Reader) ([]stats.ResourceSample, int, error) {
	sc := bufio.NewScanner(r)
	var out []stats.ResourceSample
	bad, line := 0, 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
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
		if err1 != nil || err2 != nil || err3 != nil {
			bad++
			continue
		}
		kind := strings.ToLower(strings.TrimSpace(f[1]))
		switch kind {
		case "pod", "engine":
			kind = "engine"
		}
		out = append(out, stats.ResourceSample{AtUS: at.UnixMicro(), Kind: kind, Name: strings.TrimSpace(f[2]),
			CPUMillicores: cpu, MemoryBytes: mem, Source: "monitor-csv"})
	}
	if err := sc.Err(); err != nil {
		return out, bad, err
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
	if err != nil {
		return time.Time{}, fmt.Errorf("bad timestamp %q", s)
	}
	return time.Unix(0, int64(v*1e9)).UTC(), nil
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
	return v * mult, err
}

// parseBytes reads Ki/Mi/Gi/Ti, K/M/G/T or plain bytes.
func parseBytes(s string) (int64, error) {
	units := []struct {
		suf string
		m   float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suf) {
			v, err := strconv.ParseFloat(strings.TrimSuffix(s, u.suf), 64)
			return int64(v * u.m), err
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	return int64(v), err
}
