package authserver

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"net/url"
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

// BenchmarkGrants is issue 30's premium on the reference server: one
// handler call of each grant — client_credentials, jwt-bearer, token
// exchange, and an exchange with an actor token (a hop of an agent chain)
// — all with client_secret_basic and the same algorithm for every
// signature, in interleaved blocks (the order rotating per block) so that
// machine noise hits each alike. Each kind's thread CPU per call is
// reported ("µs-cpu-<kind>"), and its ratio to client_credentials'
// ("x-cc-cpu-<kind>"): what the identity hop costs over the plain grant.
// Requests, with their tokens and assertions, are built outside the
// measured blocks, as net/http delivers them.
//
//	go test ./authserver -run '^$' -bench Grants -benchtime 4000x -count 5
func BenchmarkGrants(b *testing.B) {
	for _, alg := range []string{jose.ES256, jose.RS256} {
		b.Run(alg, func(b *testing.B) {
			a := newAgentsOf(b, alg, alg, nil)
			kinds := []string{"cc", "jwtbearer", "exchange", "exchange-actor"}
			build := grantRequests(b, a)
			h := a.srv.Handler()
			const block = 8
			cpu := make([]time.Duration, len(kinds))
			wall := make([]time.Duration, len(kinds))
			calls := make([][]call, len(kinds))
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			for done, round := 0, 0; done < b.N; done, round = done+block, round+1 {
				b.StopTimer()
				for k := range kinds {
					calls[k] = calls[k][:0]
					for range block {
						calls[k] = append(calls[k], build(k))
					}
				}
				b.StartTimer()
				for j := range kinds {
					k := (j + round) % len(kinds)
					t0, c0 := time.Now(), threadCPU()
					for _, c := range calls[k] {
						h.ServeHTTP(c.rec, c.req)
					}
					cpu[k] += threadCPU() - c0
					wall[k] += time.Since(t0)
					for _, c := range calls[k] {
						if c.rec.Code != 200 {
							b.Fatalf("%s: %d %s", kinds[k], c.rec.Code, c.rec.Body)
						}
					}
				}
			}
			n := float64(b.N / block * block)
			for k, name := range kinds {
				b.ReportMetric(float64(cpu[k].Microseconds())/n, "µs-cpu-"+name)
				if k > 0 {
					b.ReportMetric(float64(cpu[k])/float64(cpu[0]), "x-cc-cpu-"+name)
				}
			}
			b.ReportMetric(float64(wall[2])/float64(wall[0]), "x-cc-wall-exchange")
		})
	}
}

// grantRequests returns a builder of one request of kind k (BenchmarkGrants'
// kinds), each with fresh tokens: perf-agent-0 with its secret.
func grantRequests(b *testing.B, a *agents) func(k int) call {
	auth := exchange.BasicAuth("perf-agent-0", testSecret)
	return func(k int) call {
		v := url.Values{"resource": {DefaultResource}, "scope": {DefaultScope}}
		switch k {
		case 0:
			v.Set("grant_type", exchange.GrantTypeClientCredentials)
		case 1:
			v.Set("grant_type", exchange.GrantTypeJWTBearer)
			v.Set("assertion", mint(b, a.bearer, ""))
		default:
			v.Set("grant_type", exchange.GrantTypeTokenExchange)
			v.Set("subject_token", mint(b, a.minter, "perf-agent-0"))
			v.Set("subject_token_type", exchange.TokenTypeAccessToken)
			if k == 3 {
				v.Set("actor_token", mint(b, a.actor, "perf-agent-0"))
				v.Set("actor_token_type", exchange.TokenTypeJWT)
			}
		}
		req := httptest.NewRequest("POST", "/as/token.oauth2", strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", auth)
		return call{req, httptest.NewRecorder()}
	}
}
