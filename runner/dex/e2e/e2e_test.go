package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/cmd/tokex/cli"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/proc"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/subject"
)

const secret = "dex-e2e-secret-4f9a"

// dex starts tokex's subject issuer and Dex trusting it. The suite needs
// the binary of scripts/dex-e2e/build.sh, named by TOKEX_DEX_BIN (scripts/test
// sets it); without it the suite is skipped.
func dex(t *testing.T, clients int) (*Dex, *subject.IssuerServer) {
	t.Helper()
	bin := os.Getenv("TOKEX_DEX_BIN")
	if bin == "" {
		t.Skip("Dex is absent (TOKEX_DEX_BIN is not set): scripts/test builds it with scripts/dex-e2e/build.sh and sets it")
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		t.Fatalf("TOKEX_DEX_BIN=%s is not a file (%v): scripts/dex-e2e/build.sh prints the binary's path", bin, err)
	}
	t.Setenv("TOKEX_HOME", t.TempDir())
	keys, err := subject.StoredKeys()
	if err != nil {
		t.Fatal(err)
	}
	iss, err := subject.ServeIssuer(subject.IssuerOptions{Addr: "127.0.0.1:0", Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = iss.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := Start(ctx, Options{Bin: bin, Dir: t.TempDir(), Upstream: iss.URL, Connector: "tokex", Clients: clients, Secret: secret, Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return d, iss
}

// campaign is the recipe of docs/targets/dex.md with short runs: id_token
// subject tokens from tokex's issuer, connector_id as an extra form field,
// per-user email and groups claims, Dex's process measured through
// target.pid.
func campaign(t *testing.T, d *Dex, iss *subject.IssuerServer) string {
	t.Helper()
	y := fmt.Sprintf(`name: dex-e2e
target:
  url: %s
  pid: %d
request:
  subject_token_type: id_token
  requested_token_type: access_token
  resources: []
  scope: openid email groups
  extra:
    connector_id: tokex
check:
  token_type: bearer
  verify: {sample: 0.25, lifetime: 24h}
subject:
  issuer: %s
  alg: ES256
  claims:
    email: "{{user}}@example.com"
    email_verified: true
    groups: [perf, "team-{{user_number}}"]
agents:
  count: 2
stages: [20]
rounds: 1
duration: 4s
warmup: 1s
sanity:
  duration: 2s
thresholds:
  p95_ms: 10000
  allow_warnings: [generator_late, generator_starved, host_saturated]
`, d.TokenURL, d.PID, iss.URL)
	p := filepath.Join(t.TempDir(), "campaign.yaml")
	if err := os.WriteFile(p, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCampaignAgainstDex is issue 12's proof against a real third-party
// server: every exchange tokex counts as a success is one Dex counts as a
// 200 of its token endpoint, and the engine CPU tokex read from /proc
// through target.pid is the CPU Dex reports about itself.
func TestCampaignAgainstDex(t *testing.T) {
	d, iss := dex(t, 2)
	cfg := campaign(t, d, iss)
	token := map[string]string{"handler": "/token"}
	before, err := d.Metric("http_requests_total", token)
	if err != nil {
		t.Fatal(err)
	}
	// Dex's own CPU counter, read five times a second while tokex runs.
	prom := &proc.Prometheus{URL: d.MetricsURL, Timeout: 10 * time.Second}
	var dexCPU []proc.Reading
	stop, scraped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(scraped)
		for {
			if r, err := prom.Read(); err == nil {
				dexCPU = append(dexCPU, r)
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	out := t.TempDir()
	t.Setenv("TOKEX_CLIENT_SECRET", secret)
	var stdout, stderr bytes.Buffer
	if code := cli.Main([]string{"run", "--config", cfg, "--no-tui", "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("tokex run against Dex: exit %d\n%s\n%s\ndex log:\n%s", code, stdout.String(), stderr.String(), tail(d.Log))
	}
	close(stop)
	<-scraped
	if want := "note: issued tokens: 25 % of the successes, picked at random, verified against the keys of " + d.Issuer + "/.well-known/openid-configuration"; !strings.Contains(stdout.String(), want) {
		t.Errorf("tokex did not say it verifies Dex's tokens (%q):\n%s", want, stdout.String())
	}
	ok200, _ := d.Metric("http_requests_total", map[string]string{"handler": "/token", "code": "200"})
	after, _ := d.Metric("http_requests_total", token)

	dirs, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(dirs) != 1 {
		t.Fatalf("evidence folders %v", dirs)
	}
	f, err := evidence.Open(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	var ok, sent int
	var first, last *float64
	var firstAt, lastAt int64 = math.MaxInt64, 0
	defer f.Close()
	for _, r := range f.Manifest.Runs {
		if _, err := f.Requests(r.ID, func(q *stats.Request) {
			if q.Status != 0 {
				sent++
			}
			if q.OK() {
				ok++
			}
		}); err != nil {
			t.Fatal(err)
		}
		rs, _, err := f.Resources(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, smp := range rs {
			if smp.Kind != "engine" {
				continue
			}
			if smp.Source != "proc-tree" {
				t.Errorf("engine sample source %q, want proc-tree (target.pid)", smp.Source)
			}
			v := smp.CPUSecondsTotal
			if smp.AtUS < firstAt {
				firstAt, first = smp.AtUS, &v
			}
			if smp.AtUS > lastAt {
				lastAt, last = smp.AtUS, &v
			}
		}
	}
	// Sanity (2 s) + warmup (1 s) + measured (4 s) at 20/s.
	if ok < 120 || float64(ok) != ok200-before || float64(sent) != after-before {
		t.Errorf("tokex counted %d successes of %d answered exchanges; Dex counted %.0f 200s of %.0f token requests", ok, sent, ok200-before, after-before)
	}
	// The same CPU, read by tokex from /proc and by Dex from itself, over
	// the span of tokex's engine samples; both count whole clock ticks
	// (10 ms), and Dex's readings are interpolated between scrapes.
	if first == nil || last == nil {
		t.Fatal("no engine samples")
	}
	at := func(us int64) float64 {
		for i := 1; i < len(dexCPU); i++ {
			a, b := dexCPU[i-1], dexCPU[i]
			if b.At.UnixMicro() >= us && a.At.UnixMicro() <= us {
				return a.CPUSeconds + (b.CPUSeconds-a.CPUSeconds)*float64(us-a.At.UnixMicro())/float64(b.At.Sub(a.At).Microseconds())
			}
		}
		t.Fatalf("no Dex readings around %s", time.UnixMicro(us))
		return 0
	}
	tokexCPU, dexDelta := *last-*first, at(lastAt)-at(firstAt)
	t.Logf("engine CPU over %s of samples: tokex (proc-tree of pid %d) %.3f s, Dex process_cpu_seconds_total %.3f s; %d exchanges",
		time.Duration(lastAt-firstAt)*time.Microsecond, d.PID, tokexCPU, dexDelta, ok)
	if dexDelta <= 0 || math.Abs(tokexCPU-dexDelta) > 0.03+0.05*dexDelta {
		t.Errorf("engine CPU: tokex read %.3f s, Dex reports %.3f s", tokexCPU, dexDelta)
	}
}

// TestSmokeAgainstDex: tokex smoke with the campaign's check passes against
// Dex, whose tokens are not the article's, and verifies the token Dex issued
// against Dex's own keys.
func TestSmokeAgainstDex(t *testing.T) {
	d, iss := dex(t, 2) // the campaign's agents: smoke tries every agent's client
	cfg := campaign(t, d, iss)
	t.Setenv("TOKEX_CLIENT_SECRET", secret)
	var out, errb bytes.Buffer
	code := cli.Main([]string{"smoke", "--config", cfg, "--url", d.TokenURL}, &out, &errb)
	want := "✓ issued token verified against the keys of " + d.Issuer + "/.well-known/openid-configuration: signature, iss " + d.Issuer + ", exp, exp − iat is 24h0m0s"
	if code != 0 || !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "smoke test passed") {
		t.Fatalf("exit %d, want %q\n%s\n%s", code, want, out.String(), errb.String())
	}
}
