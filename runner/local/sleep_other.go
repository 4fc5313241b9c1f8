//go:build !linux

package local

import (
	"context"
	"time"
)

type sleeper struct{}

func newSleeper() sleeper { return sleeper{} }

func (sleeper) until(ctx context.Context, at time.Time) {
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
