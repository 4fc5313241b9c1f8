package local_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/runner/local/localtest"
)

// TestCampaignWithEachClientAuthMethod runs a short campaign against the
// embedded tokex serve with private_key_jwt (an assertion per request, a
// key per agent) and with tls_client_auth (a certificate per agent): every
// exchange of the sanity run and the stage succeeds, so both ends agree,
// and so do the calibration exchanges before them.
func TestCampaignWithEachClientAuthMethod(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method exchange.AuthMethod
		log    string
	}{
		{exchange.AuthPrivateKeyJWT, "private_key_jwt perf-agent-0..2, keys from a fresh ES256 key per agent"},
		{exchange.AuthTLSClient, "tls_client_auth perf-agent-0..2, certificates from a fresh client CA"},
	} {
		t.Run(string(tc.method), func(t *testing.T) {
			t.Parallel()
			c := localtest.Tiny()
			c.Stages, c.Rounds, c.Warmup, c.Duration = []float64{20}, 1, 0, time.Second
			c.Request.AuthMethod = string(tc.method)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res := localtest.Run(t, ctx, c, filepath.Join(t.TempDir(), "ca"), localtest.Options{})
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			said := false
			for _, e := range res.Events {
				if l, ok := e.(event.Log); ok && strings.Contains(l.Message, tc.log) {
					said = true
				}
				if c, ok := e.(event.Forecast); ok && strings.HasPrefix(c.Estimate.Method, "calibration failed") {
					t.Errorf("the calibration exchanges did not authenticate: %s", c.Estimate.Method)
				}
			}
			if !said {
				t.Errorf("no log line %q", tc.log)
			}
			runs := []*stats.Run{res.Summary.Sanity}
			for _, st := range res.Summary.Stages {
				runs = append(runs, st.Runs...)
			}
			for _, r := range runs {
				if r == nil || r.Requests == 0 || r.OK != r.Requests || len(r.Errors) > 0 {
					t.Errorf("a run did not succeed throughout: %+v", r)
				}
			}
		})
	}
}
