package local

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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
