package tlscert

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoopbackCertVerifies(t *testing.T) {
	t.Parallel()
	p, err := Loopback()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(p.Cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"127.0.0.1", "localhost", "::1"} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: Pool(p.CertPEM), DNSName: name}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: Pool(p.CertPEM), DNSName: "evil.example"}); err == nil {
		t.Error("verified for a foreign host")
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: x509.NewCertPool(), DNSName: "localhost"}); err == nil {
		t.Error("verified without its pool")
	}
}

// TestConfigNamedFilesAreCapped: a key, certificate or CA file a config
// names is read up to 1 MiB; /dev/zero used to exhaust memory (a sibling of
// issue 9 item 3).
func TestConfigNamedFilesAreCapped(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	if _, err := ReadPEM("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: larger than 1 MiB") {
		t.Errorf("ReadPEM: %v", err)
	}
	if _, err := LoadPair("/dev/zero", "/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("LoadPair: %v", err)
	}
	p, _ := Loopback()
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	_ = os.WriteFile(cert, p.CertPEM, 0o600)
	_ = os.WriteFile(key, p.KeyPEM, 0o600)
	if _, err := LoadPair(cert, key); err != nil {
		t.Errorf("LoadPair of a real pair: %v", err)
	}
}

// A stored certificate is reused across starts while it covers the hosts
// asked for, and replaced when it does not.
func TestStoredCertificateIsReused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "sub", "c.pem"), filepath.Join(dir, "sub", "k.pem")
	a, created, err := Stored(cert, key, []string{"127.0.0.1", "issuer.perf.svc"})
	if err != nil || !created {
		t.Fatal(err, created)
	}
	b, created, err := Stored(cert, key, []string{"issuer.perf.svc"})
	if err != nil || created || string(a.CertPEM) != string(b.CertPEM) {
		t.Errorf("not reused: %v %v", created, err)
	}
	if st, _ := os.Stat(key); st.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", st.Mode())
	}
	c, created, err := Stored(cert, key, []string{"other.example"})
	if err != nil || !created || string(c.CertPEM) == string(a.CertPEM) {
		t.Errorf("not replaced for a new host: %v %v", created, err)
	}
	leaf, _ := x509.ParseCertificate(c.Cert.Certificate[0])
	if leaf.VerifyHostname("other.example") != nil {
		t.Error("the new certificate does not cover its host")
	}
}
