package authserver

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
)

// BenchmarkExchange is one full exchange through the HTTP handler: form
// parsing, client authentication, subject-token validation, issuing.
// Compare it with BenchmarkBareCrypto of the same algorithm (goal ≤ 1.15×);
// BenchmarkHandlerOverhead measures the ratio in one interleaved run.
func BenchmarkExchange(b *testing.B) {
	for _, alg := range []string{jose.RS256, jose.ES256} {
		b.Run(alg, func(b *testing.B) {
			op := exchangeOp(b, alg)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				op(i)
			}
		})
	}
}

// BenchmarkBareCrypto is the cryptography an exchange cannot avoid: one
// verify of the subject token's signature and one signature of the issued
// token, on inputs of the same size.
func BenchmarkBareCrypto(b *testing.B) {
	for _, alg := range []string{jose.RS256, jose.ES256} {
		b.Run(alg, func(b *testing.B) {
			op := cryptoOp(b, alg)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				op(i)
			}
		})
	}
}

type call struct {
	req *http.Request
	rec *httptest.ResponseRecorder
}

// exchangeCalls returns a builder of requests (the benchmark's own work:
// net/http has parsed them before a handler runs) and the handler call.
func exchangeCalls(b *testing.B, alg string) (func(i int) call, func(call)) {
	f := newFixture(b, alg, nil)
	bodies := make([]string, 64)
	for i := range bodies {
		bodies[i] = form(f.token(b, "perf-agent-0")).Encode()
	}
	auth := exchange.BasicAuth("perf-agent-0", testSecret)
	h := f.srv.Handler()
	build := func(i int) call {
		req := httptest.NewRequest("POST", "/as/token.oauth2", strings.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", auth)
		return call{req, httptest.NewRecorder()}
	}
	serve := func(c call) {
		h.ServeHTTP(c.rec, c.req)
		if c.rec.Code != 200 {
			b.Fatalf("status %d: %s", c.rec.Code, c.rec.Body)
		}
	}
	return build, serve
}

// exchangeOp is one full exchange, request construction included.
func exchangeOp(b *testing.B, alg string) func(i int) {
	build, serve := exchangeCalls(b, alg)
	return func(i int) { serve(build(i)) }
}

// cryptoOp returns one verify plus one sign of the same algorithm, signed
// as the server signs (ES256: RFC 6979, jose.Key.AppendSignature).
func cryptoOp(b *testing.B, alg string) func(i int) {
	in, _ := jose.GenerateKey(alg)
	out, _ := jose.GenerateKey(alg)
	msg := []byte(strings.Repeat("x", 400))
	digest := sha256.Sum256(msg)
	sig, err := in.Signer.Sign(rand.Reader, digest[:], crypto.SHA256)
	if err != nil {
		b.Fatal(err)
	}
	return func(int) {
		d := sha256.Sum256(msg)
		switch pub := in.Signer.Public().(type) {
		case *rsa.PublicKey:
			if rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], sig) != nil {
				b.Fatal("verify")
			}
		case *ecdsa.PublicKey:
			if !ecdsa.VerifyASN1(pub, d[:], sig) {
				b.Fatal("verify")
			}
		}
		d2 := sha256.Sum256(msg)
		if _, err := out.Signer.Sign(nil, d2[:], crypto.SHA256); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHandlerOverhead interleaves blocks of handler calls (requests
// built beforehand, as net/http delivers them) and of bare cryptography so
// that machine noise hits both alike, and reports their ratio as
// "x-bare-crypto" (goal: ≤ 1.15) in wall time, and as "x-bare-crypto-cpu"
// in the thread's CPU time, which time spent waiting for a core on a busy
// machine does not inflate (GC's background workers run on other threads
// and are in neither).
//
//	go test ./authserver -run '^$' -bench HandlerOverhead/ES256 -benchtime 4000x -count 5
func BenchmarkHandlerOverhead(b *testing.B) {
	for _, alg := range []string{jose.RS256, jose.ES256} {
		b.Run(alg, func(b *testing.B) {
			build, serve := exchangeCalls(b, alg)
			cr := cryptoOp(b, alg)
			const block = 8
			var tEx, tCr, cEx, cCr time.Duration
			calls := make([]call, block)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			for done := 0; done < b.N; done += block {
				for i := range calls {
					calls[i] = build(done + i)
				}
				t0, c0 := time.Now(), threadCPU()
				for _, c := range calls {
					serve(c)
				}
				t1, c1 := time.Now(), threadCPU()
				for i := 0; i < block; i++ {
					cr(done + i)
				}
				tEx += t1.Sub(t0)
				tCr += time.Since(t1)
				cEx += c1 - c0
				cCr += threadCPU() - c1
			}
			b.ReportMetric(float64(tEx)/float64(tCr), "x-bare-crypto")
			b.ReportMetric(float64(cEx)/float64(cCr), "x-bare-crypto-cpu")
			b.ReportMetric(float64((tEx-tCr).Microseconds())/float64(b.N), "µs-overhead/op")
		})
	}
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
