package local_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
)

// actServer is a token-exchange server that nests act as RFC 8693 §4.1
// says — the client that asks on top of the subject token's own chain,
// when the subject token is one it issued — except that nest, when set,
// rewrites the chain it is about to issue (current actor first): a server
// that loses or reorders the delegation history.
type actServer struct {
	key    *jose.Key
	issuer string
	nest   func([]string) []string
	issued atomic.Int64
}

// start serves the server's metadata, JWKS and token endpoint on
// 127.0.0.1 and returns the token endpoint's URL.
func (s *actServer) start(t *testing.T) string {
	t.Helper()
	key, err := jose.GenerateKey(jose.ES256)
	if err != nil {
		t.Fatal(err)
	}
	set, err := jose.JWKS(key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.key, s.issuer = key, "http://"+ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": s.issuer, "jwks_uri": s.issuer + "/jwks.json", "token_endpoint": s.issuer + "/token"})
	})
	mux.HandleFunc("GET /jwks.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(set)
	})
	mux.HandleFunc("POST /token", s.token)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s.issuer + "/token"
}

// token answers one exchange (no client authentication: the test is the
// issued act, not who may ask).
func (s *actServer) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	fail := func(code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
	}
	if r.ParseForm() != nil || r.PostForm.Get("grant_type") != exchange.GrantTypeTokenExchange {
		fail("invalid_request")
		return
	}
	client, _, ok := r.BasicAuth()
	if !ok {
		client = r.PostForm.Get("client_id")
	}
	var subject jwt.MapClaims
	if _, _, err := jwt.NewParser().ParseUnverified(r.PostForm.Get("subject_token"), &subject); err != nil || client == "" {
		fail("invalid_grant")
		return
	}
	var chain []string
	if iss, _ := subject["iss"].(string); iss == s.issuer {
		if chain, _ = exchange.ActChain(subject); chain == nil {
			fail("invalid_grant")
			return
		}
	}
	if len(chain) == 0 || chain[0] != client {
		chain = append([]string{client}, chain...)
	}
	if s.nest != nil {
		chain = s.nest(chain)
	}
	var act map[string]any
	for i := len(chain) - 1; i >= 0; i-- {
		a := map[string]any{"sub": chain[i]}
		if act != nil {
			a["act"] = act
		}
		act = a
	}
	var jti [8]byte
	_, _ = rand.Read(jti[:])
	now := time.Now().Unix()
	claims := jwt.MapClaims{"iss": s.issuer, "sub": subject["sub"], "client_id": client, "iat": now, "exp": now + 300,
		"jti": hex.EncodeToString(jti[:]), "aud": append(r.PostForm["audience"], r.PostForm["resource"]...), "act": act}
	tok := jwt.NewWithClaims(s.key.Method(), claims)
	tok.Header["kid"], tok.Header["typ"] = s.key.Kid, "at+jwt"
	signed, err := tok.SignedString(s.key.Signer)
	if err != nil {
		fail("server_error")
		return
	}
	s.issued.Add(1)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": signed, "issued_token_type": exchange.TokenTypeAccessToken,
		"token_type": "Bearer", "expires_in": 300})
}

// TestSampledVerificationCatchesAWrongNestedAct (issue 30's done
// criteria): chains of 3 against a server that issues each hop a token
// whose signature, audience and client are right, and whose act is right
// on hops 1 and 2; on the last hop, where act nests three actors, it loses
// the first agent, or swaps the two below the current one, or puts the
// chain's first agent on top. Sampled verification (every success here)
// checks the last hop's whole nested act: each such token fails as
// bad_response:200 saying the depth where the chain differs, the chain
// breaks at hop 3, and hops 1 and 2 stay successes. The same server
// nesting rightly passes (the server is no stub that fails anyway).
func TestSampledVerificationCatchesAWrongNestedAct(t *testing.T) {
	last := func(f func([]string) []string) func([]string) []string {
		return func(c []string) []string {
			if len(c) == 3 {
				return f(c)
			}
			return c
		}
	}
	for _, tc := range []struct {
		name string
		nest func([]string) []string
		want string // "" the chains complete
	}{
		{"right", nil, ""},
		{"loses the first agent", last(func(c []string) []string { return c[:2] }), "act chain holds 2 actors, want 3"},
		{"swaps the earlier agents", last(func(c []string) []string { return []string{c[0], c[2], c[1]} }), "act chain differs at depth 2 of 3"},
		{"first agent on top", last(func(c []string) []string { return []string{c[2], c[1], c[0]} }), "act chain differs at depth 1 of 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &actServer{nest: tc.nest}
			c := agenticCampaign()
			c.Target.URL = s.start(t)
			c.Workload.Chain, c.Workload.Steps = 3, new(bool)
			c.Check.Verify.Client = true
			r := runCampaign(t, context.Background(), c, filepath.Join(t.TempDir(), "act"), nil, nil, nil)
			if r.summary == nil || len(r.summary.Stages) == 0 || len(r.summary.Stages[0].Runs) == 0 {
				t.Fatalf("no run: %v", r.err)
			}
			run := r.summary.Stages[0].Runs[0]
			ch, v := run.Chains, run.Verification
			if ch == nil || ch.Started == 0 || len(run.Hops) != 3 || v == nil || v.Checked == 0 || s.issued.Load() == 0 {
				t.Fatalf("run %s: chains %+v hops %d verification %+v, %d issued; err %v", run.ID, ch, len(run.Hops), v, s.issued.Load(), r.err)
			}
			if tc.want == "" {
				if r.err != nil || v.Failed != 0 || ch.Completed != ch.Started || len(ch.Broken) != 0 {
					t.Fatalf("a server nesting act rightly: err %v, verification %+v, chains %+v", r.err, v, ch)
				}
				return
			}
			for _, h := range run.Hops[:2] {
				if h.OK != h.Requests || h.Requests == 0 {
					t.Errorf("hop %d: %d of %d succeeded (its act is right)", h.Hop, h.OK, h.Requests)
				}
			}
			if h := run.Hops[2]; h.OK != 0 || h.Errors["bad_response:200"] != h.Requests || v.Failed != h.Requests {
				t.Errorf("hop 3: %d ok, errors %v, verification %+v", h.OK, h.Errors, v)
			}
			if ch.Completed != 0 || len(ch.Broken) != 1 || ch.Broken[0].Hop != 3 || ch.Broken[0].Error != "bad_response:200" {
				t.Errorf("chains %+v: every chain breaks at hop 3", ch)
			}
			said := false
			for _, e := range run.TopErrors {
				for _, d := range e.Descriptions {
					said = said || strings.Contains(d.Text, tc.want)
				}
			}
			if !said {
				t.Errorf("no error says %q: %+v", tc.want, run.TopErrors)
			}
		})
	}
}
