// Package jwks reads JSON Web Key Sets (RFC 7517) into verification keys and
// picks the one key that may verify a token: the reference server reads its
// subject JWKS with it, the generator the target's JWKS to verify issued
// tokens. Both sets may be hostile.
package jwks

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/MicahParks/jwkset"
)

// MaxBytes caps a JWKS, from a file or fetched.
const MaxBytes = 1 << 20

// Key is one verification key of a set.
type Key struct {
	Kid    string
	Alg    string // the JWK's alg, "" when it names none
	Public crypto.PublicKey
}

// Fits reports whether the key may verify a signature made with alg:
// the key's type and curve match the algorithm, and so does the JWK's own
// alg when it has one.
func (k *Key) Fits(alg string) bool {
	if k.Alg != "" && k.Alg != alg {
		return false
	}
	switch p := k.Public.(type) {
	case *rsa.PublicKey:
		switch alg {
		case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
			return true
		}
	case *ecdsa.PublicKey:
		return alg == "ES256" && p.Curve == elliptic.P256() || alg == "ES384" && p.Curve == elliptic.P384() ||
			alg == "ES512" && p.Curve == elliptic.P521()
	case ed25519.PublicKey:
		return alg == "EdDSA" || alg == "Ed25519"
	}
	return false
}

// Set is a parsed JWK Set.
type Set struct {
	byKid map[string]*Key
	all   []*Key
}

// Len is the number of usable keys.
func (s *Set) Len() int { return len(s.all) }

// Has reports whether a key has this kid.
func (s *Set) Has(kid string) bool { return s.byKid[kid] != nil }

// Selection errors; their texts are fixed and quote nothing.
var (
	ErrAmbiguous = errors.New("has no kid and the JWKS holds more than one key for its alg")
	ErrUnknown   = errors.New("is signed with an unknown key")
	ErrMismatch  = errors.New("names a key that does not fit its alg")
)

// Select finds the one key that may verify a token with alg and, when
// hasKid, kid. A token without kid is verified only when exactly one key
// fits its alg: never tried against every key.
func (s *Set) Select(alg, kid string, hasKid bool) (*Key, error) {
	if !hasKid {
		var found *Key
		for _, k := range s.all {
			if k.Fits(alg) {
				if found != nil {
					return nil, ErrAmbiguous
				}
				found = k
			}
		}
		if found == nil {
			return nil, ErrUnknown
		}
		return found, nil
	}
	k := s.byKid[kid]
	if k == nil {
		return nil, ErrUnknown
	}
	if !k.Fits(alg) {
		return nil, ErrMismatch
	}
	return k, nil
}

// Parse reads a JWK set. Keys that cannot verify a JWS (private or
// symmetric material, use other than sig, RSA under 2048 bits, unsupported
// types) are skipped; a kid held by two keys is ambiguous and dropped. skip
// (may be nil) learns each skipped key and why.
func Parse(raw []byte, skip func(index int, kid, why string)) (*Set, error) {
	if len(raw) > MaxBytes {
		return nil, errors.New("larger than 1 MiB (the limit for a JWKS)")
	}
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("not a JWK set: %w", err)
	}
	if skip == nil {
		skip = func(int, string, string) {}
	}
	s := &Set{byKid: map[string]*Key{}}
	dup := map[string]bool{}
	for i, m := range set.Keys {
		if m.USE != "" && m.USE != jwkset.UseSig {
			skip(i, m.KID, "use is not sig")
			continue
		}
		jwk, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
		if err != nil {
			skip(i, m.KID, err.Error())
			continue
		}
		var pub crypto.PublicKey
		switch k := jwk.Key().(type) {
		case *rsa.PublicKey:
			if k.N.BitLen() < 2048 {
				skip(i, m.KID, "RSA key shorter than 2048 bits")
				continue
			}
			pub = k
		case *ecdsa.PublicKey:
			pub = k
		case ed25519.PublicKey:
			pub = k
		default:
			skip(i, m.KID, fmt.Sprintf("unsupported key type %T", k))
			continue
		}
		k := &Key{Kid: m.KID, Alg: m.ALG.String(), Public: pub}
		if k.Kid != "" {
			if _, taken := s.byKid[k.Kid]; taken || dup[k.Kid] {
				dup[k.Kid] = true
				delete(s.byKid, k.Kid)
				skip(i, m.KID, "kid held by two keys")
				continue
			}
			s.byKid[k.Kid] = k
		}
		s.all = append(s.all, k)
	}
	if len(dup) > 0 {
		all := s.all[:0]
		for _, k := range s.all {
			if !dup[k.Kid] {
				all = append(all, k)
			}
		}
		s.all = all
	}
	return s, nil
}
