//go:build !linux

package local

import "time"

func newSleeper(<-chan struct{}, time.Duration) sleeper { return newTimerSleeper() }
