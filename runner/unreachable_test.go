package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// step is one thing the reachability watch hears, in the order it hears
// it: a request completed (sent at sentMs, taking durMs), a connection made
// at connMs, or a check at checkMs that must (or must not) find the target
// unreachable.
type step struct {
	sentMs, durMs int64
	outcome       exchange.Outcome
	connMs        int64 // > 0: a connection made then
	checkMs       int64 // > 0: a check then
	want          string
}

func sent(ms, dur int64, o exchange.Outcome) step { return step{sentMs: ms, durMs: dur, outcome: o} }
func conn(ms int64) step                          { return step{connMs: ms} }
func check(ms int64, want string) step            { return step{checkMs: ms, want: want} }

// TestReachability: the target is unreachable once requests failed and no
// response or connection came for the limit, counted from the last of
// them, or from the first failure's send time when it left later. Requests
// complete out of order: one held past the timeout (issue 23 item 1,
// "every 37th held 60 s") or a server that answers slower than the timeout
// but accepts connections is alive.
func TestReachability(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const limit = 10 * time.Second
	for _, tc := range []struct {
		name  string
		steps []step
		late  time.Duration // the driver's (runner.Late)
	}{
		{"nothing recorded", []step{check(60_000, "")}, 0},
		{"dropped and aborted say nothing", []step{
			sent(0, 1, "conn_error"), sent(100, 0, "dropped"), sent(200, 1, "aborted"),
			check(9_900, ""), check(10_000, "since 00:16:40.000 failed (1 failed, the last with conn_error)"),
		}, 0},
		{"a response after the failures", []step{
			sent(0, 1, "conn_error"), sent(500, 3, "oauth_error"), check(30_000, ""),
		}, 0},
		{"a blackholed target counts from when the request left", []step{
			sent(0, 2, "ok"), sent(6_000, 10_000, "timeout"), sent(6_100, 1, "conn_error"),
			check(16_000, "since 00:16:46.000 failed (2 failed, the last with conn_error)"),
		}, 0},
		{"one request held past the timeout among answered ones", []step{
			sent(0, 1, "ok"), sent(100, 1, "ok"), sent(9_000, 1, "ok"), sent(9_990, 5, "ok"),
			sent(0, 10_000, "timeout"), // sent first, recorded last
			check(10_000, ""), check(10_500, ""), check(19_000, ""),
		}, 0},
		{"held requests, then the server dies", []step{
			sent(0, 1, "ok"), sent(9_990, 5, "ok"), sent(0, 10_000, "timeout"),
			sent(12_000, 1, "conn_error"), check(21_999, ""),
			check(22_000, "since 00:16:52.000 failed (1 failed, the last with conn_error)"),
		}, 0},
		{"overloaded: every request times out, connections are accepted", []step{
			conn(1), conn(2_000), conn(9_000), sent(0, 10_000, "timeout"),
			conn(11_000), sent(2_000, 10_000, "timeout"), conn(15_000), sent(9_000, 10_000, "timeout"),
			check(20_000, ""), check(24_999, ""),
			// …until one sent after the last connection fails: then the clock runs.
			sent(15_500, 10_000, "timeout"), check(25_499, ""), check(25_500, "since 00:16:55.500 failed (1 failed, the last with timeout)"),
		}, 0},
		{"a connection older than the failure does not count", []step{
			conn(1_000), sent(2_000, 1, "conn_error"), check(12_000, "since 00:16:42.000"),
		}, 0},
		// k6 agents: a request timeout's line, and with it the connection
		// it was sent on, arrive when the timeout has passed.
		{"k6 lines, overloaded: known a timeout late, alive", []step{
			conn(0), sent(0, 10_000, "timeout"), check(10_000, ""),
			conn(100), sent(100, 10_000, "timeout"), check(10_100, ""),
			conn(15_000), sent(15_000, 10_000, "timeout"), check(25_000, ""), check(36_999, ""),
		}, 12 * time.Second},
		{"k6 lines, overloaded, without waiting for late lines: stopped", []step{
			conn(0), sent(0, 10_000, "timeout"), check(10_000, "since 00:16:40.000"),
		}, 0},
		{"k6 lines, blackholed: the limit and the lateness", []step{
			sent(0, 10_000, "conn_error"), check(21_999, ""),
			check(22_000, "for 10s (target.unreachable_after, waited 12s more for the agents' lines, printed as requests complete) and no connection made: every request sent since 00:16:40.000 failed"),
		}, 12 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := reachability{late: tc.late}
			at := func(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
			for i, s := range tc.steps {
				switch {
				case s.checkMs > 0:
					err := r.check(at(s.checkMs), limit)
					if s.want == "" && err != nil {
						t.Errorf("step %d: unreachable at %d ms: %v", i, s.checkMs, err)
					}
					if s.want != "" && (!errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), s.want)) {
						t.Errorf("step %d: at %d ms: %v, want …%s…", i, s.checkMs, err, s.want)
					}
				case s.connMs > 0:
					r.connected(at(s.connMs))
				default:
					r.record(&stats.Request{Phase: stats.Measured, ScheduledUS: at(s.sentMs).UnixMicro() - 100, SendLagUS: 100,
						DurationUS: s.durMs * 1000, Outcome: s.outcome})
				}
			}
		})
	}
}

// The reason names no connection failure for what may be a read timeout.
func TestUnreachableReasonWording(t *testing.T) {
	var r reachability
	r.record(&stats.Request{ScheduledUS: 1, DurationUS: 1, Outcome: "timeout", Description: "read: i/o timeout"})
	err := r.check(time.UnixMicro(1).Add(time.Minute), time.Second)
	if err == nil || strings.Contains(err.Error(), "at the connection") ||
		!strings.HasPrefix(err.Error(), "target unreachable: no HTTP response for 1s (target.unreachable_after) and no connection made") {
		t.Errorf("err = %v", err)
	}
}
