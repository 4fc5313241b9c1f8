package owner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestSweepRemovesOnlyMarkedFoldersOfDeadOwners(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	mk := func(name, marker string) string {
		d := filepath.Join(parent, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(d, "server-key.pem"), []byte("key"), 0o600)
		if marker != "" {
			_ = os.WriteFile(filepath.Join(d, MarkerFile), []byte(marker), 0o600)
		}
		return d
	}
	// A process that has exited: its pid names nobody (or someone else).
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` to start:", err)
	}
	deadPid := cmd.Process.Pid
	dead := fmt.Sprintf("tokex %d %s %s\n", deadPid, "12345", bootID())
	reused := fmt.Sprintf("tokex %d %s %s\n", os.Getpid(), "1", bootID()) // our pid, another start time
	oldBoot := fmt.Sprintf("tokex %d %s %s\n", os.Getpid(), startTime(os.Getpid()), "another-boot")

	gone := mk("tokex-embedded-1", dead)
	reusedPid := mk("tokex-embedded-2", reused)
	rebooted := mk("tokex-embedded-3", oldBoot)
	running := mk("tokex-embedded-4", self())
	unmarked := mk("tokex-embedded-5", "")
	foreign := mk("tokex-embedded-6", "not ours at all")
	other := mk("other-prefix-1", dead)
	target := mk("target", dead)
	_ = os.Symlink(target, filepath.Join(parent, "tokex-embedded-link"))

	removed, err := Sweep(parent, "tokex-embedded-", "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{gone: true, reusedPid: true, rebooted: true}
	if len(removed) != len(want) {
		t.Errorf("removed %v", removed)
	}
	for _, d := range removed {
		if !want[d] {
			t.Errorf("removed %s", d)
		}
	}
	for d := range want {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s is still there", d)
		}
	}
	for _, d := range []string{running, unmarked, foreign, other, target} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed", d)
		}
	}
}

// A seal holds for the data it was made for, under this user's key only.
func TestSeal(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	data := []byte("target:\n  url: https://as.example/token\n")
	seal, err := Seal(data)
	if err != nil || !Sealed(data, seal) {
		t.Fatalf("%q %v", seal, err)
	}
	edited := []byte("target:\n  url: https://evil.example/token\n")
	for name, c := range map[string]struct {
		data []byte
		seal string
	}{
		"edited":   {edited, seal},
		"no seal":  {data, ""},
		"not hex":  {data, "hmac-sha256:zz"},
		"a prefix": {data, seal[:len(seal)-2]},
	} {
		if Sealed(c.data, c.seal) {
			t.Errorf("%s: sealed", name)
		}
	}
	t.Setenv("TOKEX_HOME", t.TempDir()) // another user, another machine
	if Sealed(data, seal) {
		t.Error("sealed under another key")
	}
}
