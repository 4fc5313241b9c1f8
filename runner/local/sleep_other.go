//go:build !linux

package local

func newSleeper(<-chan struct{}) sleeper { return newTimerSleeper() }
