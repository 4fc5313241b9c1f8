package local

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/tokex-dev/tokex/runner/config"
)

// h1Client sends an agent's exchanges over HTTP/1.1 keep-alive connections
// of its own: one write of pre-built request bytes, one read of the
// response into a reused buffer, no goroutine per connection. net/http's
// client spends twice the CPU per request on its connection goroutines,
// header maps and channels (bench/README.md). It serves plain http:// and
// https:// without HTTP/2; a target that may negotiate HTTP/2 uses net/http.
type h1Client struct {
	addr    string      // host:port to dial
	tls     *tls.Config // nil: plain TCP
	timeout time.Duration
	maxIdle int
	// idleFor is how long a connection may sit idle and still be reused
	// (target.keep_alive_idle); an older one is closed, not sent on.
	idleFor time.Duration
	// dials hears of each connection made (the run's Connector); nil: none.
	dials *dialWatch
	agent int // the agent whose client this is

	mu    sync.Mutex
	idle  []*h1Conn            // most recently used last
	live  map[*h1Conn]struct{} // every open connection, idle or in use
	watch *h1Watch             // on the context requests last used
}

// h1Watch is one context.AfterFunc shared by the requests of one context (a
// run's): when it ends, it sets a past deadline on their connections. One
// per request cost 4-5 µs (the parent context's mutex and children map).
type h1Watch struct {
	done <-chan struct{}
	stop func() bool
	n    int // requests under way with it
}

type h1Conn struct {
	c    net.Conn
	br   *bufio.Reader
	body []byte
	line []byte
	w    *h1Watch // the watch of the request using it; nil when idle
	// sent is when its latest request was sent: its idle time counts from
	// there, a little longer than the server's (from its response).
	sent time.Time
	// serverIdle is how long it may sit idle by the server's Keep-Alive:
	// timeout=N, less a margin (keepAliveIdle); 0: the server did not say.
	serverIdle time.Duration
}

// aborted is the deadline that unblocks a request whose context ended.
var aborted = time.Unix(1, 0)

// maxResponseHeader bounds a response's status line and headers.
const maxResponseHeader = 1 << 20

// maxResponseBody is how much of a response body is read, as before with
// net/http (io.LimitReader); a longer body costs the connection.
const maxResponseBody = 1 << 20

// newH1Client returns a client for u, or nil when u needs net/http (HTTP/2
// may be negotiated, or the scheme is not http/https).
func newH1Client(u *url.URL, tlsCfg *tls.Config, http2 bool, timeout time.Duration, maxIdle int) *h1Client {
	h := &h1Client{timeout: timeout, maxIdle: max(maxIdle, 1), idleFor: config.DefaultKeepAliveIdle, live: map[*h1Conn]struct{}{}}
	port := u.Port()
	switch {
	case u.Scheme == "http":
		if port == "" {
			port = "80"
		}
	case u.Scheme == "https" && !http2:
		if port == "" {
			port = "443"
		}
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if tlsCfg != nil {
			cfg = tlsCfg.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname()
		}
		cfg.NextProtos = []string{"http/1.1"}
		h.tls = cfg
	default:
		return nil
	}
	h.addr = net.JoinHostPort(u.Hostname(), port)
	return h
}

// requestHead is the request line and headers before and after
// Content-Length's value, in net/http's order and spelling, so servers see
// the bytes they saw from net/http.
func requestHead(u *url.URL, headers [][2]string) (pre, post []byte) {
	pre = []byte("POST " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: ")
	post = []byte("\r\n")
	for _, h := range headers { // sorted by name, as net/http writes them
		post = append(post, h[0]+": "+h[1]+"\r\n"...)
	}
	return pre, append(post, "\r\n"...)
}

// do sends req (complete request bytes) and hands the status and up to
// maxResponseBody bytes of body to handle, valid until the connection is
// returned to the pool (handle copies what it keeps); it returns the
// status.
//
// Keep-alive races are tokex's, not the server's: a connection idle longer
// than idleFor, or than the server said it keeps one (Keep-Alive:
// timeout=N), is closed instead of reused, one the server said it closes
// (Connection: close) is not pooled, and a request that fails on a reused
// connection because the server closed it, before any byte of an answer,
// is sent once more on a new connection (retried), as net/http does for
// requests it may replay. The connections idle since before the closed one
// are closed with it.
func (h *h1Client) do(ctx context.Context, req []byte, handle func(status int, body []byte)) (status int, retried bool, err error) {
	for attempt := 0; ; attempt++ {
		now := time.Now()
		c, reused, err := h.get(ctx, now, attempt > 0)
		if err != nil {
			return 0, attempt > 0, err
		}
		if !reused {
			now = time.Now() // after the dial
		}
		idleSince := c.sent
		status, body, keep, got, err := h.exchange(ctx, c, req, now)
		if err == nil {
			handle(status, body)
		}
		if err != nil || !keep {
			h.drop(c)
		} else {
			h.put(c)
		}
		if err != nil && reused && !got && attempt == 0 && ctx.Err() == nil && closedByPeer(err) {
			h.retire(idleSince)
			continue
		}
		return status, attempt > 0, err
	}
}

func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// get returns the most recently used idle connection that may still be
// reused at now, else (or when fresh) a new one, and whether it was
// reused. Idle connections found too old on the way are closed.
func (h *h1Client) get(ctx context.Context, now time.Time, fresh bool) (*h1Conn, bool, error) {
	h.mu.Lock()
	w := h.watchLocked(ctx)
	var c *h1Conn
	var old []*h1Conn
	for !fresh && c == nil && len(h.idle) > 0 {
		n := len(h.idle)
		c = h.idle[n-1]
		h.idle = h.idle[:n-1]
		if !h.reusable(c, now) {
			old, c = append(old, c), nil
		}
	}
	for _, o := range old {
		delete(h.live, o)
	}
	if c != nil {
		c.w = w
	}
	h.mu.Unlock()
	for _, o := range old {
		_ = o.c.Close()
	}
	if c != nil {
		return c, true, nil
	}
	nc, err := h.dial(ctx)
	if err == nil {
		h.dials.dialed(h.agent, nc)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		if w != nil {
			w.n--
		}
		return nil, false, err
	}
	c = &h1Conn{c: nc, br: bufio.NewReaderSize(nc, 4096), w: w, sent: time.Now()}
	h.live[c] = struct{}{}
	return c, false, nil
}

// reusable reports whether idle connection c may be sent on at now.
func (h *h1Client) reusable(c *h1Conn, now time.Time) bool {
	limit := h.idleFor
	if c.serverIdle > 0 && c.serverIdle < limit {
		limit = c.serverIdle
	}
	return now.Sub(c.sent) < limit
}

// retire closes the idle connections last sent on at or before t: the
// server closed one of them, and keeps the others no longer.
func (h *h1Client) retire(t time.Time) {
	h.mu.Lock()
	var old []*h1Conn
	kept := h.idle[:0]
	for _, c := range h.idle {
		if c.sent.After(t) {
			kept = append(kept, c)
			continue
		}
		old = append(old, c)
		delete(h.live, c)
	}
	clear(h.idle[len(kept):])
	h.idle = kept
	h.mu.Unlock()
	for _, c := range old {
		_ = c.c.Close()
	}
}

func (h *h1Client) dial(ctx context.Context) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if h.timeout > 0 {
		dctx, cancel = context.WithTimeout(dctx, h.timeout)
		defer cancel()
	}
	d := net.Dialer{KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(dctx, "tcp", h.addr)
	if err != nil {
		return nil, err
	}
	if h.tls != nil {
		tc := tls.Client(nc, h.tls)
		if err := tc.HandshakeContext(dctx); err != nil {
			_ = nc.Close()
			return nil, err
		}
		nc = tc
	}
	return nc, nil
}

// watchLocked counts a request of ctx under the client's watch, first
// moving the watch to ctx if no request of another context is under way.
// It returns nil when ctx never ends, or when another context's requests
// hold the watch (the request then watches ctx on its own).
func (h *h1Client) watchLocked(ctx context.Context) *h1Watch {
	done := ctx.Done()
	if done == nil {
		return nil
	}
	w := h.watch
	if w != nil && w.done == done {
		w.n++
		return w
	}
	if w != nil && w.n > 0 {
		return nil
	}
	if w != nil {
		w.stop()
	}
	w = &h1Watch{done: done, n: 1}
	w.stop = context.AfterFunc(ctx, func() { h.abort(w) })
	h.watch = w
	return w
}

// abort unblocks the requests under way with w, whose context has ended.
func (h *h1Client) abort(w *h1Watch) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.live {
		if c.w == w {
			_ = c.c.SetDeadline(aborted)
		}
	}
}

// releaseLocked ends c's request under its watch.
func (c *h1Conn) releaseLocked() {
	if c.w != nil {
		c.w.n--
		c.w = nil
	}
}

func (h *h1Client) put(c *h1Conn) {
	h.mu.Lock()
	c.releaseLocked()
	if len(h.idle) < h.maxIdle {
		h.idle = append(h.idle, c)
		c = nil
	} else {
		delete(h.live, c)
	}
	h.mu.Unlock()
	if c != nil {
		_ = c.c.Close()
	}
}

// drop closes a connection taken by get.
func (h *h1Client) drop(c *h1Conn) {
	h.mu.Lock()
	c.releaseLocked()
	delete(h.live, c)
	h.mu.Unlock()
	_ = c.c.Close()
}

// close drops the idle connections.
func (h *h1Client) close() {
	h.mu.Lock()
	idle := h.idle
	h.idle = nil
	for _, c := range idle {
		delete(h.live, c)
	}
	h.mu.Unlock()
	for _, c := range idle {
		_ = c.c.Close()
	}
}

// exchange writes req and reads one response. got reports whether any byte
// of a response arrived.
func (h *h1Client) exchange(ctx context.Context, c *h1Conn, req []byte, now time.Time) (status int, body []byte, keep, got bool, err error) {
	c.sent = now
	if h.timeout > 0 {
		_ = c.c.SetDeadline(now.Add(h.timeout))
	} else {
		_ = c.c.SetDeadline(time.Time{})
	}
	if c.w == nil && ctx.Done() != nil { // not under the client's watch
		stop := context.AfterFunc(ctx, func() { _ = c.c.SetDeadline(aborted) })
		defer stop()
	}
	// The watch sets its past deadline after ctx ended; if that came before
	// the deadline above, ctx has ended by now.
	if ctx.Err() != nil {
		_ = c.c.SetDeadline(aborted)
	}
	defer func() {
		if err != nil {
			err = h.explain(ctx, err)
		}
	}()
	if _, err = c.c.Write(req); err != nil {
		return 0, nil, false, false, err
	}
	if _, err = c.br.Peek(1); err != nil {
		return 0, nil, false, false, err
	}
	status, keep, length, chunked, err := c.readHead()
	if err != nil {
		return 0, nil, false, true, err
	}
	if status == 204 || status == 304 || status == 101 {
		return status, nil, keep && status != 101, true, nil
	}
	body, keep, err = c.readBody(length, chunked, keep)
	return status, body, keep, true, err // the status also with a body error, as net/http gives it
}

// explain says why an exchange on an established connection failed: a
// failure once ctx has ended is put down to it, and a timeout to a server
// that accepted the connection but did not answer in time (slow, not
// unreachable), in the same words for every connection, so that a run
// counts one kind of error.
func (h *h1Client) explain(ctx context.Context, err error) error {
	var ne net.Error
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%w (%w)", context.Cause(ctx), err)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("no complete response within request.timeout %s on an established connection: %w", h.timeout, os.ErrDeadlineExceeded)
	}
	return err
}

// readHead reads the status line and headers, skipping 1xx responses.
func (c *h1Conn) readHead() (status int, keep bool, length int64, chunked bool, err error) {
	total := 0
	for {
		line, err := c.readLine(&total)
		if err != nil {
			return 0, false, 0, false, err
		}
		proto, status, err := statusLine(line)
		if err != nil {
			return 0, false, 0, false, err
		}
		keep, length, chunked = bytes.Equal(proto, []byte("HTTP/1.1")), -1, false
		for {
			line, err := c.readLine(&total)
			if err != nil {
				return 0, false, 0, false, err
			}
			if len(line) == 0 {
				break
			}
			name, value, ok := bytes.Cut(line, []byte(":"))
			if !ok {
				return 0, false, 0, false, fmt.Errorf("malformed MIME header line: %q", truncate(line))
			}
			value = bytes.TrimSpace(value)
			switch {
			case len(name) == 14 && bytes.EqualFold(name, []byte("Content-Length")):
				n, perr := strconv.ParseInt(string(value), 10, 64)
				if perr != nil || n < 0 || (length >= 0 && n != length) {
					return 0, false, 0, false, fmt.Errorf("bad Content-Length %q", truncate(value))
				}
				length = n
			case len(name) == 17 && bytes.EqualFold(name, []byte("Transfer-Encoding")):
				if !bytes.EqualFold(value, []byte("chunked")) {
					return 0, false, 0, false, fmt.Errorf("unsupported transfer encoding %q", truncate(value))
				}
				chunked = true
			case len(name) == 10 && bytes.EqualFold(name, []byte("Connection")):
				if bytes.Contains(bytes.ToLower(value), []byte("close")) {
					keep = false
				}
			case len(name) == 10 && bytes.EqualFold(name, []byte("Keep-Alive")):
				if n, ok := keepAliveTimeout(value); ok {
					c.serverIdle = keepAliveIdle(n)
					keep = keep && c.serverIdle > 0
				}
			}
		}
		if status >= 200 || status == 101 || status < 100 {
			return status, keep, length, chunked, nil
		}
	}
}

// statusLine parses "HTTP/1.x NNN reason", failing with net/http's words.
func statusLine(line []byte) (proto []byte, status int, err error) {
	proto, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return nil, 0, fmt.Errorf("malformed HTTP response %q", line)
	}
	code, _, _ := bytes.Cut(bytes.TrimLeft(rest, " "), []byte(" "))
	status, err = strconv.Atoi(string(code))
	if len(code) != 3 || err != nil || status < 0 {
		return nil, 0, fmt.Errorf("malformed HTTP status code %q", code)
	}
	if !bytes.Equal(proto, []byte("HTTP/1.1")) && !bytes.Equal(proto, []byte("HTTP/1.0")) {
		return nil, 0, fmt.Errorf("malformed HTTP version %q", proto)
	}
	return proto, status, nil
}

// readLine returns one line without its CRLF, bounded by maxResponseHeader
// over the whole head; the slice is valid until the next read.
func (c *h1Conn) readLine(total *int) ([]byte, error) {
	c.line = c.line[:0]
	for {
		frag, err := c.br.ReadSlice('\n')
		*total += len(frag)
		if *total > maxResponseHeader {
			return nil, errors.New("response headers exceed 1 MiB")
		}
		if err == nil {
			var line []byte
			if len(c.line) == 0 {
				line = frag
			} else {
				c.line = append(c.line, frag...)
				line = c.line
			}
			line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
			return line, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		c.line = append(c.line, frag...)
	}
}

// readBody reads up to maxResponseBody bytes of the body into c.body.
func (c *h1Conn) readBody(length int64, chunked, keep bool) ([]byte, bool, error) {
	var r io.Reader
	switch {
	case chunked:
		r = httputil.NewChunkedReader(c.br)
	case length >= 0:
		if length > maxResponseBody {
			keep = false
		}
		r = io.LimitReader(c.br, min(length, maxResponseBody))
	default: // until the server closes the connection
		r, keep = c.br, false
	}
	b := c.body[:0]
	for len(b) < maxResponseBody {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(cap(b), maxResponseBody)])
		b = b[:len(b)+n]
		if err == io.EOF {
			c.body = b
			if length >= 0 && int64(len(b)) < min(length, maxResponseBody) {
				return b, false, io.ErrUnexpectedEOF
			}
			if chunked {
				return b, keep, c.skipTrailers()
			}
			return b, keep, nil
		}
		if err != nil {
			return b, false, err
		}
	}
	c.body = b
	if chunked {
		keep = false // the rest of the body was not read
	}
	return b, keep, nil
}

// skipTrailers reads a chunked body's trailer section up to its empty line.
func (c *h1Conn) skipTrailers() error {
	total := 0
	for {
		line, err := c.readLine(&total)
		if err != nil || len(line) == 0 {
			return err
		}
	}
}

func truncate(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

// maxKeepAliveSeconds bounds the timeout a server may announce.
const maxKeepAliveSeconds = 86400

// keepAliveTimeout is the timeout parameter of a Keep-Alive response
// header ("timeout=5, max=1000"), in whole seconds (at most a day); ok is
// false when the value has none, or a malformed one. It allocates nothing.
func keepAliveTimeout(value []byte) (seconds int64, ok bool) {
	for len(value) > 0 {
		var param []byte
		param, value, _ = bytes.Cut(value, []byte(","))
		name, v, found := bytes.Cut(param, []byte("="))
		if !found || !bytes.EqualFold(bytes.TrimSpace(name), []byte("timeout")) {
			continue
		}
		v = bytes.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		if len(v) == 0 {
			return 0, false
		}
		for _, d := range v {
			if d < '0' || d > '9' {
				return 0, false
			}
			seconds = min(seconds*10+int64(d-'0'), maxKeepAliveSeconds)
		}
		return seconds, true
	}
	return 0, false
}

// keepAliveIdle is how long tokex reuses an idle connection the server
// keeps for n seconds: a second less (half of it below 2 s), so that no
// request goes out as the server closes it; 0 for n = 0 (not at all).
func keepAliveIdle(n int64) time.Duration {
	d := time.Duration(n) * time.Second
	return d - min(time.Second, d/2)
}
