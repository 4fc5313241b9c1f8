package authserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/internal/jose"
)

// TestSubjectLifetimePolicy is issue 9 item 6, decided: a subject (or
// actor) token lives at most subject.max_lifetime (default 1h) — exp − iat
// when it has an iat, exp − now (plus leeway) always; iat is optional (RFC
// 7519 §4.1.6); exp, nbf and iat must be JSON numbers, never strings; a
// kid-less token is verified only when exactly one key fits its alg
// (TestJWKSKeySelection).
func TestSubjectLifetimePolicy(t *testing.T) {
	now := time.Now().Unix()
	hour := int64(3600)
	claims := func(extra string) string {
		return fmt.Sprintf(`{"iss":%q,"sub":"u","aud":"perf-agent-0"%s}`, DefaultIssuerIn, extra)
	}
	cases := []struct {
		name    string
		max     time.Duration // 0: the default
		payload string
		ok      bool
	}{
		{"exp ten years ahead", 0, claims(fmt.Sprintf(`,"iat":%d,"exp":%d`, now, now+10*365*24*hour)), false},
		{"exp ten years ahead, no iat", 0, claims(fmt.Sprintf(`,"exp":%d`, now+10*365*24*hour)), false},
		{"long-lived token issued long ago", 0, claims(fmt.Sprintf(`,"iat":%d,"exp":%d`, now-2*hour+60, now+60)), false},
		{"exp as a numeric string", 0, claims(fmt.Sprintf(`,"iat":%d,"exp":"%d"`, now, now+300)), false},
		{"iat as a numeric string", 0, claims(fmt.Sprintf(`,"iat":"%d","exp":%d`, now, now+300)), false},
		{"nbf as a numeric string", 0, claims(fmt.Sprintf(`,"nbf":"%d","exp":%d`, now, now+300)), false},
		{"no iat, 5 minutes", 0, claims(fmt.Sprintf(`,"exp":%d`, now+300)), true},
		{"exactly the maximum", 0, claims(fmt.Sprintf(`,"iat":%d,"exp":%d`, now, now+hour)), true},
		{"fractional NumericDate", 0, claims(fmt.Sprintf(`,"iat":%d.25,"exp":%d.5`, now, now+300)), true},
		{"ten hours under a 24h maximum", 24 * time.Hour, claims(fmt.Sprintf(`,"iat":%d,"exp":%d`, now, now+10*hour)), true},
		{"ten hours under the default", 0, claims(fmt.Sprintf(`,"iat":%d,"exp":%d`, now, now+10*hour)), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, jose.ES256, func(c *Config) {
				if tc.max > 0 {
					c.Subject.MaxLifetime = tc.max
				}
			})
			tok := f.signRaw(t, f.header(), tc.payload)
			rec := f.do("POST", form(tok).Encode(), basic("perf-agent-0"))
			if (rec.Code == 200) != tc.ok {
				t.Fatalf("got %d %s, want ok=%v", rec.Code, rec.Body, tc.ok)
			}
		})
	}
}

func TestMaxLifetimeConfig(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"0s", "serve.yaml:2: subject.max_lifetime: must be between 1s and 8760h"},
		{"-1h", "serve.yaml:2: subject.max_lifetime"},
		{"9000h", "serve.yaml:2: subject.max_lifetime"},
		{"2h", ""},
	} {
		p := filepath.Join(t.TempDir(), "serve.yaml")
		_ = os.WriteFile(p, []byte("subject:\n  max_lifetime: "+tc.value+"\n"), 0o600)
		cfg, doc, err := Load(p)
		if err == nil {
			err = cfg.Validate(doc)
		}
		if tc.want == "" {
			if err != nil || cfg.Subject.MaxLifetime != 2*time.Hour {
				t.Errorf("%s: %v, %v", tc.value, err, cfg.Subject.MaxLifetime)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.value, err, tc.want)
		}
	}
}

// TestServeConfigBounds: the serve.yaml siblings of issue 9 item 22 — no
// NaN, and no size that runs the server out of memory.
func TestServeConfigBounds(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"faults:\n  error_ratio: .nan\n", "serve.yaml:2: faults.error_ratio: .nan is not a finite number"},
		{"default_clients:\n  count: 2000000000\n", "serve.yaml:2: default_clients.count: must be between 1 and 10000"},
		{"max_body_bytes: 100000000000\n", "serve.yaml:1: max_body_bytes"},
		{"signing:\n  lifetime: 1000h\n", "serve.yaml:2: signing.lifetime"},
		{"subject:\n  refresh: 1ns\n", "serve.yaml:2: subject.refresh"},
		{"subject:\n  unknown_kid_interval: 10000h\n", "serve.yaml:2: subject.unknown_kid_interval"},
		{"faults:\n  latency:\n    fixed: 1h\n", "serve.yaml:3: faults.latency.fixed"},
		{"faults:\n  stall:\n    every: 1000h\n    duration: 1s\n", "serve.yaml:3: faults.stall.every"},
	} {
		p := filepath.Join(t.TempDir(), "serve.yaml")
		_ = os.WriteFile(p, []byte(tc.body), 0o600)
		cfg, doc, err := Load(p)
		if err == nil {
			err = cfg.Validate(doc)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.body, err, tc.want)
		}
	}
}
