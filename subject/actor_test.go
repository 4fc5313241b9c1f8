package subject

import (
	"crypto"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/internal/jose"
)

// TestActorMinter: an actor token is the agent's own identity — iss the
// actor issuer, sub and aud the client id (or the fixed audience), a
// lifetime, a jti unique across concurrent calls — and passes tokex's
// strict reader with the actor key only.
func TestActorMinter(t *testing.T) {
	for _, alg := range jose.Algorithms {
		t.Run(alg, func(t *testing.T) {
			k, _ := jose.GenerateKey(alg)
			now := time.Unix(1_800_000_000, 0)
			m := &ActorMinter{Key: k, Issuer: ActorIssuer("https://pf-perf-subject/"), Lifetime: time.Minute, Prefix: "c-a3-",
				Now: func() time.Time { return now }}
			v := &jose.Verifier{Algorithms: jose.Algorithms}
			var mu sync.Mutex
			seen := map[string]bool{}
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tok, err := m.Mint("perf-agent-3")
					if err != nil {
						t.Error(err)
						return
					}
					c, err := v.Verify(tok, func(jose.Header, *jose.Claims) (crypto.PublicKey, error) { return k.Signer.Public(), nil })
					if err != nil {
						t.Errorf("token %d: %v", i, err)
						return
					}
					if c.Issuer != "https://pf-perf-subject/actors" || c.Subject != "perf-agent-3" || len(c.Audience) != 1 ||
						c.Audience[0] != "perf-agent-3" || c.Expiry.Sub(c.IssuedAt.Time) != time.Minute || !strings.HasPrefix(c.ID, "c-a3-") || c.Act != nil {
						t.Errorf("token %d: %+v", i, c)
					}
					mu.Lock()
					defer mu.Unlock()
					if seen[c.ID] {
						t.Errorf("jti %s twice", c.ID)
					}
					seen[c.ID] = true
				}()
			}
			wg.Wait()
			m2 := &ActorMinter{Key: k, Issuer: "https://a", Lifetime: time.Minute, Audience: "https://as.example/token"}
			tok, _ := m2.Mint("perf-agent-0")
			c, err := v.Verify(tok, func(jose.Header, *jose.Claims) (crypto.PublicKey, error) { return k.Signer.Public(), nil })
			if err != nil || c.Audience[0] != "https://as.example/token" {
				t.Errorf("fixed audience: %v %v", c, err)
			}
		})
	}
	if _, err := (&ActorMinter{}).Mint("x"); err == nil {
		t.Error("minted without a key")
	}
}

// TestStoredActorKey: one stored actor key per algorithm, beside the
// subject keys and never one of them, stable across calls.
func TestStoredActorKey(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	subjects, err := StoredKeys()
	if err != nil {
		t.Fatal(err)
	}
	actors, err := ActorKeys("")
	if err != nil || len(actors) != 3 {
		t.Fatal(actors, err)
	}
	for i, alg := range jose.Algorithms {
		k, p, err := StoredActorKey(alg)
		if err != nil || k.Kid != actors[i].Kid || k.Alg != alg || filepath.Base(p) != "actor-key-"+alg+".pem" || k.Kid == subjects[i].Kid {
			t.Errorf("%s: %v %s %v", alg, k, p, err)
		}
	}
	if one, err := ActorKeys(jose.ES256); err != nil || len(one) != 1 || one[0].Kid != actors[1].Kid {
		t.Errorf("ActorKeys(ES256): %v %v", one, err)
	}
	if _, _, err := StoredActorKey("HS256"); err == nil {
		t.Error("stored an HS256 actor key")
	}
}

// TestIssuerServesActors: with actor keys the issuer also serves the actor
// issuer, <issuer>/actors, with its own discovery document and JWKS (the
// actor keys only), below an issuer path too.
func TestIssuerServesActors(t *testing.T) {
	sk, _ := jose.GenerateKey(jose.ES256)
	ak, _ := jose.GenerateKey(jose.EdDSA)
	for _, url := range []string{"", "http://127.0.0.1:1/tokex"} {
		s, err := ServeIssuer(IssuerOptions{Addr: "127.0.0.1:0", Keys: []*jose.Key{sk}, Actors: []*jose.Key{ak}, URL: url})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{}}}
		base := strings.Replace(s.URL, "127.0.0.1:1", s.Addr(), 1)
		root := strings.Replace(base, "/tokex", "", 1)
		prefix := strings.TrimPrefix(base, root)
		if s.ActorURL != s.URL+"/actors" || s.ActorJWKSURL != s.ActorURL+JWKSPath {
			t.Fatalf("actor issuer %s, jwks %s", s.ActorURL, s.ActorJWKSURL)
		}
		for _, path := range []string{prefix + "/actors" + DiscoveryPath, OAuthMetaPath + prefix + "/actors"} {
			code, _, body := get(t, c, root+path)
			var d Discovery
			if code != 200 || json.Unmarshal(body, &d) != nil || d.Issuer != s.ActorURL || d.JWKSURI != s.ActorJWKSURL ||
				strings.Join(d.IDTokenSigningAlgValuesSupported, ",") != "EdDSA" {
				t.Errorf("%s: %d %s", path, code, body)
			}
		}
		for path, kid := range map[string]string{prefix + "/actors" + JWKSPath: ak.Kid, prefix + JWKSPath: sk.Kid} {
			code, _, body := get(t, c, root+path)
			var set struct{ Keys []map[string]any }
			if code != 200 || json.Unmarshal(body, &set) != nil || len(set.Keys) != 1 || set.Keys[0]["kid"] != kid {
				t.Errorf("%s: %d %s", path, code, body)
			}
		}
	}
	s, err := ServeIssuer(IssuerOptions{Addr: "127.0.0.1:0", Keys: []*jose.Key{sk}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if code, _, _ := get(t, http.DefaultClient, s.URL+"/actors"+JWKSPath); code != 404 || s.ActorURL != "" {
		t.Errorf("no actor keys: %d, %q", code, s.ActorURL)
	}
}
