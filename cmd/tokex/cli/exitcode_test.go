package cli

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cliChildEnv makes this test binary run the command line itself (init
// runs before TestMain), so that a test can signal a real tokex process.
const cliChildEnv = "TOKEX_CLI_TEST_CHILD"

func init() {
	if os.Getenv(cliChildEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
}

// TestInterruptExits130: a tokex replaying a campaign slowly, sent SIGINT,
// stops and exits 130 (ExitInterrupted), as the README documents.
func TestInterruptExits130(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// At a hundredth of its speed the campaign's few seconds last minutes.
	cmd := exec.Command(exe, "replay", "--speed", "0.01", "--no-tui", "../../../testdata/campaigns/passed")
	cmd.Env = append(os.Environ(), cliChildEnv+"=1", "TOKEX_HOME="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if !sc.Scan() { // the replay is under way
			_ = cmd.Process.Kill()
		}
		_ = cmd.Process.Signal(syscall.SIGINT)
		for sc.Scan() {
		}
		done <- cmd.Wait()
	}()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("still running a minute after SIGINT: %v", <-done)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
		t.Fatalf("exit: %v, want %d", err, ExitInterrupted)
	}
}

// TestPlainErrorExits2: the commands return their errors as they are
// (no exitError around them), and each exits ExitCannotRun with the error
// printed once.
func TestPlainErrorExits2(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(exists, []byte("name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"report", missing}, "missing"},
		{[]string{"compare", missing, missing}, "missing"},
		{[]string{"replay", "--speed", "-1", missing}, "--speed must be 0 or between 0.01 and 10000"},
		{[]string{"replay", "--no-tui", missing}, "missing"},
		{[]string{"init", exists}, "exists (use --force to overwrite)"},
		{[]string{"import", "k6", "--rate", "-5", missing}, "--rate must be 0 (inferred) or between"},
		{[]string{"ls", exists}, "campaign.yaml"},
		{[]string{"jwks", "--clients", "--agents", "1000000"}, "--agents: must be between 1 and"},
	}
	for _, c := range cases {
		code, out, errs := run(t, c.args...)
		if code != ExitCannotRun || !strings.HasPrefix(errs, "tokex: ") || !strings.Contains(errs, c.want) || strings.Count(errs, "tokex: ") != 1 {
			t.Errorf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", c.args, code, ExitCannotRun, out, errs)
		}
	}
}
