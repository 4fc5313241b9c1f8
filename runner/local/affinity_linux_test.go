package local

import (
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

// TestWithAffinityPinsTheChildOnly (issue 28 item 3): an engine started
// under withAffinity runs on its CPU set from its start, tokex's own
// threads keep theirs, and the child survives the start (its parent-death
// signal follows the thread that forked it, which must not exit); pin
// moves a running process.
func TestWithAffinityPinsTheChildOnly(t *testing.T) {
	all := allowedCPUs()
	if len(all) < 2 {
		t.Skipf("pinning needs two CPUs, this process may use %v", all)
	}
	last := []int{all[len(all)-1]}
	var cmd *exec.Cmd
	err := withAffinity(last, func() error {
		cmd = exec.Command("sleep", "5")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		return cmd.Start()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if got := affinityOf(cmd.Process.Pid); !slices.Equal(got, last) {
		t.Errorf("child on %v, want %v", got, last)
	}
	for range 20 { // any thread of ours, as the scheduler hands them out
		if got := allowedCPUs(); !slices.Equal(got, all) {
			t.Fatalf("tokex itself now on %v, was %v", got, all)
		}
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the child died with the forking thread: %v", err)
	}
	first := []int{all[0]}
	if err := pin(cmd.Process.Pid, first); err != nil {
		t.Fatal(err)
	}
	if got := affinityOf(cmd.Process.Pid); !slices.Equal(got, first) {
		t.Errorf("pinned child on %v, want %v", got, first)
	}
}

// TestCPUSets: engines split the CPUs evenly, or share them unpinned when
// there are fewer CPUs than engines, said so.
func TestCPUSets(t *testing.T) {
	all := allowedCPUs()
	if len(all) == 0 {
		t.Skip("sched_getaffinity says nothing here")
	}
	sets, note := cpuSets(len(all))
	if len(sets) != len(all) || note == "" {
		t.Fatalf("%d engines on %d CPUs: %v (%s)", len(all), len(all), sets, note)
	}
	for i, s := range sets {
		if len(s) != 1 || s[0] != all[i] {
			t.Errorf("engine %d on %v", i, s)
		}
	}
	if sets, note := cpuSets(len(all) + 1); sets != nil || note == "" {
		t.Errorf("more engines than CPUs pinned: %v (%s)", sets, note)
	}
}
