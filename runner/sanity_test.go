package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/config"
)

// A sanity run that timed out on a saturated host says the machine may be
// the cause, not only the server.
func TestSanityVerdictNamesTheMachine(t *testing.T) {
	th := stats.Thresholds{SuccessRatio: 0.99}
	st := &stats.Run{Requests: 100, OK: 40, SuccessRatio: 0.4, Dropped: 3}
	err := sanityVerdict(st, th, nil)
	if !errors.Is(err, ErrSanity) || strings.Contains(err.Error(), "machine") {
		t.Fatalf("healthy machine: %v", err)
	}
	st.Warnings = []stats.Warning{stats.Warn(stats.WarnDropped, "s", "3 dropped"), stats.Warn(stats.WarnHostSaturated, "s", "busy"),
		stats.Warn(stats.WarnGeneratorStarved, "s", "waited")}
	want := "40 of 100 exchanges succeeded; 3 dropped; and this machine, not only the server, may be the cause: host_saturated, generator_starved"
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
		Descriptions: []sample.ErrorDescription{{Text: "client authentication failed", Count: 40}}}}}
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

// Issue 23 item 1: a server that holds some requests past the timeout is
// slow, not broken: its sanity run does not stop the campaign, a refusing
// or mostly failing one does.
func TestSanityVerdictSlowServerGoesOn(t *testing.T) {
	th := stats.Thresholds{SuccessRatio: 0.99}
	for _, c := range []struct {
		name   string
		ok     int64
		top    string
		stops  bool
		noteOn bool
	}{
		{"1 in 37 held past the timeout", 78, "timeout", false, true},
		{"some 503s", 70, "http_error:503", false, true},
		{"connection resets", 75, "conn_error", false, true},
		{"most time out", 30, "timeout", true, false},
		{"some refuse the client", 70, "oauth_error:invalid_client", true, false},
		{"some 400s without an OAuth body", 70, "http_error:400", true, false},
		{"200s without a token", 70, "bad_response:200", true, false},
		{"all fine", 80, "", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &stats.Run{Requests: 80, OK: c.ok, SuccessRatio: float64(c.ok) / 80}
			if c.top != "" {
				st.TopErrors = []stats.ErrorKind{{Error: c.top, Count: 80 - c.ok}}
			}
			err := sanityVerdict(st, th, nil)
			if (err != nil) != c.stops {
				t.Fatalf("stops=%v, want %v (%v)", err != nil, c.stops, err)
			}
			if note := sanityShortfall(st, th); !c.stops && (note != "") != c.noteOn {
				t.Errorf("note %q, want one: %v", note, c.noteOn)
			}
		})
	}
	if err := sanityVerdict(&stats.Run{}, th, nil); err == nil {
		t.Error("a sanity run without a single exchange went on")
	}
}
