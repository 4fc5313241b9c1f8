package local

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// rawServer answers every request on a connection with answer(i), the
// i-th request overall; an empty answer closes the connection unanswered.
// It records each request's bytes.
type rawServer struct {
	ln    net.Listener
	n     atomic.Int64
	conns atomic.Int64
	mu    sync.Mutex
	reqs  []string
}

func newRawServer(t *testing.T, answer func(i int) (resp string, closeAfter bool, delay time.Duration)) *rawServer {
	t.Helper()
	s := &rawServer{ln: listenLoopback(t)}
	acceptEach(s.ln, func(c net.Conn) {
		s.conns.Add(1)
		go s.serve(c, answer)
	})
	return s
}

// listenLoopback is a listener on a loopback port, closed when the test ends.
func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// acceptEach hands each connection ln accepts to accepted, on one
// goroutine, until ln is closed.
func acceptEach(ln net.Listener, accepted func(net.Conn)) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted(c)
		}
	}()
}

func (s *rawServer) serve(c net.Conn, answer func(int) (string, bool, time.Duration)) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		var raw strings.Builder
		_ = req.Header.Write(&raw)
		s.mu.Lock()
		s.reqs = append(s.reqs, req.Method+" "+req.RequestURI+" "+req.Proto+" host="+strconv.FormatBool(req.Host == s.ln.Addr().String())+"\n"+raw.String()+string(body))
		s.mu.Unlock()
		resp, closeAfter, delay := answer(int(s.n.Add(1) - 1))
		time.Sleep(delay)
		if resp == "" {
			return
		}
		if _, err := io.WriteString(c, resp); err != nil || closeAfter {
			return
		}
	}
}

func (s *rawServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() + "/as/token.oauth2" }

const okJSON = `{"access_token":"x","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer"}`

func okResponse(extra string) string {
	return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra + "Content-Length: " + strconv.Itoa(len(okJSON)) + "\r\n\r\n" + okJSON
}

// sendOne sends one exchange of agent 0 with a fixed subject token, through
// tokex's HTTP/1.1 client or (h1 false) net/http.
func sendOne(t *testing.T, g *Generator, h1 bool, ctx context.Context) stats.Request {
	t.Helper()
	a := g.Agents[0]
	if !h1 {
		saved := a.h1
		a.h1 = nil
		defer func() { a.h1 = saved }()
		if a.client == nil {
			a.client = &http.Client{Timeout: g.Timeout, CheckRedirect: exchange.NoRedirect,
				Transport: &http.Transport{DisableCompression: true}}
			t.Cleanup(a.client.CloseIdleConnections)
		}
	}
	if g.details == nil {
		g.details = &exchange.DetailSet{}
	}
	pl := &pipeline{ch: make(chan string, 1), low: make(chan struct{}, 1)}
	pl.ch <- "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln"
	var r stats.Request
	g.send(ctx, a, time.Now(), &r, pl, new([]byte))
	return r
}

// TestH1MatchesNetHTTP: for the same bytes on the wire, tokex's HTTP/1.1
// client records what net/http's did (status, outcome, detail,
// description), and sends the same request bytes.
func TestH1MatchesNetHTTP(t *testing.T) {
	long := strings.Repeat("a", 2<<20)
	cases := []struct {
		name, resp string
		want       exchange.Outcome
	}{
		{"ok", okResponse(""), exchange.OutcomeOK},
		{"chunked with trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
			strconv.FormatInt(int64(len(okJSON[:10])), 16) + "\r\n" + okJSON[:10] + "\r\n" +
			strconv.FormatInt(int64(len(okJSON[10:])), 16) + "\r\n" + okJSON[10:] + "\r\n0\r\nX-T: 1\r\n\r\n", exchange.OutcomeOK},
		{"oauth error", "HTTP/1.1 400 Bad Request\r\nContent-Length: 51\r\n\r\n" +
			`{"error":"invalid_grant","error_description":"bad"}`, exchange.OutcomeOAuthError},
		{"1.0 until close", "HTTP/1.0 200 OK\r\n\r\n" + okJSON, exchange.OutcomeOK},
		{"100 continue first", "HTTP/1.1 100 Continue\r\n\r\n" + okResponse(""), exchange.OutcomeOK},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", exchange.OutcomeHTTPError},
		{"malformed status", "HTTP/1.1 2x0 OK\r\n\r\n", exchange.OutcomeConnError},
		{"not http", "SSH-2.0-OpenSSH\r\n\r\n", exchange.OutcomeConnError},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n" + okJSON, exchange.OutcomeConnError},
		{"body over 1 MiB", "HTTP/1.1 502 Bad Gateway\r\nContent-Length: " + strconv.Itoa(len(long)) + "\r\n\r\n" + long, exchange.OutcomeHTTPError},
		{"closed unanswered", "", exchange.OutcomeConnError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got [2]stats.Request
			var reqs [2]string
			for i, h1 := range []bool{true, false} {
				s := newRawServer(t, func(int) (string, bool, time.Duration) { return c.resp, true, 0 })
				g := newGen(t, s.url(), 1, 4)
				if g.Agents[0].h1 == nil {
					t.Fatal("an http:// target does not use the HTTP/1.1 client")
				}
				got[i] = sendOne(t, g, h1, context.Background())
				got[i].SendLagUS, got[i].DurationUS = 0, 0
				// net/http names itself where tokex's client does not.
				got[i].Description = strings.TrimPrefix(got[i].Description, "net/http: HTTP/1.x transport connection broken: ")
				if r := s.requests(); len(r) == 1 {
					reqs[i] = r[0]
				}
			}
			if got[0] != got[1] {
				t.Errorf("h1 %+v\nnet/http %+v", got[0], got[1])
			}
			if got[0].Outcome != c.want {
				t.Errorf("outcome %s, want %s", got[0].Outcome, c.want)
			}
			if reqs[0] != reqs[1] || !strings.Contains(reqs[0], "host=true") {
				t.Errorf("request bytes differ:\n%s\n--- net/http:\n%s", reqs[0], reqs[1])
			}
		})
	}
}

// TestH1KeepAliveAndStaleConnections: responses on one connection follow
// each other (also after a chunked body with trailers); a pooled connection
// the server closed while idle is replaced without an error.
func TestH1KeepAliveAndStaleConnections(t *testing.T) {
	chunked := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
		strconv.FormatInt(int64(len(okJSON)), 16) + "\r\n" + okJSON + "\r\n0\r\nX-T: 1\r\n\r\n"
	s := newRawServer(t, func(i int) (string, bool, time.Duration) {
		if i%2 == 0 {
			return chunked, i == 4, 0 // the fifth request's connection closes after its answer…
		}
		return okResponse(""), false, 0
	})
	g := newGen(t, s.url(), 1, 4)
	for i := 0; i < 5; i++ {
		if r := sendOne(t, g, true, context.Background()); r.Outcome != "ok" {
			t.Fatalf("request %d: %+v", i, r)
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("%d connections for 5 keep-alive requests", n)
	}
	time.Sleep(50 * time.Millisecond) // …without saying so: the pooled one is stale
	if r := sendOne(t, g, true, context.Background()); r.Outcome != "ok" {
		t.Errorf("after the server closed the idle connection: %+v", r)
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	if n := s.n.Load(); n != 6 {
		t.Errorf("server saw %d requests, want 6 (no request sent twice)", n)
	}
}

func TestH1TimeoutAndCancel(t *testing.T) {
	s := newRawServer(t, func(int) (string, bool, time.Duration) { return okResponse(""), false, 300 * time.Millisecond })
	g := newGen(t, s.url(), 1, 4)
	g.Agents[0].h1.timeout = 50 * time.Millisecond
	if r := sendOne(t, g, true, context.Background()); r.Outcome != exchange.OutcomeTimeout {
		t.Errorf("timeout: %+v", r)
	}
	g.Agents[0].h1.timeout = 5 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if r := sendOne(t, g, true, ctx); r.Outcome != exchange.OutcomeAborted {
		t.Errorf("cancelled: %+v", r)
	}
}

func TestH1OnlyWithoutHTTP2(t *testing.T) {
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	defer ts.Close()
	for _, c := range []struct {
		url   string
		http2 bool
		h1    bool
	}{
		{"http://127.0.0.1:1/t", true, true}, {ts.URL + "/t", false, true}, {ts.URL + "/t", true, false},
	} {
		g := &Generator{URL: c.url, Agents: []*Agent{{ClientID: "a"}}}
		g.Connect(TransportOptions{TLS: ts.Client().Transport.(*http.Transport).TLSClientConfig, HTTP2: c.http2, Conns: 1})
		if (g.Agents[0].h1 != nil) != c.h1 || (g.Agents[0].client != nil) == c.h1 {
			t.Errorf("%s http2=%v: h1 %v", c.url, c.http2, g.Agents[0].h1 != nil)
		}
		if c.h1 && strings.HasPrefix(c.url, "https") {
			pl := &pipeline{ch: make(chan string, 1), low: make(chan struct{}, 1)}
			pl.ch <- "t"
			var r stats.Request
			g.details = &exchange.DetailSet{}
			g.send(context.Background(), g.Agents[0], time.Now(), &r, pl, new([]byte))
			if r.Status != 404 {
				t.Errorf("over TLS: %+v", r)
			}
		}
		g.Close()
	}
}

// TestH1RetriesOnANewConnection is issue 23 item 2: when the server has
// closed every pooled connection (its keep-alive timeout passed while they
// were idle), the request that meets the first closed one is sent again on
// a new connection, not on the next closed one (which failed it with
// "EOF", counted as the server's conn_error), and says it was retried; the
// other idle connections, as old, are closed without a request sent on them.
func TestH1RetriesOnANewConnection(t *testing.T) {
	// The first three requests are answered after 100 ms on three
	// connections, which the server then closes without saying so.
	s := newRawServer(t, func(i int) (string, bool, time.Duration) {
		if i < 3 {
			return okResponse(""), true, 100 * time.Millisecond
		}
		return okResponse(""), false, 0
	})
	u, _ := url.Parse(s.url())
	h := newH1Client(u, nil, false, 5*time.Second, 8)
	h.idleFor = time.Minute
	var dials atomic.Int64
	var w dialWatch
	w.set(func(time.Time) { dials.Add(1) })
	h.dials = &w
	t.Cleanup(h.close)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if _, retried, err := h.do(context.Background(), stallReq, func(int, []byte) {}); err != nil || retried {
				t.Errorf("retried %v, err %v", retried, err)
			}
		})
	}
	wg.Wait()
	waitFor(t, "the server to close its connections", func() bool { return s.n.Load() == 3 })
	time.Sleep(50 * time.Millisecond)
	status, retried, err := h.do(context.Background(), stallReq, func(int, []byte) {})
	if err != nil || status != 200 || !retried {
		t.Fatalf("status %d, retried %v, err %v", status, retried, err)
	}
	if n := s.conns.Load(); n != 4 {
		t.Errorf("%d connections, want 4 (three closed by the server, one new)", n)
	}
	if n := dials.Load(); n != 4 {
		t.Errorf("%d dials reported, want 4", n)
	}
	if n := s.n.Load(); n != 4 {
		t.Errorf("the server got %d requests, want 4", n)
	}
	h.mu.Lock()
	idle, open := len(h.idle), len(h.live)
	h.mu.Unlock()
	// The new one, and those of the closed ones last used after the one
	// that failed (in the order the three happened to start).
	if idle < 1 || idle > 3 || open != idle {
		t.Errorf("%d idle, %d open", idle, open)
	}
}

// TestH1RetireClosesTheOlderIdleConnections: once a pooled connection
// turns out closed by the server, those last used at or before it are
// closed too (the server keeps them no longer); the later ones stay.
func TestH1RetireClosesTheOlderIdleConnections(t *testing.T) {
	t0 := time.Unix(1000, 0)
	h := newH1Client(&url.URL{Scheme: "http", Host: "127.0.0.1:1"}, nil, false, time.Second, 8)
	var conns []*h1Conn
	for _, s := range []int{3, 1, 4, 2, 5} { // idle order is put order, not send order
		c := &h1Conn{c: &memConn{}, sent: t0.Add(time.Duration(s) * time.Second)}
		h.live[c] = struct{}{}
		h.put(c)
		conns = append(conns, c)
	}
	h.retire(t0.Add(3 * time.Second))
	if len(h.idle) != 2 || len(h.live) != 2 || h.idle[0] != conns[2] || h.idle[1] != conns[4] {
		t.Errorf("idle %v, open %d: want the two used after 3 s, in their order", h.idle, len(h.live))
	}
}

// TestH1IdleBound: an idle connection is reused while it has been idle
// less than keep_alive_idle, or than the server's Keep-Alive: timeout=N
// less a margin, whichever is shorter; an older one is closed, not sent on.
func TestH1IdleBound(t *testing.T) {
	t0 := time.Unix(1000, 0)
	h := &h1Client{idleFor: 4 * time.Second}
	for _, tc := range []struct {
		serverIdle time.Duration
		idle       time.Duration
		want       bool
	}{
		{0, 3900 * time.Millisecond, true},
		{0, 4 * time.Second, false},
		{keepAliveIdle(5), 3999 * time.Millisecond, true},
		{keepAliveIdle(5), 4 * time.Second, false},
		{keepAliveIdle(1), 499 * time.Millisecond, true},
		{keepAliveIdle(1), 500 * time.Millisecond, false},
		{keepAliveIdle(60), 3900 * time.Millisecond, true}, // the client's bound is the shorter
		{keepAliveIdle(60), 5 * time.Second, false},
	} {
		c := &h1Conn{sent: t0, serverIdle: tc.serverIdle}
		if got := h.reusable(c, t0.Add(tc.idle)); got != tc.want {
			t.Errorf("server keeps %s, idle %s: reusable %v", tc.serverIdle, tc.idle, got)
		}
	}
}

// TestH1HonoursKeepAliveHeaders: the server's Keep-Alive: timeout=N is
// kept with the connection (timeout=0 and Connection: close: not pooled),
// and a connection idle past it is replaced without a request sent on it.
func TestH1HonoursKeepAliveHeaders(t *testing.T) {
	for _, tc := range []struct {
		header     string
		serverIdle time.Duration
		pooled     bool
	}{
		{"Keep-Alive: timeout=5, max=1000\r\n", 4 * time.Second, true},
		{"Keep-Alive: timeout=1\r\n", 500 * time.Millisecond, true},
		{"Keep-Alive: max=3\r\n", 0, true},
		{"Keep-Alive: timeout=0\r\n", 0, false},
		{"Connection: close\r\nKeep-Alive: timeout=5\r\n", 4 * time.Second, false},
	} {
		t.Run(strings.TrimSpace(tc.header), func(t *testing.T) {
			s := newRawServer(t, func(int) (string, bool, time.Duration) { return okResponse(tc.header), false, 0 })
			u, _ := url.Parse(s.url())
			h := newH1Client(u, nil, false, 5*time.Second, 2)
			t.Cleanup(h.close)
			if _, _, err := h.do(context.Background(), stallReq, func(int, []byte) {}); err != nil {
				t.Fatal(err)
			}
			h.mu.Lock()
			var idle *h1Conn
			if len(h.idle) == 1 {
				idle = h.idle[0]
			}
			h.mu.Unlock()
			if (idle != nil) != tc.pooled {
				t.Fatalf("pooled %v, want %v", idle != nil, tc.pooled)
			}
			if idle == nil {
				return
			}
			if idle.serverIdle != tc.serverIdle {
				t.Errorf("server idle %s, want %s", idle.serverIdle, tc.serverIdle)
			}
			// As if it had been idle that long: it is closed, and a new one dialled.
			idle.sent = idle.sent.Add(-max(tc.serverIdle, h.idleFor))
			if _, retried, err := h.do(context.Background(), stallReq, func(int, []byte) {}); err != nil || retried {
				t.Fatalf("retried %v, err %v", retried, err)
			}
			if n := s.conns.Load(); n != 2 {
				t.Errorf("%d connections, want 2", n)
			}
			checkBooks(t, h, 1)
		})
	}
}

func TestKeepAliveTimeout(t *testing.T) {
	for _, tc := range []struct {
		value string
		n     int64
		ok    bool
	}{
		{"timeout=5", 5, true},
		{"timeout=5, max=1000", 5, true},
		{"max=100, timeout=15", 15, true},
		{" Timeout = 2 ", 2, true},
		{`timeout="7"`, 7, true},
		{"timeout=0", 0, true},
		{"timeout=99999999999999999999999", maxKeepAliveSeconds, true},
		{"max=100", 0, false},
		{"", 0, false},
		{"timeout=", 0, false},
		{"timeout=-1", 0, false},
		{"timeout=1.5", 0, false},
		{"timeout", 0, false},
		{`timeout="`, 0, false},
	} {
		n, ok := keepAliveTimeout([]byte(tc.value))
		if n != tc.n || ok != tc.ok {
			t.Errorf("%q: %d %v, want %d %v", tc.value, n, ok, tc.n, tc.ok)
		}
	}
	if a := testing.AllocsPerRun(100, func() { keepAliveTimeout([]byte("timeout=5, max=1000")) }); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

// FuzzKeepAliveTimeout: any header value gives a timeout within a day, or
// none, and "timeout=N" gives N.
func FuzzKeepAliveTimeout(f *testing.F) {
	f.Fuzz(func(t *testing.T, value []byte, n uint32) {
		got, ok := keepAliveTimeout(value)
		if got < 0 || got > maxKeepAliveSeconds || (!ok && got != 0) {
			t.Fatalf("%q: %d %v", value, got, ok)
		}
		if d := keepAliveIdle(got); d < 0 || (got > 0 && d <= 0) {
			t.Fatalf("%d s: idle %s", got, d)
		}
		want := min(int64(n), maxKeepAliveSeconds)
		if got, ok := keepAliveTimeout(fmt.Appendf(nil, "timeout=%d", n)); !ok || got != want {
			t.Fatalf("timeout=%d: %d %v", n, got, ok)
		}
	})
}
