package local

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/exchange"
)

// stallServer answers every request with okResponse, or, while stall is
// set, never: the connection stays open until the client closes it.
type stallServer struct {
	ln    net.Listener
	stall atomic.Bool
	reqs  atomic.Int64
	conns atomic.Int64
	mu    sync.Mutex
	open  []net.Conn
}

func newStallServer(t *testing.T) *stallServer {
	t.Helper()
	s := &stallServer{ln: listenLoopback(t)}
	acceptEach(s.ln, func(c net.Conn) {
		s.conns.Add(1)
		s.mu.Lock()
		s.open = append(s.open, c)
		s.mu.Unlock()
		go s.serve(c)
	})
	t.Cleanup(func() {
		_ = s.ln.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.open {
			_ = c.Close()
		}
	})
	return s
}

func (s *stallServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		s.reqs.Add(1)
		if !s.stall.Load() {
			_, _ = io.WriteString(c, okResponse(""))
		}
	}
}

// client is a tokex HTTP/1.1 client of s whose own timeout is far off:
// only a context can end its requests early.
func (s *stallServer) client(t *testing.T, maxIdle int) *h1Client {
	t.Helper()
	u, _ := url.Parse("http://" + s.ln.Addr().String() + "/t")
	h := newH1Client(u, nil, false, time.Minute, maxIdle)
	t.Cleanup(h.close)
	return h
}

var stallReq = []byte("POST /t HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab")

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited 5 s for %s", what)
		}
	}
}

// doAsync sends one request with ctx; its error comes on the channel.
func doAsync(h *h1Client, ctx context.Context) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, _, err := h.do(ctx, stallReq, func(int, []byte) {})
		ch <- err
	}()
	return ch
}

// wantAborted checks that err arrives within 5 s and is wrapped as a
// cancelled request's: the cause, then the transport's error. A dial
// (wrapped false) fails with the dialer's own error, as before.
func wantAborted(t *testing.T, ctx context.Context, cause error, wrapped bool, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		if exchange.ClassifyErr(ctx, err) != exchange.OutcomeAborted ||
			wrapped && (!errors.Is(err, cause) || !strings.HasPrefix(err.Error(), cause.Error()+" (")) {
			t.Errorf("err %v, want %q wrapping the transport's error", err, cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a request of an ended context still blocks after 5 s")
	}
}

// checkBooks: no connection is left counted as in use, and every open
// connection is idle.
func checkBooks(t *testing.T, h *h1Client, idle int) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.idle) != idle || len(h.live) != idle || (h.watch != nil && h.watch.n != 0) {
		t.Errorf("idle %d, open %d (want %d each); watch %+v", len(h.idle), len(h.live), idle, h.watch)
	}
}

// TestH1CancelUnblocks: when the context ends, requests in flight on a
// server that never answers return at once, wrapped with the cause, as do
// requests sent later with it (which send nothing); connections idle at
// the cancel serve the next context.
func TestH1CancelUnblocks(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		pooled, stalled, after int
	}{
		{"in flight on new connections", 0, 3, 0},
		{"in flight on pooled connections, others idle", 4, 2, 0},
		{"in flight on pooled and new connections", 2, 3, 0},
		{"sent after the cancel, on pooled connections", 3, 0, 2},
		{"sent after the cancel, on a new connection", 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStallServer(t)
			h := s.client(t, 8)
			var pool []*h1Conn
			for range tc.pooled {
				c, _, err := h.get(context.Background(), time.Now(), false)
				if err != nil {
					t.Fatal(err)
				}
				pool = append(pool, c)
			}
			for _, c := range pool {
				h.put(c)
			}
			s.stall.Store(true)
			cause := errors.New("run stopped")
			ctx, cancel := context.WithCancelCause(context.Background())
			var chs []<-chan error
			for range tc.stalled {
				chs = append(chs, doAsync(h, ctx))
			}
			waitFor(t, "the stalled requests", func() bool { return s.reqs.Load() == int64(tc.stalled) })
			cancel(cause)
			for _, ch := range chs {
				wantAborted(t, ctx, cause, true, ch)
			}
			for i := range tc.after {
				wantAborted(t, ctx, cause, i < tc.pooled-tc.stalled, doAsync(h, ctx))
			}
			if n := s.reqs.Load(); n != int64(tc.stalled) {
				t.Errorf("the server got %d requests, want %d: one was sent after the cancel", n, tc.stalled)
			}
			idle := max(tc.pooled-tc.stalled-tc.after, 0)
			checkBooks(t, h, idle)

			s.stall.Store(false)
			conns := s.conns.Load()
			ctx2, cancel2 := context.WithCancel(context.Background())
			defer cancel2()
			for i := range idle + 1 {
				if _, _, err := h.do(ctx2, stallReq, func(int, []byte) {}); err != nil {
					t.Fatalf("request %d of the next context: %v", i, err)
				}
			}
			if n := s.conns.Load() - conns; idle > 0 && n != 0 {
				t.Errorf("the next context dialled %d connections with %d idle", n, idle)
			}
			checkBooks(t, h, max(idle, 1))
		})
	}
}

// TestH1CancelOneOfTwoContexts: requests of two contexts at once (one under
// the client's watch, the other watching its own): ending either unblocks
// only its own.
func TestH1CancelOneOfTwoContexts(t *testing.T) {
	for _, watchedFirst := range []bool{true, false} {
		t.Run("watched first "+map[bool]string{true: "yes", false: "no"}[watchedFirst], func(t *testing.T) {
			s := newStallServer(t)
			s.stall.Store(true)
			h := s.client(t, 8)
			causes := []error{errors.New("a ended"), errors.New("b ended")}
			var ctxs []context.Context
			var cancels []context.CancelCauseFunc
			var chs []<-chan error
			for i := range 2 {
				ctx, cancel := context.WithCancelCause(context.Background())
				ctxs, cancels = append(ctxs, ctx), append(cancels, cancel)
				chs = append(chs, doAsync(h, ctx))
				waitFor(t, "the stalled request", func() bool { return s.reqs.Load() == int64(i+1) })
			}
			h.mu.Lock()
			watched := h.watch != nil && h.watch.done == ctxs[0].Done()
			h.mu.Unlock()
			if !watched {
				t.Error("the first context is not under the client's watch")
			}
			first, second := 0, 1
			if !watchedFirst {
				first, second = 1, 0
			}
			cancels[first](causes[first])
			wantAborted(t, ctxs[first], causes[first], true, chs[first])
			select {
			case err := <-chs[second]:
				t.Fatalf("ending one context ended the other's request: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
			cancels[second](causes[second])
			wantAborted(t, ctxs[second], causes[second], true, chs[second])
			checkBooks(t, h, 0)
		})
	}
}

// TestH1RunAfterCancelledRun: a run cancelled with requests in flight on a
// stalled server, then a run with a new context: all of its exchanges
// succeed.
func TestH1RunAfterCancelledRun(t *testing.T) {
	s := newStallServer(t)
	s.stall.Store(true)
	g := newGen(t, "http://"+s.ln.Addr().String()+"/as/token.oauth2", 1, 3)
	p := event.PlannedRun{ID: "r", TargetRPS: 50, Duration: 200 * time.Millisecond, Agents: 1}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for end := time.Now().Add(5 * time.Second); s.reqs.Load() < 3 && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	rec := &recorder{}
	g.Run(ctx, p, time.Now(), rec.rec)
	n := map[exchange.Outcome]int{}
	for _, r := range rec.rows {
		n[r.Outcome]++
	}
	// (The arrival whose wait the cancel ended is still handed out.)
	if n[exchange.OutcomeAborted] < 3 || n[exchange.OutcomeAborted]+n[exchange.OutcomeDropped] != len(rec.rows) || s.reqs.Load() != 3 {
		t.Errorf("cancelled run: %v; the server got %d requests, want 3", n, s.reqs.Load())
	}
	s.stall.Store(false)
	for _, ctx := range []context.Context{context.Background(), t.Context()} {
		rec = &recorder{}
		g.Run(ctx, p, time.Now(), rec.rec)
		ok := 0
		for _, r := range rec.rows {
			switch r.Outcome {
			case exchange.OutcomeOK:
				ok++
			case exchange.OutcomeDropped: // a loaded machine slows a response past the next arrival
			default:
				t.Fatalf("a run after the cancelled one: %+v", r)
			}
		}
		if ok == 0 {
			t.Errorf("a run after the cancelled one: no exchange succeeded of %d", len(rec.rows))
		}
		if len(rec.rows) != 10 {
			t.Errorf("%d rows, want 10", len(rec.rows))
		}
	}
}

// valueCounter counts Value calls, which context.AfterFunc makes to find
// the cancelable parent it registers with.
type valueCounter struct {
	context.Context
	n atomic.Int64
}

func (c *valueCounter) Value(key any) any {
	c.n.Add(1)
	return c.Context.Value(key)
}

// TestH1WatchesAContextOnce: requests on a pooled connection look nothing
// up in their context (context.AfterFunc does, to register with the
// cancelable parent): they share one watch; one each cost 4-5 µs.
func TestH1WatchesAContextOnce(t *testing.T) {
	s := newRawServer(t, func(int) (string, bool, time.Duration) { return okResponse(""), false, 0 })
	u, _ := url.Parse(s.url())
	h := newH1Client(u, nil, false, time.Minute, 2)
	t.Cleanup(h.close)
	for run := range 3 { // a context per run
		ctx, cancel := context.WithCancel(context.Background())
		vc := &valueCounter{Context: ctx}
		send := func() {
			if _, _, err := h.do(vc, stallReq, func(int, []byte) {}); err != nil {
				t.Fatal(err)
			}
		}
		send() // dials on the first run, registers the watch
		n0 := vc.n.Load()
		for range 40 {
			send()
		}
		if n := vc.n.Load() - n0; n != 0 {
			t.Errorf("run %d: %d context look-ups in 40 requests on a pooled connection", run, n)
		}
		cancel()
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// TestH1OpenConnsBounded: the client's set of open connections holds only
// those open, and no request stays counted under a watch.
func TestH1OpenConnsBounded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		resp     string
		parallel int
	}{
		{"keep-alive, more in flight than pooled", okResponse(""), 6},
		{"connection: close", okResponse("Connection: close\r\n"), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawServer(t, func(int) (string, bool, time.Duration) { return tc.resp, false, 0 })
			u, _ := url.Parse(s.url())
			h := newH1Client(u, nil, false, time.Minute, 2)
			t.Cleanup(h.close)
			for range 3 { // a context per run
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				for range tc.parallel {
					wg.Go(func() {
						for range 10 {
							if _, _, err := h.do(ctx, stallReq, func(int, []byte) {}); err != nil {
								t.Error(err)
							}
						}
					})
				}
				wg.Wait()
				cancel()
				h.mu.Lock()
				if len(h.live) != len(h.idle) || len(h.idle) > 2 || h.watch.n != 0 {
					t.Errorf("open %d, idle %d (at most 2), watch %+v", len(h.live), len(h.idle), h.watch)
				}
				h.mu.Unlock()
			}
			h.close()
			if n := len(h.live); n != 0 {
				t.Errorf("%d connections open after close", n)
			}
		})
	}
}
