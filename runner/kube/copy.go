package kube

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/k6"
)

// podExec runs cmd in an agent Pod's k6 container with its stdout to w
// (the API server's exec, or a test's).
type podExec func(ctx context.Context, namespace, pod string, cmd []string, stdout io.Writer) error

func (d *Driver) podExec() podExec {
	if d.exec != nil {
		return d.exec
	}
	return func(ctx context.Context, ns, pod string, cmd []string, stdout io.Writer) error {
		if d.RESTConfig == nil {
			return errors.New("no REST configuration for exec")
		}
		req := d.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
		// As kubectl: WebSocket, else SPDY where the WebSocket upgrade fails.
		ws, err := remotecommand.NewWebSocketExecutor(d.RESTConfig, "GET", req.URL().String())
		if err != nil {
			return err
		}
		spdy, err := remotecommand.NewSPDYExecutor(d.RESTConfig, "POST", req.URL())
		if err != nil {
			return err
		}
		ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
			return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		})
		if err != nil {
			return err
		}
		var stderr headBuffer
		if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: stdout, Stderr: &stderr}); err != nil {
			if s := strings.TrimSpace(stderr.String()); s != "" {
				return fmt.Errorf("%w: %s", err, s)
			}
			return err
		}
		return nil
	}
}

// headBuffer keeps the first KiB written to it.
type headBuffer struct{ strings.Builder }

func (h *headBuffer) Write(p []byte) (int, error) {
	if n := 1024 - h.Len(); n > 0 {
		h.Builder.Write(p[:min(n, len(p))])
	}
	return len(p), nil
}

// Bounds of one agent's evidence file, which the agent (so an adversary)
// writes: at most its plan's rows, a KiB of decompressed file per allowed
// row plus 16 MiB for k6's own lines and summary, both before and after
// decompression (a gzip bomb stops there); lines of at most 64 KiB, at
// most two per allowed row plus 100,000 (a flood of empty lines stops there).
const (
	fileBytesPerRow = 1 << 10
	fileBytesExtra  = 16 << 20
	maxFileLine     = 64 << 10
	maxFileOther    = 100_000 // lines besides two per allowed row
	copyTries       = 3
	copyParallel    = 8
)

// fileError says an error is the file's, unless the exec stream failed.
func fileError(err error) error {
	if errors.As(err, new(execError)) {
		return err
	}
	return fmt.Errorf("evidence file: %w", err)
}

// execError marks a failure of the exec stream itself (worth a retry), not
// of the file it carried.
type execError struct{ err error }

func (e execError) Error() string { return "exec: " + e.err.Error() }
func (e execError) Unwrap() error { return e.err }

// copyOut copies an agent's evidence file once k6 has ended (its log said
// fileMarker): every request line the log stream did not deliver becomes a
// row of the evidence. Then it touches "copied" so the Pod ends, copied or
// not. A failed copy leaves the stream's rows as the evidence; the
// reconciliation with k6's summary flags what they lack.
func (r *kubeRun) copyOut(ctx context.Context, ps *podState) {
	ps.mu.Lock()
	tried := ps.copyTried
	ps.copyTried = true
	ps.mu.Unlock()
	if tried {
		return
	}
	select {
	case r.copies <- struct{}{}:
		defer func() { <-r.copies }()
	case <-ctx.Done():
		return
	}
	exec := r.d.podExec()
	var added int
	var err error
	for try := 1; try <= copyTries; try++ {
		var n int
		n, err = r.copyOnce(ctx, exec, ps)
		added += n
		if err == nil || !errors.As(err, new(execError)) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(try) * 200 * time.Millisecond)
	}
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	terr := exec(tctx, r.d.Namespace, ps.name, []string{"touch", copiedFile}, io.Discard)
	cancel()
	if err != nil {
		r.d.log(r.out, "warn", fmt.Sprintf("agent %d (%s): evidence file not copied: %v; its log's rows are the evidence", ps.index, ps.name, err))
	} else {
		r.d.log(r.out, "info", fmt.Sprintf("agent %d: evidence file copied; it held %d request line(s) the log stream had not delivered", ps.index, added))
	}
	if terr != nil {
		r.d.log(r.out, "warn", fmt.Sprintf("agent %d (%s): cannot tell it the copy is done (%v); it waits up to %d s", ps.index, ps.name, terr, copyWaitS))
	}
}

// copyOnce streams the file through exec cat into mergeFile.
func (r *kubeRun) copyOnce(ctx context.Context, exec podExec, ps *podState) (int, error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := exec(cctx, r.d.Namespace, ps.name, []string{"cat", evidenceFile}, pw); err != nil {
			pw.CloseWithError(execError{err})
			return
		}
		pw.Close()
	}()
	added, err := r.mergeFile(ps, pr)
	cancel()
	pr.CloseWithError(errors.New("copy stopped"))
	<-done
	return added, err
}

// capReader fails once more than left bytes are read through it.
type capReader struct {
	r    io.Reader
	left int64
	what string
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("more than the plan allows (%s)", c.what)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// mergeFile reads an agent's evidence file (gzip, k6's output lines) and
// files as rows, evidence only, the request lines the log stream did not
// deliver: per phase and slot, the file's lines beyond the stream's count.
// Re-reading a file adds nothing twice. Bounded (see fileBytesPerRow); an
// error says what was wrong, rows filed before it stay.
func (r *kubeRun) mergeFile(ps *podState, rd io.Reader) (added int, err error) {
	maxRows := r.planned(stats.Warmup) + r.planned(stats.Measured) + 2
	limit := int64(maxRows)*fileBytesPerRow + fileBytesExtra
	zr, err := gzip.NewReader(&capReader{r: rd, left: limit, what: fmt.Sprintf("%d MiB compressed", limit>>20)})
	if err != nil {
		return 0, fileError(err)
	}
	sc := bufio.NewScanner(&capReader{r: zr, left: limit, what: fmt.Sprintf("%d MiB decompressed", limit>>20)})
	sc.Buffer(make([]byte, 0, 64<<10), maxFileLine)
	file := map[stats.Phase]*phaseSlots{}
	var summary strings.Builder
	rows, lines := 0, 0
	for sc.Scan() {
		if lines++; lines > 2*maxRows+maxFileOther {
			return added, fmt.Errorf("evidence file: more than the %d lines the plan allows", 2*maxRows+maxFileOther)
		}
		l, ok, perr := k6.ParseLine(sc.Text())
		switch {
		case !ok:
			if summary.Len()+len(sc.Bytes()) < maxSummaryBytes {
				summary.Write(sc.Bytes())
				summary.WriteByte('\n')
			}
			continue
		case perr != nil:
			continue // the stream's copy of it was counted as malformed
		}
		if rows++; rows > maxRows {
			return added, fmt.Errorf("evidence file: more than the %d request lines the plan allows", maxRows)
		}
		fs := file[l.Phase]
		if fs == nil {
			fs = newPhaseSlots(r.planned(l.Phase))
			file[l.Phase] = fs
		}
		fs.mark(l.Seq, 1)
		ps.mu.Lock()
		have := r.phaseSlots(ps, l.Phase).lines(l.Seq)
		ps.mu.Unlock()
		if fs.lines(l.Seq) > have {
			r.row(ps, &l, false)
			added++
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("a line longer than %d KiB", maxFileLine>>10)
		}
		return added, fileError(err)
	}
	if !ps.hasSummary() {
		ps.mu.Lock()
		ps.summary.Reset()
		ps.summary.WriteString(summary.String())
		ps.mu.Unlock()
	}
	return added, nil
}
