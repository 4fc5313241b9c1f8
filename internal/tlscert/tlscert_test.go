package tlscert

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoopbackCertVerifies(t *testing.T) {
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
