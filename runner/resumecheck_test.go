package runner

import (
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/runner/config"
)

// Disagreements: what a resume compares, and what may differ (the port of
// a server tokex starts itself).
func TestResumeDisagreements(t *testing.T) {
	c := config.Article()
	recorded := func(target string, edit func(*config.Campaign)) *Resumed {
		m := c
		if edit != nil {
			edit(&m)
		}
		r := &Resumed{Manifest: evidence.Manifest{Driver: m.Driver, Target: target}}
		for _, p := range Plan(&m) {
			r.Manifest.Runs = append(r.Manifest.Runs, evidence.RunEntry{ID: p.ID, Plan: p})
		}
		return r
	}
	for _, tc := range []struct {
		name   string
		r      *Resumed
		remote string // the config's target.url ("" embedded)
		want   string // "" agrees
	}{
		{"embedded, new port", recorded("https://127.0.0.1:40123/as/token.oauth2", nil), "", ""},
		{"embedded, never started", recorded("", nil), "", ""},
		{"embedded but remote recorded", recorded("https://as.example/token", nil), "", "target: manifest.json has https://as.example/token, the config starts tokex's embedded server"},
		{"remote, same", recorded("https://as.example/token", nil), "https://as.example/token", ""},
		{"remote, edited", recorded("https://as.example/token", nil), "https://evil.example/token", "target: manifest.json has https://as.example/token, the config https://evil.example/token"},
		{"remote, none recorded", recorded("", nil), "https://as.example/token", "start a new campaign"},
		{"longer duration", recorded("", func(m *config.Campaign) { m.Duration *= 2 }), "", "plan: run 1 is 01-r1-100rps (100/s, warmup 30s, 10m0s, 10 agents) in manifest.json, 01-r1-100rps (100/s, warmup 30s, 5m0s, 10 agents) in the config"},
		{"hostile target", recorded(strings.Repeat("x", 1<<20), nil), "", "manifest.json has xxxxxxxx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := c
			cfg.Target.URL = tc.remote
			got := strings.Join(tc.r.Disagreements(&cfg, false), "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) || len(got) > 2000 {
				t.Errorf("got %.300q, want %q", got, tc.want)
			}
		})
	}
}
