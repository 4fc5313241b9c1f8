package local

import (
	"bufio"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/subject"
)

// stubTransport answers every request with a canned success, so the
// benchmark sees only the generator's own work (not the kernel's sockets).
type stubTransport struct{ n atomic.Int64 }

const okBody = `{"access_token":"eyJ.x.y","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","expires_in":300}`

func (s *stubTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.n.Add(1)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(okBody)), Request: r}, nil
}

func cpuTime() time.Duration {
	u, s := cpuSplit()
	return u + s
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

func cpuSplit() (user, sys time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// poolSource hands out pre-signed tokens: the benchmark then measures the
// generator without the signature (whose cost BenchmarkMintOverhead splits
// into the bare signature and the JWT work around it).
type poolSource struct {
	toks []string
	i    atomic.Int64
}

func (p *poolSource) Mint(string) (string, error) {
	return p.toks[int(p.i.Add(1))%len(p.toks)], nil
}

// BenchmarkGeneratorCost runs the real scheduler, mint pipeline, workers,
// request building, response classification and recording at 2,000
// arrivals/s with pre-signed tokens, and reports process CPU per request
// ("cpu-µs/req"). Add the "jwt-µs/op" of BenchmarkMintOverhead for the
// generator's whole cost beyond the signature (goal < 30 µs).
func BenchmarkGeneratorCost(b *testing.B) {
	key, _ := jose.GenerateKey(jose.ES256)
	m := &subject.Minter{Key: key, Issuer: "https://pf-perf-subject", Lifetime: 5 * time.Minute, Users: subject.Users(100), Prefix: "b-"}
	src := &poolSource{}
	for i := 0; i < 64; i++ {
		t, _ := m.Mint("perf-agent-0")
		src.toks = append(src.toks, t)
	}
	tr := &stubTransport{}
	g := &Generator{URL: "http://stub.invalid/as/token.oauth2", MaxInFlight: 100, Timeout: 5 * time.Second,
		Body: exchange.Template{Resources: []string{"https://mcp.example.internal/mcp"}, Scope: "mcp:tools:invoke"}.Compile()}
	for i := 0; i < 10; i++ {
		g.Agents = append(g.Agents, &Agent{Index: i, ClientID: "perf-agent-" + string(rune('0'+i)), Secret: "secret",
			Minter: src, client: &http.Client{Transport: tr}})
	}
	const rate = 2000
	p := event.PlannedRun{ID: "bench", TargetRPS: rate, Duration: time.Duration(float64(b.N) / rate * float64(time.Second)), Agents: 10}
	var rows atomic.Int64
	b.ResetTimer()
	u0, s0 := cpuSplit()
	g.Run(context.Background(), p, time.Now(), func(r *stats.Request) {
		if r.Outcome != "ok" {
			b.Errorf("outcome %s", r.Outcome)
		}
		rows.Add(1)
	})
	u1, s1 := cpuSplit()
	n := float64(max(rows.Load(), 1)) * 1000
	b.ReportMetric(float64((u1-u0+s1-s0).Nanoseconds())/n, "cpu-µs/req")
	b.ReportMetric(float64((u1-u0).Nanoseconds())/n, "user-µs/req")
	b.ReportMetric(float64((s1-s0).Nanoseconds())/n, "sys-µs/req")
}

// BenchmarkMintOverhead interleaves blocks of full subject-token mints and
// bare signatures of the same algorithm, and reports the JWT work beyond
// the signature ("jwt-µs/op"), timed in the thread's own CPU time (the
// goroutine is locked to it) so that waiting for a CPU on a shared machine
// is not counted.
func BenchmarkMintOverhead(b *testing.B) {
	for _, alg := range []string{jose.RS256, jose.ES256, jose.EdDSA} {
		b.Run(alg, func(b *testing.B) {
			key, _ := jose.GenerateKey(alg)
			m := &subject.Minter{Key: key, Issuer: "https://pf-perf-subject", Lifetime: 5 * time.Minute, Users: subject.Users(100), Prefix: "b-"}
			tok, _ := m.Mint("perf-agent-0")
			signing := []byte(tok[:strings.LastIndexByte(tok, '.')])
			bare := func() {
				if alg == jose.EdDSA {
					_, _ = key.Signer.Sign(rand.Reader, signing, crypto.Hash(0))
					return
				}
				d := sha256.Sum256(signing)
				_, _ = key.Signer.Sign(rand.Reader, d[:], crypto.SHA256)
			}
			const block = 16
			var tMint, tBare time.Duration
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			for done := 0; done < b.N; done += block {
				t0 := threadCPU()
				for i := 0; i < block; i++ {
					_, _ = m.Mint("perf-agent-0")
				}
				t1 := threadCPU()
				for i := 0; i < block; i++ {
					bare()
				}
				tMint += t1 - t0
				tBare += threadCPU() - t1
			}
			n := float64(b.N - b.N%block + block*min(1, b.N%block))
			b.ReportMetric(float64((tMint-tBare).Nanoseconds())/1000/n, "jwt-µs/op")
			b.ReportMetric(float64(tBare.Nanoseconds())/1000/n, "sign-µs/op")
		})
	}
}

// BenchmarkClientLoopback sends pre-signed exchanges at 2,000/s to a
// no-delay server in this process over loopback, alternately through
// tokex's HTTP/1.1 client and net/http, and reports process CPU per request
// (server included, the same in both): the difference is the client's.
//
//	go test ./runner/local -run - -bench ClientLoopback -benchtime 10000x -count 3
func BenchmarkClientLoopback(b *testing.B) {
	srv := httptestSink(b)
	for _, h1 := range []bool{true, false} {
		name := "h1"
		if !h1 {
			name = "net-http"
		}
		b.Run(name, func(b *testing.B) {
			src := &poolSource{toks: []string{"eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ"}}
			g := &Generator{URL: srv + "/as/token.oauth2", MaxInFlight: 100, Timeout: 5 * time.Second,
				Body: exchange.Template{Resources: []string{"https://mcp.example.internal/mcp"}, Scope: "mcp:tools:invoke"}.Compile()}
			for i := 0; i < 10; i++ {
				g.Agents = append(g.Agents, &Agent{Index: i, ClientID: "perf-agent-" + string(rune('0'+i)), Secret: "secret", Minter: src})
			}
			g.Connect(TransportOptions{HTTP2: false, Conns: 100})
			defer g.Close()
			if !h1 {
				for _, a := range g.Agents {
					a.h1 = nil
					a.client = &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 100}}
				}
			}
			const rate = 2000
			p := event.PlannedRun{ID: "bench", TargetRPS: rate, Duration: time.Duration(float64(b.N) / rate * float64(time.Second)), Agents: 10}
			var rows atomic.Int64
			ctx, cancel := context.WithCancel(context.Background()) // a run's, as the driver's
			defer cancel()
			b.ResetTimer()
			c0 := cpuTime()
			g.Run(ctx, p, time.Now(), func(r *stats.Request) {
				if r.Outcome != "ok" && r.Outcome != "dropped" {
					b.Errorf("outcome %s %s", r.Outcome, r.Description)
				}
				rows.Add(1)
			})
			b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(max(rows.Load(), 1))/1000, "cpu-µs/req")
		})
	}
}

func httptestSink(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header()["Content-Type"] = []string{"application/json"}
		_, _ = io.WriteString(w, okBody)
	})}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// memConn answers each write with resp, in memory: the HTTP/1.1 client's
// own work without the kernel's. Only what h1Client calls is implemented.
type memConn struct {
	net.Conn
	resp string
	r    strings.Reader
}

func (c *memConn) Write(b []byte) (int, error) { c.r.Reset(c.resp); return len(b), nil }
func (c *memConn) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c *memConn) SetDeadline(time.Time) error { return nil }
func (c *memConn) Close() error                { return nil }

// BenchmarkH1Client is the HTTP/1.1 client's CPU per request over
// in-memory connections, with a run's cancelable context shared by ten
// agents' clients of 100 workers each (as the generator's workers share
// it), and its allocations.
//
//	go test ./runner/local -run - -bench H1Client -benchtime 200000x -count 5
func BenchmarkH1Client(b *testing.B) {
	u, _ := url.Parse("http://127.0.0.1:1/as/token.oauth2")
	pre, post := requestHead(u, [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}})
	req := append(append(pre, "3"...), append(post, "a=b"...)...)
	clients := make([]*h1Client, 10)
	for i := range clients {
		clients[i] = newH1Client(u, nil, false, 5*time.Second, 200)
		for range 200 { // more than its workers ever hold: none dials
			c := &memConn{resp: okResponse("")}
			clients[i].put(&h1Conn{c: c, br: bufio.NewReaderSize(c, 4096), sent: time.Now()})
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var next atomic.Int64
	b.SetParallelism(500) // 1,000 goroutines on 2 CPUs
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		h := clients[next.Add(1)%int64(len(clients))]
		for pb.Next() {
			if st, _, err := h.do(ctx, req, func(int, []byte) {}); err != nil || st != 200 {
				b.Error(st, err)
			}
		}
	})
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N)/1000, "cpu-µs/req")
}
