package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

func TestReachability(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int64, outcome exchange.Outcome) *stats.Request {
		return &stats.Request{Phase: stats.Measured, ScheduledUS: t0.Add(time.Duration(ms) * time.Millisecond).UnixMicro(), SendLagUS: 100, DurationUS: 500, Outcome: outcome}
	}
	later := func(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var r reachability
	if err := r.check(later(60_000), time.Second); err != nil {
		t.Fatalf("nothing recorded: %v", err)
	}
	r.record(at(0, "conn_error"))
	r.record(at(100, "dropped")) // dropped and aborted arrivals say nothing
	r.record(at(200, "aborted"))
	if err := r.check(later(900), time.Second); err != nil {
		t.Errorf("before the limit: %v", err)
	}
	r.record(at(500, "oauth_error")) // any HTTP response: reachable again
	if err := r.check(later(5000), time.Second); err != nil {
		t.Errorf("after a response: %v", err)
	}
	// A blackholed target: the timeout is recorded when it expires, but
	// the clock starts when the request left.
	r.record(at(6000, "timeout"))
	r.record(at(6100, "conn_error"))
	err := r.check(later(7001), time.Second)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "2 failed, the last with conn_error") || !strings.Contains(err.Error(), "since 00:16:46.000") {
		t.Errorf("err = %v", err)
	}
}
