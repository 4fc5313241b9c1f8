package local

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// allowedCPUs are the CPUs tokex may run on (sched_getaffinity), in order.
func allowedCPUs() []int { return affinityOf(0) }

func cpuSet(cpus []int) *unix.CPUSet {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return &set
}

// withAffinity runs start (which forks an engine) on an OS thread pinned to
// cpus, so that the child and every thread it makes inherit the CPU set
// from its first instruction; the thread gets its own set back and returns
// to the pool (it must not exit: the child's parent-death signal follows
// the thread that forked it). Go never clones a locked thread's state into
// a new thread of its own, so tokex itself stays unpinned.
func withAffinity(cpus []int, start func() error) error {
	if len(cpus) == 0 {
		return start()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var orig unix.CPUSet
		if err := unix.SchedGetaffinity(0, &orig); err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		if err := unix.SchedSetaffinity(0, cpuSet(cpus)); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("pin to CPUs %v: %w", cpus, err)
			return
		}
		err := start()
		if rerr := unix.SchedSetaffinity(0, &orig); rerr != nil {
			errc <- err
			select {} // keep the pinned thread (and its children) alive, out of the pool
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// pin sets the CPU set of every thread of process pid (nil: none), read
// again until no new thread appeared: a thread made meanwhile inherits
// its maker's set.
func pin(pid int, cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	set := cpuSet(cpus)
	done := map[int]bool{}
	for round := 0; round < 10; round++ {
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return err
		}
		fresh := 0
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("pin thread %d to CPUs %v: %w", tid, cpus, err)
			}
			done[tid], fresh = true, fresh+1
		}
		if fresh == 0 {
			return nil
		}
	}
	return nil
}

// affinityOf is process pid's CPU set, for the record.
func affinityOf(pid int) []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil
	}
	var out []int
	for c := 0; c < len(set)*64 && len(out) < set.Count(); c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}
