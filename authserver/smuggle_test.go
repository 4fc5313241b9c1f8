package authserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/internal/jose"
)

// TestRequestSmugglingRefused is issue 9 item 5: a request with both
// Content-Length and Transfer-Encoding was processed with the connection
// left open, so a second request hidden in its body was answered (RFC 9112
// §6.3). Over a raw TCP connection, each case carries a smuggled GET
// /healthz: exactly one answer may come back, then the connection closes.
func TestRequestSmugglingRefused(t *testing.T) {
	f := newFixture(t, jose.ES256, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-served })

	const smuggled = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
	head := func(proto string, headers ...string) string {
		return "POST /as/token.oauth2 " + proto + "\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
			strings.Join(headers, "\r\n") + "\r\n\r\n"
	}
	chunkedEnd := "0\r\n\r\n"
	cases := []struct {
		name   string
		req    string
		status int // of the one answer
	}{
		{"CL.TE: Content-Length covers the smuggled request",
			head("HTTP/1.1", fmt.Sprintf("Content-Length: %d", len(chunkedEnd+smuggled)), "Transfer-Encoding: chunked") + chunkedEnd + smuggled, 400},
		{"TE.CL: Transfer-Encoding first",
			head("HTTP/1.1", "Transfer-Encoding: chunked", "Content-Length: 3") + chunkedEnd + smuggled, 400},
		{"TE in capitals",
			head("HTTP/1.1", "Content-Length: 5", "Transfer-Encoding: CHUNKED") + chunkedEnd + smuggled, 400},
		{"TE alone",
			head("HTTP/1.1", "Transfer-Encoding: chunked") + chunkedEnd + smuggled, 400},
		{"TE list",
			head("HTTP/1.1", "Content-Length: 5", "Transfer-Encoding: gzip, chunked") + chunkedEnd + smuggled, 501},
		{"two TE fields",
			head("HTTP/1.1", "Content-Length: 5", "Transfer-Encoding: chunked", "Transfer-Encoding: chunked") + chunkedEnd + smuggled, 501},
		{"two different Content-Lengths",
			head("HTTP/1.1", "Content-Length: 5", "Content-Length: 0") + chunkedEnd + smuggled, 400},
		{"HTTP/1.0 keep-alive with TE, which Go ignores",
			head("HTTP/1.0", "Connection: keep-alive", "Content-Length: 5", "Transfer-Encoding: chunked") + chunkedEnd + smuggled, 401},
		{"GET with a chunked body",
			"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunkedEnd + smuggled, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// A bound, not a measurement: a connection left open is a failure.
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			if _, err := io.WriteString(c, tc.req); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			var statuses []int
			for {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						t.Fatalf("connection still open after %v", statuses)
					}
					break // closed
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				statuses = append(statuses, resp.StatusCode)
				if len(statuses) > 1 {
					t.Fatalf("answers %v: the smuggled request was answered", statuses)
				}
			}
			if len(statuses) != 1 || statuses[0] != tc.status {
				t.Fatalf("answers %v, want exactly [%d] (the smuggled request must not be answered)", statuses, tc.status)
			}
		})
	}

	// A well-framed keep-alive connection still serves several requests.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	_, _ = io.WriteString(c, smuggled+smuggled)
	br := bufio.NewReader(c)
	for i := 0; i < 2; i++ {
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("keep-alive request %d: %v %v", i, resp, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
	}
}
