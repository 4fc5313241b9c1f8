package kube

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// follower streams one Pod's log from start to end. A dropped stream is
// re-opened from the last timestamp seen, skipping the lines already read
// at that timestamp, so no line is lost or doubled. The stream is cancelled
// by the caller once the Pod has terminated and gone quiet: a real kubelet
// closes it, kwok and some runtimes do not.
type follower struct {
	open      logOpener
	namespace string
	pod       string
	line      func(string)
	reconnect func(error)
	lag       func(time.Duration) // each new line's lag behind its timestamp (nil: not measured)

	lastTS   time.Time
	atLastTS int          // lines read with timestamp lastTS
	lastRead atomic.Int64 // unix ns of the last line read; 0: none yet
}

// lastReadAt is when the last line was read (zero: none yet).
func (f *follower) lastReadAt() time.Time {
	ns := f.lastRead.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// run follows until ctx ends or the stream ends with the Pod terminated
// (done reports that).
func (f *follower) run(ctx context.Context, done func() bool) {
	backoff := 200 * time.Millisecond
	for ctx.Err() == nil {
		err := f.stream(ctx)
		if ctx.Err() != nil {
			return
		}
		if done() {
			// One more pass from the last timestamp catches lines written
			// between the last read and termination.
			_ = f.stream(ctx)
			return
		}
		if f.reconnect != nil {
			f.reconnect(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// catchUp reads the ended Pod's log once without following, from the last
// timestamp seen: a follow stream cancelled when the Pod went quiet may not
// have delivered every line (kwok and some runtimes hold it open without
// data), and a log read without follow returns what is left and closes.
func (f *follower) catchUp(ctx context.Context) error { return f.read(ctx, false) }

func (f *follower) stream(ctx context.Context) error { return f.read(ctx, true) }

func (f *follower) read(ctx context.Context, follow bool) error {
	opts := &corev1.PodLogOptions{Container: container, Follow: follow, Timestamps: true}
	if !f.lastTS.IsZero() {
		t := metav1.NewTime(f.lastTS)
		opts.SinceTime = &t
	}
	rc, err := f.open(ctx, f.namespace, f.pod, opts)
	if err != nil {
		return err
	}
	defer rc.Close()
	rd := bufio.NewReaderSize(rc, 64<<10)
	seenAtTS := 0
	for {
		raw, err := rd.ReadString('\n')
		if len(raw) > 0 && (err == nil || errors.Is(err, io.EOF)) {
			f.consume(strings.TrimRight(raw, "\r\n"), &seenAtTS)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// consume handles one "<RFC3339Nano timestamp> <line>" of a timestamped log.
func (f *follower) consume(raw string, seenAtTS *int) {
	ts, line, ok := strings.Cut(raw, " ")
	t, err := time.Parse(time.RFC3339Nano, ts)
	if !ok || err != nil {
		f.line(raw) // not timestamped (should not happen): keep it
		return
	}
	now := time.Now()
	f.lastRead.Store(now.UnixNano())
	switch {
	case t.Before(f.lastTS):
		return // before the resume point: already read
	case t.Equal(f.lastTS):
		*seenAtTS++
		if *seenAtTS <= f.atLastTS {
			return // already read before the reconnect
		}
		f.atLastTS = *seenAtTS
	default:
		f.lastTS, f.atLastTS, *seenAtTS = t, 1, 1
	}
	if f.lag != nil {
		f.lag(now.Sub(t))
	}
	f.line(line)
}
