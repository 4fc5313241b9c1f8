package local_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
)

// check.verify: the generator verifies issued tokens against the keys the
// reference server publishes in its metadata, and a server whose tokens do
// not show what is expected fails, with why, though it answered 200.
func TestIssuedTokensVerifiedUnderLoad(t *testing.T) {
	t.Parallel()
	short := func() config.Campaign {
		c := tinyCampaign()
		c.Stages, c.Rounds, c.Warmup, c.Duration = []float64{20}, 1, 0, time.Second
		c.Check.TokenType = "Bearer"
		c.Check.Verify = config.Verify{Sample: 0.5, Audience: c.Request.Resources[0], Client: true, Lifetime: 5 * time.Minute}
		return c
	}
	r := runCampaign(t, context.Background(), short(), filepath.Join(t.TempDir(), "ok"), nil, nil, nil)
	if r.err != nil {
		t.Fatalf("campaign with verified tokens: %v", r.err)
	}
	said := false
	for _, e := range r.events {
		if l, ok := e.(event.Log); ok && strings.HasPrefix(l.Message, "issued tokens: 50 % of the successes, picked at random, verified against the keys of https://") {
			said = true
		}
	}
	if !said || r.summary.Stages[0].Runs[0].OK == 0 {
		t.Errorf("verification not announced (%v) or no success", said)
	}

	for name, edit := range map[string]func(*config.Campaign){
		"audience":   func(c *config.Campaign) { c.Check.Verify.Audience = "https://elsewhere" },
		"lifetime":   func(c *config.Campaign) { c.Check.Verify.Lifetime = time.Hour },
		"token_type": func(c *config.Campaign) { c.Check.TokenType = "N_A" },
		"required":   func(c *config.Campaign) { c.Check.Required = []string{"access_token", "refresh_token"} },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := short()
			edit(&c)
			r := runCampaign(t, context.Background(), c, filepath.Join(t.TempDir(), name), nil, nil, nil)
			want := map[string]string{
				"audience":   "issued token: aud does not hold the expected audience",
				"lifetime":   "issued token: exp − iat is not 1h0m0s",
				"token_type": `token_type is \"Bearer\", want N_A`,
				"required":   "the response has no refresh_token",
			}[name]
			if !errors.Is(r.err, runner.ErrSanity) || !strings.Contains(r.err.Error(), "bad_response:200") || !strings.Contains(r.err.Error(), want) {
				t.Fatalf("err = %v, want a sanity failure saying %s", r.err, want)
			}
		})
	}
}
