// Package subject mints the load generator's subject tokens and publishes the
// matching JWKS, the role of the article's k6 script and perf-jwks-server.
package subject

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/internal/tlscert"
)

// Supported JWS algorithms for subject and issued tokens.
const (
	RS256 = "RS256"
	ES256 = "ES256"
	EdDSA = "EdDSA"
)

// Algorithms is the allow-list in preference order.
var Algorithms = []string{RS256, ES256, EdDSA}

// Key is a signing key with its JWS algorithm and RFC 7638 thumbprint kid.
type Key struct {
	Alg    string
	Kid    string
	Signer crypto.Signer
	method jwt.SigningMethod
}

// Method is the golang-jwt signing method for the key.
func (k *Key) Method() jwt.SigningMethod { return k.method }

// GenerateKey creates a fresh key for alg (RSA-2048 for RS256).
func GenerateKey(alg string) (*Key, error) {
	var s crypto.Signer
	var err error
	switch alg {
	case RS256:
		s, err = rsa.GenerateKey(rand.Reader, 2048)
	case ES256:
		s, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case EdDSA:
		_, s, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, fmt.Errorf("unsupported algorithm %q (want RS256, ES256 or EdDSA)", alg)
	}
	if err != nil {
		return nil, err
	}
	return NewKey(s)
}

// NewKey wraps a signer, deriving the algorithm from its type.
func NewKey(s crypto.Signer) (*Key, error) {
	k := &Key{Signer: s}
	switch p := s.(type) {
	case *rsa.PrivateKey:
		if p.N.BitLen() < 2048 {
			return nil, errors.New("RSA key shorter than 2048 bits")
		}
		k.Alg, k.method = RS256, jwt.SigningMethodRS256
	case *ecdsa.PrivateKey:
		if p.Curve != elliptic.P256() {
			return nil, errors.New("ECDSA key is not on P-256 (ES256)")
		}
		k.Alg, k.method = ES256, jwt.SigningMethodES256
	case ed25519.PrivateKey:
		k.Alg, k.method = EdDSA, jwt.SigningMethodEdDSA
	default:
		return nil, fmt.Errorf("unsupported key type %T", s)
	}
	jwk := jose.JSONWebKey{Key: s.Public()}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	k.Kid = base64.RawURLEncoding.EncodeToString(tp)
	return k, nil
}

// WithKid is the key under another kid (one a server registered it with);
// "" keeps the RFC 7638 thumbprint.
func (k *Key) WithKid(kid string) *Key {
	if kid == "" {
		return k
	}
	c := *k
	c.Kid = kid
	return &c
}

// MarshalPEM encodes the private key as PKCS#8 PEM.
func (k *Key) MarshalPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.Signer)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParsePEM reads a PKCS#8, PKCS#1 or SEC 1 private key.
func ParsePEM(data []byte) (*Key, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block found")
	}
	var s any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		s, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		s, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		s, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", block.Type, err)
	}
	signer, ok := s.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("unsupported key type %T", s)
	}
	return NewKey(signer)
}

// LoadPEM reads a private key file (at most tlscert.MaxPEMBytes).
func LoadPEM(path string) (*Key, error) {
	data, err := tlscert.ReadPEM(path)
	if err != nil {
		return nil, err
	}
	k, err := ParsePEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// LoadOrCreate returns the key at path, creating it (0600) with alg when the
// file does not exist, so that a key an authorization server trusts stays
// stable across runs.
func LoadOrCreate(path, alg string) (*Key, error) {
	if _, err := os.Stat(path); err == nil {
		return LoadPEM(path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	k, err := GenerateKey(alg)
	if err != nil {
		return nil, err
	}
	data, err := k.MarshalPEM()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) { // lost a race with another tokex
			return LoadPEM(path)
		}
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	return k, f.Close()
}

// PublicJWK is the key's public JWK with kid, alg and use=sig.
func (k *Key) PublicJWK() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.Signer.Public(), KeyID: k.Kid, Algorithm: k.Alg, Use: "sig"}
}

// PrivateJWK is the key as a private JWK (for the k6 agents' WebCrypto).
func (k *Key) PrivateJWK() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.Signer, KeyID: k.Kid, Algorithm: k.Alg, Use: "sig"}
}

// JWKS renders a public JWK Set of keys.
func JWKS(keys ...*Key) ([]byte, error) {
	set := jose.JSONWebKeySet{}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.PublicJWK())
	}
	return json.Marshal(set)
}
