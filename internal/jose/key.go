// Package jose is tokex's JOSE: signing keys and their JWKs, compact JWS
// signing (sign.go), the strict reader and verifier of inbound tokens
// (parse.go, claims.go), and the verification of tokens a target issues
// (jwt.go). It is the only package outside key generation and
// internal/jwks that touches crypto/ecdsa, crypto/rsa or crypto/ed25519.
//
// The hot paths (a subject token minted, one verified and one issued per
// exchange) write and read the bytes themselves; golang-jwt, which wrote
// and read them before, is the tests' oracle (oracle_test.go, sign_test.go).
package jose

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

	gojose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
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
	jwk := gojose.JSONWebKey{Key: s.Public()}
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

// PublicJWK is the key's public JWK with kid, alg and use=sig.
func (k *Key) PublicJWK() gojose.JSONWebKey {
	return gojose.JSONWebKey{Key: k.Signer.Public(), KeyID: k.Kid, Algorithm: k.Alg, Use: "sig"}
}

// PrivateJWK is the key as a private JWK (for the k6 agents' WebCrypto).
func (k *Key) PrivateJWK() gojose.JSONWebKey {
	return gojose.JSONWebKey{Key: k.Signer, KeyID: k.Kid, Algorithm: k.Alg, Use: "sig"}
}

// JWKS renders a public JWK Set of keys.
func JWKS(keys ...*Key) ([]byte, error) {
	set := gojose.JSONWebKeySet{}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.PublicJWK())
	}
	return json.Marshal(set)
}
