// Package e2e holds the command line's end-to-end tests: real campaigns
// through tokex's own commands against real servers.
package e2e_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/cmd/tokex/cli"
	"github.com/tokex-dev/tokex/internal/knowncost"
	"github.com/tokex-dev/tokex/internal/truth"
)

// TestMain lets this test binary be a server of known cost.
func TestMain(m *testing.M) {
	knowncost.RunIfServer()
	os.Exit(m.Run())
}

// tokex runs a command of tokex in this process.
func tokex(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// campaign runs 3 rounds of 40/s against a server of known cost, its CPU
// measured by PID, and returns the evidence folder.
func campaign(t *testing.T, p *knowncost.Process, name string) string {
	t.Helper()
	parent := filepath.Join(t.TempDir(), name)
	cfg := filepath.Join(t.TempDir(), "campaign.yaml")
	// Latency is judged by the gate, not by thresholds: a shared machine
	// queues the generator for tens of ms.
	if err := os.WriteFile(cfg, []byte("name: "+name+"\nthresholds:\n  p95_ms: 10000\n  success_ratio: 0.9\n  max_dropped: 1000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(parent, "junit.xml")
	code, out, errs := tokex(t, "run", "--config", cfg, "--target", p.URL+"/as/token.oauth2", "--pid", strconv.Itoa(p.ServerPID),
		"--stages", "40", "--rounds", "3", "--duration", "4s", "--warmup", "1s", "--agents", "2", "--subject-alg", "ES256",
		"--no-sanity", "--no-tui", "--idle", "0s", "--out", parent, "--junit", junit,
		"--allow-warning", "generator_late,generator_starved,host_saturated")
	if code != 0 {
		t.Fatalf("tokex run: exit %d\n%s\n%s", code, out, errs)
	}
	validate(t, junit)
	dirs, _ := filepath.Glob(filepath.Join(parent, "*-"+name))
	if len(dirs) != 1 {
		t.Fatalf("evidence folders %v", dirs)
	}
	return dirs[0]
}

// validate checks a JUnit file against the common schema (when xmllint is
// installed; the schema's own tests say so when it is not).
func validate(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil || !bytes.Contains(b, []byte("<testsuites>")) {
		t.Fatalf("%s: %v %.200s", file, err, b)
	}
	if _, err := exec.LookPath("xmllint"); err != nil {
		t.Log("xmllint is not installed: the JUnit file is not checked against the schema")
		return
	}
	if out, err := exec.Command("xmllint", "--noout", "--schema", "../../../collector/junit/testdata/JUnit.xsd", file).CombinedOutput(); err != nil {
		t.Errorf("%s does not validate: %v\n%s", file, err, out)
	}
}

// TestTruthCompareGate: tokex compare --fail-on-regression on real
// campaigns — a server of known cost at 2 ms and at 6 ms of CPU per
// exchange: exit 1 naming CPU-ms per exchange; two campaigns of the same
// server: exit 0. Every JUnit file validates. Three campaigns of 15 s.
func TestTruthCompareGate(t *testing.T) {
	truth.Require(t)
	t.Setenv("TOKEX_HOME", t.TempDir())
	fast := knowncost.StartForTest(t, knowncost.Options{Cost: 2 * time.Millisecond, Procs: 1})
	slow := knowncost.StartForTest(t, knowncost.Options{Cost: 6 * time.Millisecond, Procs: 1})
	a1 := campaign(t, fast, "fast-1")
	a2 := campaign(t, fast, "fast-2")
	b := campaign(t, slow, "slow")

	// Two subtests: a busy machine can leave the second unjudged (skipped)
	// while the first still judged, and the truth step counts each.
	t.Run("a costlier server fails the gate", func(t *testing.T) {
		junit := filepath.Join(t.TempDir(), "slower.xml")
		code, out, errs := tokex(t, "compare", a1, b, "--fail-on-regression", "--junit", junit)
		t.Logf("2 ms vs 6 ms: exit %d\n%s%s", code, out, errs)
		if code != 1 || !strings.Contains(errs, "tokex: regression: 40/s cpu_ms_per_exchange: ") {
			t.Errorf("a server three times as costly: exit %d, want 1 naming cpu_ms_per_exchange", code)
		}
		validate(t, junit)
		if b, _ := os.ReadFile(junit); !bytes.Contains(b, []byte(`<failure message="regression: cpu_ms_per_exchange at 40/s`)) {
			t.Errorf("the JUnit file has no failed cpu_ms_per_exchange case:\n%s", b)
		}
		// Without the flag the comparison only reports.
		if code, _, _ := tokex(t, "compare", a1, b); code != 0 {
			t.Errorf("compare without --fail-on-regression: exit %d", code)
		}
	})
	t.Run("the same server passes it", func(t *testing.T) {
		junit := filepath.Join(t.TempDir(), "same.xml")
		code, out, errs := tokex(t, "compare", a1, a2, "--fail-on-regression", "--junit", junit)
		t.Logf("2 ms vs 2 ms: exit %d\n%s%s", code, out, errs)
		validate(t, junit)
		if code != 0 {
			if load := loadAverage(); load > 4 {
				t.Skipf("two campaigns of one server differ beyond their rounds' noise on a busy machine (load %.1f on 2 cores): %s", load, errs)
			}
			t.Errorf("two campaigns of the same server: exit %d, want 0", code)
		}
	})
}

func loadAverage() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
