package kube

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// ingestLag is how far the coordinator is behind the agents: for every
// line, the time from the container runtime's timestamp on it to the
// moment tokex parsed it. It includes the kubelet → API server → tokex path
// and any clock skew between the node and this machine. Counted in
// logarithmic buckets (8 a doubling: within 9 %), lock-free, so 100+
// followers can note into one histogram.
type ingestLag struct {
	buckets [lagBuckets]atomic.Int64
	max     atomic.Int64 // µs
	behind  atomic.Bool  // warned once that the live view is behind
}

const lagBuckets = 8 * 40 // up to 2^40 µs

func lagBucket(us int64) int {
	if us < 1 {
		return 0
	}
	return min(int(math.Log2(float64(us))*8)+1, lagBuckets-1)
}

// bucketUpper is the largest lag, in µs, bucket i holds.
func bucketUpper(i int) float64 {
	if i == 0 {
		return 0
	}
	return math.Exp2(float64(i) / 8)
}

// note records one line's lag and reports whether it is the first above
// behindAfter (the live view is late: say so once).
func (l *ingestLag) note(d time.Duration) bool {
	us := max(d.Microseconds(), 0)
	l.buckets[lagBucket(us)].Add(1)
	for {
		m := l.max.Load()
		if us <= m || l.max.CompareAndSwap(m, us) {
			break
		}
	}
	return d > behindAfter && l.behind.CompareAndSwap(false, true)
}

// behindAfter is the lag past which the live view is called late.
const behindAfter = 5 * time.Second

// quantile is the upper bound of the bucket holding quantile q, in ms.
func (l *ingestLag) quantile(q float64) (ms float64, n int64) {
	var counts [lagBuckets]int64
	for i := range counts {
		counts[i] = l.buckets[i].Load()
		n += counts[i]
	}
	if n == 0 {
		return 0, 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	var seen int64
	for i, c := range counts {
		if seen += c; seen >= max(rank, 1) {
			return min(bucketUpper(i), float64(l.max.Load())) / 1000, n
		}
	}
	return float64(l.max.Load()) / 1000, n
}

// String summarises the lag for the run's log.
func (l *ingestLag) String() string {
	p50, n := l.quantile(0.50)
	if n == 0 {
		return "coordinator: no line read"
	}
	p99, _ := l.quantile(0.99)
	return fmt.Sprintf("coordinator: %d lines read; lag from each line's log timestamp to its parse p50 %.1f ms, p99 %.1f ms, max %.1f ms "+
		"(the kubelet → API server → tokex path plus clock skew between node and this machine)", n, p50, p99, float64(l.max.Load())/1000)
}
