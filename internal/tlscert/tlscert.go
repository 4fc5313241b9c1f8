// Package tlscert makes the self-signed certificates tokex uses on loopback
// (the reference server's --tls and the subject-token JWKS endpoint) and
// reads the PEM files a config names, capped in size.
package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/tokex-dev/tokex/internal/confload"
)

// MaxPEMBytes caps a certificate, key or CA file a config names.
const MaxPEMBytes = 1 << 20

// ReadPEM reads a PEM file of at most MaxPEMBytes.
func ReadPEM(path string) ([]byte, error) { return confload.ReadLimited(path, MaxPEMBytes) }

// LoadPair is tls.LoadX509KeyPair with both files capped.
func LoadPair(certFile, keyFile string) (tls.Certificate, error) {
	cert, err := ReadPEM(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := ReadPEM(keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(cert, key)
}

// Pair is a self-signed certificate with its PEM forms. The certificate is
// its own CA, so CertPEM is what a client adds to its trust pool.
type Pair struct {
	Cert    tls.Certificate
	CertPEM []byte
	KeyPEM  []byte
}

// SelfSigned creates a P-256 certificate valid for hosts (DNS names or IPs)
// for the given lifetime.
func SelfSigned(hosts []string, lifetime time.Duration) (*Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl, err := template(pkix.Name{CommonName: "tokex self-signed", Organization: []string{"tokex"}}, lifetime)
	if err != nil {
		return nil, err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	tmpl.BasicConstraintsValid, tmpl.IsCA = true, true
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return sign(tmpl, tmpl, key, key)
}

// StoredLifetime is the lifetime of a stored certificate; it is replaced
// when less than StoredRenewal of it is left.
const (
	StoredLifetime = 365 * 24 * time.Hour
	StoredRenewal  = 7 * 24 * time.Hour
)

// Stored returns the self-signed certificate kept in certPath and keyPath,
// creating (or replacing) it when it is missing, does not cover every host,
// or expires within StoredRenewal. A stored certificate stays the same
// across restarts, so a server told to trust it once keeps trusting it.
// created reports a new certificate.
func Stored(certPath, keyPath string, hosts []string) (p *Pair, created bool, err error) {
	if p, err := loadPair(certPath, keyPath); err == nil && covers(p, hosts) {
		return p, false, nil
	}
	if p, err = SelfSigned(hosts, StoredLifetime); err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(filepath.Dir(keyPath), 0o700); err != nil {
		return nil, false, err
	}
	if err := writeFile(keyPath, p.KeyPEM, 0o600); err != nil {
		return nil, false, err
	}
	if err := writeFile(certPath, p.CertPEM, 0o644); err != nil {
		return nil, false, err
	}
	return p, true, nil
}

func loadPair(certPath, keyPath string) (*Pair, error) {
	c, err := ReadPEM(certPath)
	if err != nil {
		return nil, err
	}
	k, err := ReadPEM(keyPath)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(c, k)
	if err != nil {
		return nil, err
	}
	return &Pair{Cert: pair, CertPEM: c, KeyPEM: k}, nil
}

// covers reports whether the certificate is valid for every host for at
// least StoredRenewal more.
func covers(p *Pair, hosts []string) bool {
	leaf, err := x509.ParseCertificate(p.Cert.Certificate[0])
	if err != nil || time.Until(leaf.NotAfter) < StoredRenewal {
		return false
	}
	for _, h := range hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// writeFile replaces path through a temporary file in its folder, never
// writing through a symlink.
func writeFile(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Loopback is SelfSigned for localhost, 127.0.0.1 and ::1.
func Loopback() (*Pair, error) {
	return SelfSigned([]string{"localhost", "127.0.0.1", "::1"}, 7*24*time.Hour)
}

// Pool returns a cert pool holding the given PEM certificates.
func Pool(pems ...[]byte) *x509.CertPool {
	p := x509.NewCertPool()
	for _, b := range pems {
		p.AppendCertsFromPEM(b)
	}
	return p
}
