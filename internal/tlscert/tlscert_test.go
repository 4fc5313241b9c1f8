package tlscert

import (
	"crypto/x509"
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
