package runner

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/collector/stats"
)

// ErrUnreachable stops the run and the campaign: the target stopped
// answering. The evidence is kept and --resume continues once it is back.
var ErrUnreachable = errors.New("target unreachable")

// reachability watches a run's requests as they complete. The target is
// unreachable once every request sent for a while failed at the connection
// (refused, reset, timed out) and none got an HTTP response meanwhile: the
// clock starts at the send time of the first such failure after the last
// response, so a blackholed target that times out counts from when the
// request left.
type reachability struct {
	mu       sync.Mutex
	since    int64 // unix µs; 0: the last request that completed was answered
	failures int64
	last     string // the latest failure: "conn_error: dial tcp …: connection refused"
}

func (r *reachability) record(q *stats.Request) {
	if q.Dropped() || q.Aborted() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if q.Responded() {
		r.since, r.failures = 0, 0
		return
	}
	sent := q.ScheduledUS + q.SendLagUS
	if r.since == 0 || sent < r.since {
		r.since = sent
	}
	r.failures++
	r.last = string(q.Outcome)
	if q.Description != "" {
		r.last += ": " + q.Description
	}
}

// check returns ErrUnreachable, with what happened, once the target has
// been unreachable for limit at now.
func (r *reachability) check(now time.Time, limit time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since == 0 {
		return nil
	}
	since := time.UnixMicro(r.since)
	if now.Sub(since) >= limit {
		return fmt.Errorf("%w: no HTTP response for %s (target.unreachable_after): every request since %s failed at the connection (%d failed, the last with %s)",
			ErrUnreachable, limit, since.UTC().Format("15:04:05.000"), r.failures, r.last)
	}
	return nil
}
