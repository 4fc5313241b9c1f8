package cli

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/authserver"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/statedir"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/local"
	"github.com/tokex-dev/tokex/runner/runnertest"
	"github.com/tokex-dev/tokex/subject"
)

// TestMain lets the test binary stand in for tokex-engine ($TOKEX_ENGINE:
// started as "<exe> --config FILE --ready-fd 3"), so that no test builds
// one; FindServerProgram's own tests cover the search.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "--config" {
		os.Exit(authserver.EmbeddedMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	if exe, err := os.Executable(); err == nil {
		_ = os.Setenv(local.ServerEnv, exe)
	}
	os.Exit(m.Run())
}

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("TOKEX_HOME", t.TempDir())
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// fakeRun runs the command line with d as every campaign's driver
// (runner/runnertest): exit codes, flags and output without load.
func fakeRun(t *testing.T, d *runnertest.Driver, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("TOKEX_HOME", t.TempDir())
	var out, errb bytes.Buffer
	code := mainWith(deps{driver: func(config.Campaign) (runner.Driver, error) { return d, nil }}, args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	strict := filepath.Join(dir, "strict.yaml")
	_ = os.WriteFile(strict, []byte("thresholds:\n  p95_ms: 0.001\nsample_interval: 100ms\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("stages:\n  - 100\n  - fast\n"), 0o644)
	lenient := lenientConfig(t)
	short := []string{"--stages", "20", "--rounds", "1", "--duration", "1s", "--warmup", "0s", "--agents", "2", "--subject-alg", "ES256", "--no-sanity", "--no-tui", "--idle", "0s",
		"--allow-warning", "generator_late,generator_starved", "--allow-warning", "host_saturated", "--allow-warning", shortRunCPU}
	answers := func() *runnertest.Driver { return &runnertest.Driver{N: 20} }
	// A target nothing answers: every exchange a conn_error, at once or,
	// paced, over the run's length (the unreachable watch runs in real time).
	dead := func() *runnertest.Driver {
		return &runnertest.Driver{N: 20, Status: func(event.PlannedRun) int { return 0 }}
	}
	deadPaced := func() *runnertest.Driver {
		return &runnertest.Driver{Pace: 20 * time.Millisecond, Status: func(event.PlannedRun) int { return 0 }}
	}
	cases := []struct {
		name   string
		driver func() *runnertest.Driver
		args   []string
		code   int
		want   string
		runs   []string // the runs the driver was given
	}{
		{"passes", answers, append([]string{"run", "--config", lenient, "--out", filepath.Join(dir, "a")}, short...), ExitOK, "PASSED", []string{"00-r1-20rps"}},
		{"threshold fails", answers, append([]string{"run", "--config", strict, "--out", filepath.Join(dir, "b")}, short...), ExitThresholds, "FAILED", []string{"00-r1-20rps"}},
		{"config error", answers, []string{"run", "--config", bad}, ExitCannotRun, "bad.yaml:3: stages[1]", nil},
		{"bad flag value", answers, []string{"run", "--stages", "10,x"}, ExitCannotRun, `--stages: "x" is not a number`, nil},
		{"bad allowed warning", answers, []string{"run", "--allow-warning", "generator_late,dropped_arrivals"}, ExitCannotRun, `--allow-warning: "dropped_arrivals" is not a warning that fails the verdict`, nil},
		{"unreachable target", dead, append([]string{"run", "--config", lenient, "--target", "http://127.0.0.1:1/token", "--out", filepath.Join(dir, "c"), "--subject-alg", "RS256"},
			"--stages", "5", "--rounds", "1", "--duration", "1s", "--warmup", "0s", "--idle", "0s", "--no-tui"),
			ExitCannotRun, "sanity run failed", []string{"00-sanity"}},
		// Without the sanity run a dead target used to be loaded for every run, then "campaign done", exit 1.
		{"target unreachable without sanity", deadPaced, append([]string{"run", "--config", lenient, "--target", "http://127.0.0.1:1/token", "--out", filepath.Join(dir, "d"), "--unreachable-after", "1s"},
			"--stages", "5", "--rounds", "2", "--duration", "4s", "--warmup", "0s", "--idle", "0s", "--agents", "2", "--subject-alg", "ES256", "--no-sanity", "--no-tui"),
			ExitCannotRun, "campaign failed: target unreachable: no HTTP response for 1s", []string{"00-r1-5rps"}},
		{"unreachable-after out of range", answers, []string{"run", "--unreachable-after", "10ms"}, ExitCannotRun, "target.unreachable_after: 10ms must be between 1s and 1h", nil},
		{"wait-quiet without a host check", answers, []string{"run", "--host-check", "0s", "--wait-quiet", "1m"}, ExitCannotRun, "--wait-quiet waits on the host check", nil},
		{"host-check out of range", answers, []string{"run", "--host-check", "2m"}, ExitCannotRun, "--host-check must be between 0s and 1m", nil},
		{"unwritable out", answers, append([]string{"run", "--out", "/proc/tokex"}, short...), ExitCannotRun, "evidence folder", nil},
		{"resume non-evidence", answers, []string{"run", "--resume", dir}, ExitCannotRun, "not a tokex evidence folder", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.driver()
			code, out, errs := fakeRun(t, d, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errs)
			}
			if !strings.Contains(out+errs, tc.want) {
				t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", tc.want, out, errs)
			}
			if !slices.Equal(d.Runs(), tc.runs) || tc.runs != nil && (d.Starts() != 1 || d.Closes() != 1) {
				t.Errorf("the driver ran %v (want %v), started %d and closed %d times", d.Runs(), tc.runs, d.Starts(), d.Closes())
			}
		})
	}
}

// shortRunCPU: a 1-s run of 20 exchanges costs the engine about 10 ms of CPU,
// one tick of /proc's counters, so a busy machine can read zero and flag
// engine_cpu_implausible. These tests are about output and exit codes.
const shortRunCPU = "engine_cpu_implausible"

// lenientConfig is a campaign whose p95 objective a saturated test machine
// still meets (a 2-core CI host running the suite saw p95 0.6 s at 20/s):
// these tests are about exit codes and output, not the latency. Its sanity
// run lasts a second, and each run waits one 100 ms sample past its end.
func lenientConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "lenient.yaml")
	if err := os.WriteFile(p, []byte("thresholds:\n  p95_ms: 60000\nsanity:\n  duration: 1s\nsample_interval: 100ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The headless run: progress lines, then the last screen, the answer
// first (the verdict, each stage's figures, where the report is), then the
// tables; the host check before the first run is in the evidence.
func TestHeadlessOutputHasTheTables(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := run(t, "run", "--config", lenientConfig(t), "--out", dir, "--stages", "10,20", "--rounds", "1", "--duration", "1s", "--warmup", "0s", "--idle", "0s",
		"--agents", "2", "--subject-alg", "ES256", "--client-secret", "cli-secret-XYZ", "--allow-warning", "generator_late,generator_starved,host_saturated,"+shortRunCPU,
		"--host-check", "500ms")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"pre-flight: generator ", "Latency by stage", "Resource consumption", "Per-run p95: 10/s:", "sanity (discarded)", "evidence: "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	_, last, _ := strings.Cut(out, "\nPASSED — ")
	answer, _, ok := strings.Cut(last, "Latency by stage")
	if !ok || !strings.Contains(answer, "\n10/s: p95 ") || !strings.Contains(answer, "\nreport: "+dir) {
		t.Errorf("the last screen does not open with the answer:\n%s", out)
	}
	events, err := filepath.Glob(filepath.Join(dir, "*", "events.jsonl"))
	if err != nil || len(events) != 1 {
		t.Fatalf("events.jsonl: %v %v", events, err)
	}
	if b, err := os.ReadFile(events[0]); err != nil || !strings.Contains(string(b), `"kind":"host_check","data":{"at":`) {
		t.Errorf("no host check in the evidence: %v", err)
	}
	if strings.Contains(out+errs, "cli-secret-XYZ") {
		t.Error("the client secret was printed")
	}
}

func TestInitWritesTemplateOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "campaign.yaml")
	if code, _, errs := run(t, "init", p); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := run(t, "init", p); code != ExitCannotRun || !strings.Contains(errs, "exists") {
		t.Fatalf("second init: %d %s", code, errs)
	}
	if code, _, _ := run(t, "init", "--force", p); code != 0 {
		t.Fatal("init --force failed")
	}
}

func TestServeRejectsBadConfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "serve.yaml")
	_ = os.WriteFile(p, []byte("signing:\n  alg: none\n"), 0o644)
	code, _, errs := run(t, "serve", "--config", p)
	if code != ExitCannotRun || !strings.Contains(errs, "serve.yaml:2: signing.alg") {
		t.Fatalf("%d %s", code, errs)
	}
}

func TestServeMaxSubjectLifetimeFlag(t *testing.T) {
	code, _, errs := run(t, "serve", "--max-subject-lifetime", "9000h")
	if code != ExitCannotRun || !strings.Contains(errs, "subject.max_lifetime: must be between 1s and 8760h") {
		t.Fatalf("%d %s", code, errs)
	}
}

func TestSmokeAgainstReferenceServer(t *testing.T) {
	home := t.TempDir()
	t.Setenv("TOKEX_HOME", home)
	t.Setenv("TOKEX_CLIENT_SECRET", "smoke-secret-123456")
	path, _ := statedir.SubjectKeyPath()
	key, err := subject.LoadOrCreate(path, jose.RS256)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := jose.JWKS(key)
	srv, err := authserver.New(context.Background(), authserver.Default(), authserver.Options{ClientSecret: "smoke-secret-123456", SubjectJWKS: jwks})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	srv.SetBaseURL(ts.URL)
	var out, errb bytes.Buffer
	code := Main([]string{"smoke", "--url", ts.URL + "/as/token.oauth2"}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "smoke test passed") ||
		!strings.Contains(out.String(), "✓ issued token verified against the keys of "+ts.URL+"/.well-known/oauth-authorization-server: signature, iss "+ts.URL+", exp, aud holds https://mcp.example.internal/mcp") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if strings.Contains(out.String(), "smoke-secret-123456") {
		t.Error("the secret was printed")
	}
	out.Reset()
	if code := Main([]string{"smoke", "--url", ts.URL + "/as/token.oauth2", "--lifetime", "10m"}, &out, &errb); code != ExitThresholds ||
		!strings.Contains(out.String(), "✗ issued token: exp − iat is not 10m0s") {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
}

func TestJWKSIsStableAndPublic(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	var a, b, errb bytes.Buffer
	if Main([]string{"jwks"}, &a, &errb) != 0 || Main([]string{"jwks"}, &b, &errb) != 0 {
		t.Fatal(errb.String())
	}
	if a.String() != b.String() {
		t.Error("the default subject key changed between calls")
	}
	for _, private := range []string{`"d":`, `"p":`, `"q":`} {
		if strings.Contains(a.String(), private) {
			t.Errorf("the JWKS holds private key material %s", private)
		}
	}
	if !strings.Contains(a.String(), `"alg":"RS256"`) || !strings.Contains(a.String(), `"alg":"ES256"`) {
		t.Errorf("jwks: %s", a.String())
	}
}

func TestManifestsRedactSecrets(t *testing.T) {
	t.Setenv("TOKEX_CLIENT_SECRET", "manifest-secret-777")
	code, out, errs := run(t, "manifests", "--target", "https://pf-pingfederate-engine:9031/as/token.oauth2", "--stages", "100,250",
		"--rounds", "1", "-n", "pf-perf")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "manifest-secret-777") || strings.Contains(out, `"d":`) {
		t.Error("manifests leak secret material")
	}
	for _, want := range []string{"kind: Secret", "client-secret: '[redacted]'", "kind: ConfigMap", "exchange.js: |", "kind: Job",
		"completionMode: Indexed", "namespace: pf-perf", "tokex.dev/run: 01-r1-100rps", "tokex.dev/run: 02-r1-250rps"} {
		if !strings.Contains(out, want) {
			t.Errorf("manifests lack %q", want)
		}
	}
	if n := strings.Count(out, "kind: Job"); n != 3 {
		t.Errorf("%d Jobs, want 3 (sanity + 2 stages)", n)
	}
}

// TestManifestsSayTheScaling (issue 28): with --replicas, manifests says
// that tokex scales the engines' workload and the access that needs, and
// plans a Job per run of each count.
func TestManifestsSayTheScaling(t *testing.T) {
	t.Setenv("TOKEX_CLIENT_SECRET", "manifest-secret-777")
	cfg := filepath.Join(t.TempDir(), "campaign.yaml")
	y := "driver: kube\ntarget: {url: https://pf:9031/as/token.oauth2}\nkube:\n  engines: {selector: app=pf, service: pf, port: 9031}\n"
	if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "manifests", "--config", cfg, "--stages", "100", "--rounds", "1", "--replicas", "1,2", "--pause-hpa", "-n", "pf-perf")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"# kube.engines.replicas [1 2]: besides these objects tokex scales the engine Pods' Deployment or StatefulSet in pf-perf",
		"get, update, patch on deployments/scale", "Role tokex-pause-hpa", "tokex.dev/run: 01-n1-r1-100rps", "tokex.dev/run: 03-n2-r1-100rps"} {
		if !strings.Contains(out, want) {
			t.Errorf("manifests lack %q", want)
		}
	}
}

// TestEngineCommand: `tokex engine` is the engine's own command line
// (hidden), for when no tokex-engine binary is found.
func TestEngineCommand(t *testing.T) {
	code, _, errs := run(t, local.ServerArg)
	if code != ExitCannotRun || !strings.Contains(errs, "--config is required") {
		t.Errorf("code %d, stderr %q", code, errs)
	}
	_, out, _ := run(t, "--help")
	if strings.Contains(out, local.ServerArg+" ") {
		t.Errorf("the engine command is listed in help:\n%s", out)
	}
}

// TestCapacityExitCodes: tokex capacity exits 0 when it found the
// capacity, with the probe table and the bracket, and 1 when the objective
// broke at the lowest rate; every probe is a run the driver was given.
func TestCapacityExitCodes(t *testing.T) {
	breaksAbove := func(rate float64) *runnertest.Driver {
		return &runnertest.Driver{N: 20, Status: func(p event.PlannedRun) int {
			if p.TargetRPS > rate {
				return 503
			}
			return 200
		}}
	}
	args := []string{"capacity", "--config", lenientConfig(t), "--start", "10", "--max", "200", "--resolution", "0.2", "--probe-rounds", "1", "--cool-down", "1ms",
		"--duration", "1s", "--warmup", "0s", "--idle", "0s", "--agents", "2", "--subject-alg", "ES256", "--no-sanity", "--no-tui", "--allow-warning", "generator_late,generator_starved,host_saturated"}
	for _, tc := range []struct {
		name   string
		driver *runnertest.Driver
		code   int
		want   []string
		rates  []float64
	}{
		{"found", breaksAbove(45), ExitOK, []string{"Capacity search (probes in the order they ran):", "probe #7 45/s ✓ pass · capacity ≥ 45/s, < 50/s"},
			[]float64{10, 20, 40, 80, 60, 50, 45}},
		{"none found", breaksAbove(0), ExitThresholds, []string{"Capacity search (probes in the order they ran):", "probe #1 10/s ✗ broken"}, []float64{10, 5, 2.5, 1.25, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := fakeRun(t, tc.driver, append(args, "--out", t.TempDir())...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if rates := tc.driver.Rates(); !slices.Equal(rates, tc.rates) {
				t.Errorf("probes at %v, want %v", rates, tc.rates)
			}
		})
	}
}
