//go:build !linux

package local

import "time"

func newSleeper(time.Duration) sleeper { return newTimerSleeper() }
