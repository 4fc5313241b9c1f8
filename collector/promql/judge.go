package promql

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// MaxNameBytes bounds a member's name (label values are the server's).
const MaxNameBytes = 128

// name is a member's name: its By labels' values, or its whole label set.
func (t Target) name(m model.Metric) string {
	var parts []string
	for _, l := range t.By {
		if v := m[model.LabelName(l)]; v != "" {
			parts = append(parts, string(v))
		}
	}
	s := strings.Join(parts, " ")
	if s == "" {
		s = withoutName(m).String()
	}
	if len(s) > MaxNameBytes {
		s = s[:MaxNameBytes]
	}
	return s
}

// members are the CPU query's answers, a member each, with its memory and
// the fewest samples of its series.
func members(t Target, cpu model.Vector, mem map[string]float64, ss []*series) []sample.PromMember {
	var out []sample.PromMember
	for _, s := range cpu {
		m := sample.PromMember{Name: t.name(s.Metric), Cores: round3(max(float64(s.Value), 0)), Samples: -1}
		if v := mem[m.Name]; v > 0 && v < math.MaxInt64/2 {
			m.MemoryBytes = int64(v)
		}
		for _, x := range ss {
			if t.name(x.metric) == m.Name && (m.Samples < 0 || x.samples < m.Samples) {
				m.Samples = x.samples
			}
		}
		m.Samples = max(m.Samples, 0)
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b sample.PromMember) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// judge checks each CPU series' samples against the window: enough of them
// (promql_coarse), and reaching its start and end without a gap
// (promql_stale). A series' interval is the window ÷ its samples.
func judge(ss []*series, t Target, w Window, runID string, wait waitResult) []stats.Warning {
	from, to := seconds(w.From), seconds(w.To)
	step := GapStep(w).Seconds()
	var coarse, stale []string
	fewest, coarsest := math.MaxInt, 0.0
	for _, x := range ss {
		n := max(x.samples, 1)
		d := w.Len().Seconds() / float64(n)
		name := t.name(x.metric)
		if x.samples < sample.PromQLMinSamples {
			coarse = append(coarse, name)
			if x.samples < fewest {
				fewest, coarsest = x.samples, d
			}
		}
		switch {
		case x.first == 0 || from-x.first > 2*d:
			stale = append(stale, name+": no sample near the window's start (the series began inside it)")
		case x.last == 0 || to-x.last > 2*d:
			stale = append(stale, fmt.Sprintf("%s: its last sample is %.1f s before the window's end", name, to-x.last))
		case x.gap > 2*d+step:
			stale = append(stale, fmt.Sprintf("%s: %.0f s without a sample inside the window (scrape interval ≈ %.1f s)", name, x.gap, d))
		}
	}
	var out []stats.Warning
	if len(coarse) > 0 {
		out = append(out, stats.Warn(stats.WarnPromQLCoarse, runID, fmt.Sprintf(
			"%d samples of the CPU counter in the %s window (%s; scrape interval ≈ %.1f s): fewer than %d, rate() extrapolates over much of it; scrape more often or run longer",
			fewest, w.Range(), list(coarse), coarsest, sample.PromQLMinSamples)))
	}
	if !wait.came && wait.limit > 0 {
		stale = append(stale, fmt.Sprintf("no sample past the window's end after waiting %s", wait.waited.Round(100*time.Millisecond)))
	}
	if len(stale) > 0 {
		out = append(out, stats.Warn(stats.WarnPromQLStale, runID, "the samples do not cover the window: "+list(stale)))
	}
	return out
}

// coverage says which expected members have no CPU series and which
// members have no memory series.
func coverage(rec *sample.PromQL, t Target, cpu model.Vector, mem map[string]float64, runID string) []stats.Warning {
	have := map[string]bool{}
	for _, s := range cpu {
		have[t.name(s.Metric)] = true
	}
	var missing []string
	for _, e := range t.Expect {
		if !have[e] {
			missing = append(missing, e)
		}
	}
	var out []stats.Warning
	if len(missing) > 0 {
		out = append(out, stats.Warn(stats.WarnPromQLMissingSeries, runID, fmt.Sprintf(
			"no CPU series for %s in %s: the figure leaves %s out", list(missing), rec.Query("cpu"), plural(len(missing), "it", "them"))))
	}
	if t.Memory == nil {
		return out
	}
	var noMem []string
	for _, m := range rec.Members {
		if _, ok := mem[m.Name]; !ok {
			noMem = append(noMem, m.Name)
		}
	}
	if len(noMem) > 0 {
		out = append(out, stats.Warn(stats.WarnPromQLMissingSeries, runID, fmt.Sprintf(
			"no memory series for %s in %s", list(noMem), rec.Query("memory"))))
	}
	return out
}

func seconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// list names at most three items and counts the rest.
func list(items []string) string {
	if len(items) <= 3 {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:3], "; ") + fmt.Sprintf("; and %d more", len(items)-3)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
