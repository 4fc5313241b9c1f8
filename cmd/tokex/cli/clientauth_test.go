package cli

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/runner/config"
)

// TestJWKSClientsPrintsAStableKeyPerAgent: `tokex jwks --clients` prints one
// JWK Set per client id, each its own key, the same at every call (stored),
// and --out writes each to <client id>.jwks.json.
func TestJWKSClientsPrintsAStableKeyPerAgent(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	out := t.TempDir()
	var a, b, errb bytes.Buffer
	if Main([]string{"jwks", "--clients", "--agents", "3"}, &a, &errb) != 0 ||
		Main([]string{"jwks", "--clients", "--agents", "3", "--out", out}, &b, &errb) != 0 {
		t.Fatal(errb.String())
	}
	if a.String() != b.String() {
		t.Errorf("the keys changed between calls:\n%s\n%s", a.String(), b.String())
	}
	var sets map[string]struct{ Keys []map[string]any }
	if err := json.Unmarshal(a.Bytes(), &sets); err != nil || len(sets) != 3 {
		t.Fatalf("%v: %s", err, a.String())
	}
	kids := map[any]bool{}
	for id, s := range sets {
		if len(s.Keys) != 1 || s.Keys[0]["alg"] != "ES256" || s.Keys[0]["d"] != nil {
			t.Errorf("%s: %v", id, s.Keys)
		}
		kids[s.Keys[0]["kid"]] = true
		written, err := os.ReadFile(filepath.Join(out, id+".jwks.json"))
		if err != nil || !bytes.Contains(written, []byte(s.Keys[0]["kid"].(string))) {
			t.Errorf("%s: %v %s", id, err, written)
		}
	}
	if len(kids) != 3 {
		t.Errorf("the agents share keys: %v", kids)
	}
}

// TestJWKSClientCAOut: --client-ca-out writes the stored client CA, the
// same at every call, and the agents' stored certificates are its own.
func TestJWKSClientCAOut(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	dir := t.TempDir()
	var out, errb bytes.Buffer
	a, b := filepath.Join(dir, "a.pem"), filepath.Join(dir, "b.pem")
	if Main([]string{"jwks", "--client-ca-out", a}, &out, &errb) != 0 || Main([]string{"jwks", "--client-ca-out", b}, &out, &errb) != 0 {
		t.Fatal(errb.String())
	}
	pa, _ := os.ReadFile(a)
	pb, _ := os.ReadFile(b)
	if len(pa) == 0 || !bytes.Equal(pa, pb) || !strings.Contains(out.String(), "CN=<client id>") {
		t.Errorf("%s\n%s", out.String(), pa)
	}
	c := config.Article()
	c.Target.URL, c.Request.AuthMethod, c.Agents.Count = "https://as.example/token", "tls_client_auth", 2
	certs, err := c.ClientCerts()
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pa)
	for i, cert := range certs.Certs {
		if _, err := cert.Leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil ||
			cert.Leaf.Subject.String() != "CN=perf-agent-"+string(rune('0'+i)) {
			t.Errorf("agent %d: %v %s", i, err, cert.Leaf.Subject)
		}
	}
}

// TestServeClientAuthFlags: --client-jwks and --client-ca register the
// default clients' keys and certificates; --client-ca needs TLS.
func TestServeClientAuthFlags(t *testing.T) {
	o := &serveOptions{tls: true, clientJWKS: "clients.json", clientCA: "ca.pem"}
	cfg, _, err := o.complete()
	if err != nil || cfg.DefaultClients.JWKSFile != "clients.json" || cfg.TLS.ClientCAFile != "ca.pem" ||
		cfg.DefaultClients.TLSClientAuthSubjectDN != "CN={{client_id}}" {
		t.Errorf("%v %+v %+v", err, cfg.DefaultClients, cfg.TLS)
	}
	o.tls = false
	if _, _, err := o.complete(); err == nil || !strings.Contains(err.Error(), "tls.client_ca_file") {
		t.Errorf("--client-ca without TLS: %v", err)
	}
}
