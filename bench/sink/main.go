// Command sink is the no-delay loopback endpoint of bench/side-by-side.sh:
// every POST is read whole and answered at once with a canned RFC 8693
// success, so the load generators measured against it pay for everything
// but the server. It prints "sink: listening on URL" and, on SIGTERM or
// SIGINT, the requests it answered and its own CPU (getrusage).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

const okBody = `{"access_token":"eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJzaW5rIn0.c2lnbmF0dXJl",` +
	`"issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","expires_in":300}`

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sink:", err)
		os.Exit(1)
	}
	var n atomic.Int64
	body := []byte(okBody)
	length := strconv.Itoa(len(body))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		n.Add(1)
		hd := w.Header()
		hd["Content-Type"] = []string{"application/json"}
		hd["Content-Length"] = []string{length}
		hd["Cache-Control"] = []string{"no-store"}
		_, _ = w.Write(body)
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	fmt.Printf("sink: listening on http://%s/as/token.oauth2\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() { _ = srv.Serve(ln) }()
	<-ctx.Done()
	_ = srv.Close()
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("sink: answered %d requests, %.2f s CPU\n", n.Load(), cpu.Seconds())
}
