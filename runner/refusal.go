package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// refuseAfter is how many answers, all the same refusal, stop a sanity run.
const refuseAfter = 20

// transientErrors are OAuth errors that may pass: they never stop a
// sanity run early.
var transientErrors = []string{exchange.ErrServerError, exchange.ErrTemporarilyUnavail, "use_dpop_nonce", exchange.DetailOther}

// refusals watches a sanity run's answers: when its first refuseAfter are
// all the same OAuth error that sending more cannot change (invalid_client,
// invalid_grant, unauthorized_client, …) it stops the run with what the
// server said, instead of refusing exchanges for the sanity run's whole
// duration (30 s by default). One success or another answer ends the
// watch: the run then goes on and is judged as usual.
type refusals struct {
	stop context.CancelCauseFunc
	bus  *event.Bus
	hint func() string // what to check when the clients' credentials are refused

	mu      sync.Mutex
	n       int
	key     string // the refusal: "oauth_error:invalid_client"
	desc    string // what the server said about it first
	done    bool   // watching ended: another answer, or stopped
	stopped bool
}

func (r *refusals) record(q *stats.Request) {
	if q.Dropped() || q.Aborted() || !q.Responded() {
		return // a connection error is the reachability watch's
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	if q.Outcome != exchange.OutcomeOAuthError || slices.Contains(transientErrors, q.Detail) || (r.key != "" && q.ErrorKey() != r.key) {
		r.done = true
		return
	}
	r.key = q.ErrorKey()
	if r.desc == "" {
		r.desc = exchange.SanitizeDescription(q.Description)
	}
	if r.n++; r.n >= refuseAfter {
		r.done, r.stopped = true, true
		err := r.err()
		r.bus.Emit(event.Log{At: time.Now(), Source: "tokex", Level: "error", Message: err.Error()})
		r.stop(err)
	}
}

// err says why the sanity run stopped, with what the server said.
func (r *refusals) err() error {
	what := r.key
	if r.desc != "" {
		what += fmt.Sprintf(" (%q)", r.desc)
	}
	var hint string
	if r.key == string(exchange.OutcomeOAuthError)+":"+exchange.ErrInvalidClient && r.hint != nil {
		hint = "; " + r.hint()
	}
	return fmt.Errorf("%w: stopped after the first %d responses, every one %s%s", ErrSanity, r.n, what, hint)
}
