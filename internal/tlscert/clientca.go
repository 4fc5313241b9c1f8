package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// ClientCA issues the agents' client certificates for tls_client_auth
// (RFC 8705): a P-256 CA the server is told to trust, each agent's
// certificate with the subject CN=<client id>.
type ClientCA struct {
	Pair // the CA's own certificate and key
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewClientCA creates a CA valid for lifetime.
func NewClientCA(lifetime time.Duration) (*ClientCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl, err := template(pkix.Name{CommonName: "tokex client CA", Organization: []string{"tokex"}}, lifetime)
	if err != nil {
		return nil, err
	}
	tmpl.KeyUsage, tmpl.IsCA, tmpl.BasicConstraintsValid = x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature, true, true
	p, err := sign(tmpl, tmpl, key, key)
	if err != nil {
		return nil, err
	}
	return clientCA(p)
}

// clientCA reads the CA's certificate and key back from p.
func clientCA(p *Pair) (*ClientCA, error) {
	leaf, err := x509.ParseCertificate(p.Cert.Certificate[0])
	if err != nil {
		return nil, err
	}
	key, ok := p.Cert.PrivateKey.(*ecdsa.PrivateKey)
	if !ok || !leaf.IsCA {
		return nil, errors.New("not a tokex client CA (a P-256 CA certificate and its key)")
	}
	return &ClientCA{Pair: *p, cert: leaf, key: key}, nil
}

// Issue makes a client certificate for cn (the subject DN CN=cn), valid
// for lifetime, for TLS client authentication only.
func (ca *ClientCA) Issue(cn string, lifetime time.Duration) (*Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl, err := template(pkix.Name{CommonName: cn}, lifetime)
	if err != nil {
		return nil, err
	}
	tmpl.KeyUsage, tmpl.ExtKeyUsage = x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return sign(tmpl, ca.cert, key, ca.key)
}

// Issued reports whether p is a certificate of this CA for cn, valid for
// StoredRenewal more.
func (ca *ClientCA) Issued(p *Pair, cn string) bool {
	leaf, err := x509.ParseCertificate(p.Cert.Certificate[0])
	return err == nil && leaf.Subject.CommonName == cn && leaf.CheckSignatureFrom(ca.cert) == nil &&
		time.Until(leaf.NotAfter) > StoredRenewal
}

// StoredClientCA is the client CA kept in certPath and keyPath, created on
// first use (or when it nears its end).
func StoredClientCA(certPath, keyPath string) (ca *ClientCA, created bool, err error) {
	if p, err := loadPair(certPath, keyPath); err == nil {
		if ca, err := clientCA(p); err == nil && time.Until(ca.cert.NotAfter) > StoredRenewal {
			return ca, false, nil
		}
	}
	if ca, err = NewClientCA(StoredLifetime); err != nil {
		return nil, false, err
	}
	return ca, true, store(&ca.Pair, certPath, keyPath)
}

// StoredClientCert is cn's certificate kept in certPath and keyPath,
// issued by ca when missing, another CA's, or near its end.
func (ca *ClientCA) StoredClientCert(cn, certPath, keyPath string) (*Pair, error) {
	if p, err := loadPair(certPath, keyPath); err == nil && ca.Issued(p, cn) {
		return p, nil
	}
	p, err := ca.Issue(cn, StoredLifetime)
	if err != nil {
		return nil, err
	}
	return p, store(p, certPath, keyPath)
}

// store writes the key (0600) and the certificate (0644).
func store(p *Pair, certPath, keyPath string) error {
	if err := os.MkdirAll(filepath.Dir(keyPath), 0o700); err != nil {
		return err
	}
	if err := writeFile(keyPath, p.KeyPEM, 0o600); err != nil {
		return err
	}
	return writeFile(certPath, p.CertPEM, 0o644)
}

// template is a certificate for subject, valid from a minute ago.
func template(subject pkix.Name, lifetime time.Duration) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return &x509.Certificate{SerialNumber: serial, Subject: subject, NotBefore: now.Add(-time.Minute), NotAfter: now.Add(lifetime)}, nil
}

// sign issues tmpl for key's public half, signed by parent's key.
func sign(tmpl, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) (*Pair, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	p := &Pair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
	p.Cert, err = tls.X509KeyPair(p.CertPEM, p.KeyPEM)
	return p, err
}
