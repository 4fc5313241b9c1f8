//go:build !linux

package local

// Engines are pinned to CPUs on Linux only (sched_setaffinity).

func allowedCPUs() []int                             { return nil }
func withAffinity(_ []int, start func() error) error { return start() }
func pin(int, []int) error                           { return nil }
func affinityOf(int) []int                           { return nil }
