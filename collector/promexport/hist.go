package promexport

import (
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokex-dev/tokex/collector/event"
)

// histograms is a classic-bucket histogram per label set, fed whole
// windows' bucket counts (event.Window.LatencyBuckets): client_golang's
// Histogram takes one observation at a time, the stream carries counts.
type histograms struct {
	desc   *prometheus.Desc
	bounds []float64 // seconds
	mu     sync.Mutex
	sets   map[string]*histogram
}

type histogram struct {
	labels []string
	counts []uint64 // per bucket, not cumulative; the last above every bound
	sum    float64
}

func newHistograms(name, help string) *histograms {
	h := &histograms{desc: prometheus.NewDesc(name, help, base, nil), sets: map[string]*histogram{}}
	for _, b := range event.LatencyBoundsMs {
		h.bounds = append(h.bounds, b/1000)
	}
	return h
}

// add counts a window's responses; a window without buckets (evidence
// written before them) or with a malformed set adds nothing.
func (h *histograms) add(labels []string, w event.Window) {
	if len(w.LatencyBuckets) != len(h.bounds)+1 {
		return
	}
	for _, n := range w.LatencyBuckets {
		if n < 0 {
			return
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	key := strings.Join(labels, "\x00")
	s := h.sets[key]
	if s == nil {
		s = &histogram{labels: append([]string{}, labels...), counts: make([]uint64, len(h.bounds)+1)}
		h.sets[key] = s
	}
	var n int64
	for i, c := range w.LatencyBuckets {
		s.counts[i] += uint64(c)
		n += c
	}
	// The sum from the window's exact average (ms, 3 decimals).
	s.sum += finite(w.Latency.Avg) / 1000 * float64(n)
}

func (h *histograms) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }

func (h *histograms) Collect(ch chan<- prometheus.Metric) {
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]string, 0, len(h.sets))
	for k := range h.sets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := h.sets[k]
		buckets := map[float64]uint64{}
		var cum uint64
		for i, b := range h.bounds {
			cum += s.counts[i]
			buckets[b] = cum
		}
		total := cum + s.counts[len(h.bounds)]
		ch <- prometheus.MustNewConstHistogram(h.desc, total, s.sum, buckets, s.labels...)
	}
}
