package subject

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/statedir"
	"github.com/tokex-dev/tokex/internal/tlscert"
)

func get(t *testing.T, c *http.Client, u string) (int, string, []byte) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// Issue 12: the issuer serves an OpenID Connect discovery document (also
// at RFC 8414's location) naming itself, its JWKS and the algorithms of
// its keys, over HTTP on loopback or HTTPS, below the issuer's path.
func TestIssuerServesDiscoveryAndJWKS(t *testing.T) {
	rs, _ := jose.GenerateKey(jose.RS256)
	es, _ := jose.GenerateKey(jose.ES256)
	pair, _ := tlscert.Loopback()
	for _, tc := range []struct {
		name, url string
		cert      *tls.Certificate
		prefix    string
	}{
		{"http", "", nil, ""},
		{"https", "", &pair.Cert, ""},
		{"path", "http://127.0.0.1:1/tokex", nil, "/tokex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ServeIssuer(IssuerOptions{Addr: "127.0.0.1:0", Keys: []*jose.Key{rs, es.WithKid("es")}, Cert: tc.cert, URL: tc.url})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tlscert.Pool(pair.CertPEM)}}}
			base := strings.Replace(strings.Replace(s.URL, "127.0.0.1:1", s.Addr(), 1), "/tokex", "", 1)
			if tc.url == "" && s.URL != map[bool]string{true: "https", false: "http"}[tc.cert != nil]+"://"+s.Addr() {
				t.Errorf("issuer %s", s.URL)
			}
			for _, path := range []string{tc.prefix + DiscoveryPath, OAuthMetaPath + tc.prefix} {
				code, ctype, body := get(t, c, base+path)
				var d Discovery
				if code != 200 || ctype != "application/json" || json.Unmarshal(body, &d) != nil {
					t.Fatalf("%s: %d %s %s", path, code, ctype, body)
				}
				if d.Issuer != s.URL || d.JWKSURI != s.URL+JWKSPath || strings.Join(d.IDTokenSigningAlgValuesSupported, ",") != "RS256,ES256" ||
					d.AuthorizationEndpoint == "" || len(d.ResponseTypesSupported) == 0 || len(d.SubjectTypesSupported) == 0 {
					t.Errorf("%s: %+v", path, d)
				}
			}
			code, ctype, body := get(t, c, base+tc.prefix+JWKSPath)
			var set struct{ Keys []map[string]any }
			if code != 200 || ctype != "application/jwk-set+json" || json.Unmarshal(body, &set) != nil || len(set.Keys) != 2 ||
				set.Keys[0]["kid"] != rs.Kid || set.Keys[1]["kid"] != "es" || set.Keys[1]["d"] != nil {
				t.Errorf("jwks %d %s %s", code, ctype, body)
			}
			if code, _, body := get(t, c, base+tc.prefix+AuthorizePath); code != 400 || !strings.Contains(string(body), "unsupported_response_type") {
				t.Errorf("authorize %d %s", code, body)
			}
		})
	}
}

func TestIssuerRefusals(t *testing.T) {
	k, _ := jose.GenerateKey(jose.ES256)
	for _, tc := range []struct {
		o    IssuerOptions
		want string
	}{
		{IssuerOptions{Addr: "127.0.0.1:0"}, "no keys"},
		{IssuerOptions{Addr: "0.0.0.0:0", Keys: []*jose.Key{k}}, "not loopback: serve it over HTTPS"},
		{IssuerOptions{Addr: "127.0.0.1:0", Keys: []*jose.Key{k}, URL: "http://as.example/x"}, "plain http only on loopback"},
		{IssuerOptions{Addr: "127.0.0.1:0", Keys: []*jose.Key{k}, URL: "https://as.example/x?q=1"}, "without query or fragment"},
		{IssuerOptions{Addr: "nonsense", Keys: []*jose.Key{k}}, "issuer address"},
	} {
		s, err := ServeIssuer(tc.o)
		if err == nil {
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}

// Issue 12: one stored key per algorithm, each stable; the RS256 key is
// subject-key.pem as before, and an older ES256 subject-key.pem stays the
// ES256 key.
func TestStoredKeyPerAlgorithm(t *testing.T) {
	home := t.TempDir()
	t.Setenv("TOKEX_HOME", home)
	keys, err := StoredKeys()
	if err != nil || len(keys) != 3 {
		t.Fatal(keys, err)
	}
	for i, alg := range jose.Algorithms {
		k, path, err := StoredKey(alg)
		if err != nil || k.Alg != alg || k.Kid != keys[i].Kid {
			t.Errorf("%s: %v %v", alg, k, err)
		}
		if want := map[string]string{jose.RS256: "subject-key.pem", jose.ES256: "subject-key-ES256.pem", jose.EdDSA: "subject-key-EdDSA.pem"}[alg]; filepath.Base(path) != want {
			t.Errorf("%s in %s", alg, path)
		}
	}
	if _, _, err := StoredKey("HS256"); err == nil {
		t.Error("stored an HS256 key")
	}

	t.Setenv("TOKEX_HOME", t.TempDir()) // an older tokex made subject-key.pem ES256
	first, _ := statedir.SubjectKeyPath()
	old, _ := LoadOrCreate(first, jose.ES256)
	es, path, _ := StoredKey(jose.ES256)
	rs, rpath, _ := StoredKey(jose.RS256)
	if es.Kid != old.Kid || path != first || rs.Alg != jose.RS256 || filepath.Base(rpath) != "subject-key-RS256.pem" {
		t.Errorf("legacy: es %s in %s, rs %s in %s", es.Kid, path, rs.Alg, rpath)
	}
	if ks, err := Keys("", jose.ES256, "k1"); err != nil || len(ks) != 1 || ks[0].Kid != "k1" || ks[0].Alg != jose.ES256 {
		t.Errorf("Keys(ES256, k1): %v %v", ks, err)
	}
	if _, err := Keys("", "", "k1"); err == nil {
		t.Error("one kid for three keys")
	}
	if _, err := Keys(first, jose.RS256, ""); err == nil || !strings.Contains(err.Error(), "is a ES256 key, not RS256") {
		t.Errorf("key file of another alg: %v", err)
	}
	_ = os.Remove(first)
}
