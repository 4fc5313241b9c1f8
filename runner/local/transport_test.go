package local

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/exchange"
)

// protoServer answers every exchange and counts the protocol of each
// request and the connections opened.
type protoServer struct {
	*httptest.Server
	mu     sync.Mutex
	protos map[string]int
	conns  map[string]bool // client addresses that carried a request
}

func newProtoServer(t *testing.T, useTLS bool) *protoServer {
	t.Helper()
	ps := &protoServer{protos: map[string]int{}, conns: map[string]bool{}}
	ps.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		ps.protos[r.Proto]++
		ps.conns[r.RemoteAddr] = true
		ps.mu.Unlock()
		_, _ = w.Write([]byte(`{"access_token":"x","issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}`))
	}))
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	ps.Config.Protocols = &p
	if useTLS {
		ps.EnableHTTP2 = true
		ps.StartTLS()
	} else {
		ps.Start()
	}
	t.Cleanup(ps.Close)
	return ps
}

// target.http and target.keep_alive: the protocol asked for is the one
// every request uses, and keep_alive: false opens one connection per request.
func TestTransportProtocolAndConnectionPerRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		tls       bool
		o         TransportOptions
		wantProto string
		perReq    bool
	}{
		{"default over TLS is HTTP/2", true, TransportOptions{HTTP2: true}, "HTTP/2.0", false},
		{"1.1 over TLS", true, TransportOptions{HTTP2: true, Protocol: "1.1"}, "HTTP/1.1", false},
		{"2 over TLS", true, TransportOptions{Protocol: "2"}, "HTTP/2.0", false},
		{"h2c", false, TransportOptions{Protocol: "h2c"}, "HTTP/2.0", false},
		{"default without TLS is 1.1", false, TransportOptions{HTTP2: true}, "HTTP/1.1", false},
		{"1.1, a connection per request", false, TransportOptions{Protocol: "1.1", NewConnPerRequest: true}, "HTTP/1.1", true},
		{"2 over TLS, a connection per request", true, TransportOptions{Protocol: "2", NewConnPerRequest: true}, "HTTP/2.0", true},
		{"h2c, a connection per request", false, TransportOptions{Protocol: "h2c", NewConnPerRequest: true}, "HTTP/2.0", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := newProtoServer(t, tc.tls)
			g := newGen(t, ps.URL, 2, 20) // a cap no handshake on a busy machine fills
			if tc.tls {
				pool := ps.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
				tc.o.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
			}
			tc.o.Conns = 20
			g.Connect(tc.o)
			rec := &recorder{}
			g.Run(context.Background(), event.PlannedRun{ID: "r", TargetRPS: 40, Duration: 500 * time.Millisecond, Agents: 2}, time.Now(), rec.rec)
			n := 0
			for _, r := range rec.rows {
				if r.Outcome == exchange.OutcomeOK {
					n++
				}
			}
			ps.mu.Lock()
			defer ps.mu.Unlock()
			if n != 20 || ps.protos[tc.wantProto] != 20 {
				t.Fatalf("%d of %d ok (%+v); protocols %v, want all %s", n, len(rec.rows), rec.rows[0], ps.protos, tc.wantProto)
			}
			if tc.perReq && len(ps.conns) != 20 || !tc.perReq && len(ps.conns) >= 20 {
				t.Errorf("20 requests came over %d connections (one each: %v)", len(ps.conns), tc.perReq)
			}
		})
	}
}
