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

// reachability watches a run for signs of life of the target: an HTTP
// response of any status (at the time it completed) or a connection made
// to it (the driver says so as it happens, Connector). The target is
// unreachable once requests failed and nothing of either kind happened for
// the limit, counted from the last sign of life or, when the first failure
// was sent after it, from that request's send time: a blackholed target
// whose requests time out counts from when they left.
//
// A failure sent before the latest sign of life says nothing: requests
// complete out of order, and one held past the timeout by a server that
// answered hundreds meanwhile must not move the clock back to its send
// time. Nor does a server that accepts connections but answers slower
// than the timeout count as gone: it is overloaded, and its runs fail
// their thresholds on the timeouts instead.
type reachability struct {
	// late is how late a driver's rows can reach the watch (Late): the
	// limit is counted that much longer, so that a sign of life still on
	// its way is not taken for none.
	late     time.Duration
	mu       sync.Mutex
	alive    int64 // unix µs of the latest response or connection; 0: none yet
	since    int64 // unix µs: the send time of the first failure after alive; 0: none
	failures int64 // sent since then
	last     string
}

func (r *reachability) record(q *stats.Request) {
	if q.Dropped() || q.Aborted() {
		return
	}
	sent := q.ScheduledUS + q.SendLagUS
	r.mu.Lock()
	defer r.mu.Unlock()
	if q.Responded() {
		r.lifeLocked(sent + q.DurationUS)
		return
	}
	if sent < r.alive {
		return
	}
	if r.since == 0 || sent < r.since {
		r.since = sent
	}
	r.failures++
	r.last = string(q.Outcome)
	if q.Description != "" {
		r.last += ": " + q.Description
	}
}

// connected records a connection made to the target at at.
func (r *reachability) connected(at time.Time) {
	r.mu.Lock()
	r.lifeLocked(at.UnixMicro())
	r.mu.Unlock()
}

// lifeLocked records a sign of life at us (unix µs): the failures sent
// before it no longer count.
func (r *reachability) lifeLocked(us int64) {
	r.alive = max(r.alive, us)
	if r.since != 0 && r.since <= r.alive {
		r.since, r.failures, r.last = 0, 0, ""
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
	if now.Sub(since) >= limit+r.late {
		waited := ""
		if r.late > 0 {
			waited = fmt.Sprintf(", waited %s more for the agents' lines, printed as requests complete", r.late)
		}
		return fmt.Errorf("%w: no HTTP response for %s (target.unreachable_after%s) and no connection made: every request sent since %s failed (%d failed, the last with %s)",
			ErrUnreachable, limit, waited, since.UTC().Format("15:04:05.000"), r.failures, r.last)
	}
	return nil
}

// lateness is how late the driver's rows can arrive (0 unless it is Late).
func lateness(d Driver) time.Duration {
	if l, ok := d.(Late); ok {
		return max(l.ReportDelay(), 0)
	}
	return 0
}
