package local_test

import (
	"context"
	"crypto/aes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// signsEveryTenth is a target that signs each client's 1st, 11th, 21st…
// token exchange with the key it publishes and answers every other one
// with a token signed by a key it never published.
func signsEveryTenth(t *testing.T, resource string) *httptest.Server {
	t.Helper()
	good, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	junk, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	var mu sync.Mutex
	seen := map[string]int{}
	var ts *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": ts.URL, "jwks_uri": ts.URL + "/jwks"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &good.PublicKey, KeyID: "k", Use: "sig", Algorithm: "ES256"}}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		id, _, _ := r.BasicAuth()
		mu.Lock()
		seen[id]++
		n := seen[id]
		mu.Unlock()
		key := junk
		if n%10 == 1 {
			key = good
		}
		now := time.Now().Unix()
		tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": ts.URL, "sub": "u", "aud": resource,
			"iat": now, "exp": now + 300, "client_id": id})
		tok.Header["kid"] = "k"
		s, _ := tok.SignedString(key)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"access_token": s, "token_type": "Bearer",
			"issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
	})
	ts = httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// TestVerificationSampleIsUnpredictable: with check.verify.sample 0.1, a
// target that signs only the exchanges "one in ten" would pick is caught,
// and the run records how many tokens it verified and how many failed;
// with the key it records, the verified arrivals are exactly those the
// documented rule picks (issue 25 item 3: it passed with 100 % success
// while 180 of 200 tokens were junk).
func TestVerificationSampleIsUnpredictable(t *testing.T) {
	t.Parallel()
	c := tinyCampaign()
	c.Sanity.Enabled = false
	c.Agents.Count = 2
	c.Stages, c.Rounds, c.Warmup, c.Duration = []float64{100}, 1, 0, 2*time.Second
	c.Target.URL = signsEveryTenth(t, c.Request.Resources[0]).URL + "/token"
	c.Check.Verify.Sample = 0.1
	r := runCampaign(t, context.Background(), c, filepath.Join(t.TempDir(), "c"), nil, nil, nil)
	if r.err != nil || r.summary == nil || len(r.summary.Stages) != 1 {
		t.Fatalf("campaign: %v", r.err)
	}
	run := r.summary.Stages[0].Runs[0]
	v := run.Verification
	if v == nil || v.Sample != 0.1 || len(v.Key) != 32 {
		t.Fatalf("verification recorded: %+v", v)
	}
	t.Logf("%d exchanges, %d ok, %d tokens verified, %d failed", run.Requests, run.OK, v.Checked, v.Failed)
	// 180 of 200 tokens are junk: each verified one fails. The chance that
	// none of them is picked at 0.1 is 0.9^180 ≈ 6e-9.
	if v.Failed == 0 || run.OK == run.Requests || run.Errors["bad_response:200"] != v.Failed {
		t.Errorf("the junk went unseen: %d of %d ok, %d verified, %d failed, errors %v", run.OK, run.Requests, v.Checked, v.Failed, run.Errors)
	}
	if v.Checked < v.Failed || v.Checked > run.Requests/2 {
		t.Errorf("%d verified of %d at 0.1", v.Checked, run.Requests)
	}
	// The key tells which arrivals were verified: AES(key, agent‖seq) below
	// 0.1·2⁶⁴. Every failure is one of them, and they are as many as checked.
	key, _ := hex.DecodeString(v.Key)
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	f, err := evidence.Open(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	picked := int64(0)
	_, err = f.Requests(run.ID, func(q *stats.Request) {
		var in, out [16]byte
		binary.BigEndian.PutUint64(in[:8], uint64(q.Agent))
		binary.BigEndian.PutUint64(in[8:], uint64(q.Seq))
		block.Encrypt(out[:], in[:])
		pick := binary.BigEndian.Uint64(out[:8]) < uint64(math.Ldexp(0.1, 64))
		if q.Phase != stats.Measured || q.Status != 200 {
			return
		}
		if pick {
			picked++
		} else if q.Outcome != exchange.OutcomeOK {
			t.Errorf("agent %d seq %d failed (%s) but was not picked", q.Agent, q.Seq, q.Outcome)
		}
	})
	if err != nil || picked != v.Checked {
		t.Errorf("the key picks %d, the run checked %d (%v)", picked, v.Checked, err)
	}
}
