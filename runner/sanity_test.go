package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/config"
)

// A sanity run that timed out on a saturated host says the machine may be
// the cause, not only the server.
func TestSanityVerdictNamesTheMachine(t *testing.T) {
	th := stats.Thresholds{SuccessRatio: 0.99}
	st := &stats.Run{Requests: 100, OK: 80, SuccessRatio: 0.8, Dropped: 3}
	err := sanityVerdict(st, th, nil)
	if !errors.Is(err, ErrSanity) || strings.Contains(err.Error(), "machine") {
		t.Fatalf("healthy machine: %v", err)
	}
	st.Warnings = []stats.Warning{stats.Warn(stats.WarnDropped, "s", "3 dropped"), stats.Warn(stats.WarnHostSaturated, "s", "busy"),
		stats.Warn(stats.WarnGeneratorStarved, "s", "waited")}
	want := "80 of 100 exchanges succeeded; 3 dropped; and this machine, not only the server, may be the cause: host_saturated, generator_starved"
	if err := sanityVerdict(st, th, nil); err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v\nwant …%s", err, want)
	}
}

// Issue 12: a target that refuses the clients' credentials says what to
// check, naming where the secret came from; other errors do not.
func TestSanityVerdictInvalidClientSaysWhatToCheck(t *testing.T) {
	c := &Campaign{Cfg: config.Article(), SecretSource: "TOKEX_CLIENT_SECRET"}
	th := stats.Thresholds{SuccessRatio: 0.99}
	st := &stats.Run{Requests: 40, SuccessRatio: 0, TopErrors: []stats.ErrorKind{{Error: "oauth_error:invalid_client", Count: 40,
		Descriptions: []stats.ErrorDescription{{Text: "client authentication failed", Count: 40}}}}}
	err := sanityVerdict(st, th, c.invalidClientHint)
	want := `most common error: oauth_error:invalid_client ×40 ("client authentication failed"); the server refused the clients' credentials: ` +
		"check that it has the clients perf-agent-0..9, that they may use client_secret_basic, and that their secret is the one tokex sent (TOKEX_CLIENT_SECRET)"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v\nwant …%s", err, want)
	}
	st.TopErrors[0].Error = "oauth_error:invalid_grant"
	if err := sanityVerdict(st, th, c.invalidClientHint); err == nil || strings.Contains(err.Error(), "credentials") {
		t.Errorf("invalid_grant: %v", err)
	}
	if got := c.clientAuth(); got != "client_secret_basic perf-agent-0..9, secret from TOKEX_CLIENT_SECRET" {
		t.Errorf("clientAuth %q", got)
	}
}
