package jose

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/internal/jwks"
)

// An inbound compact JWS is read here, without golang-jwt's header and
// claims maps, in golang-jwt's order and with its verdicts (the old path is
// kept as the oracle of the differential tests, oracle_test.go): header
// checks, three segments, header, claims, alg, signature segment, allowed
// alg, key, signature; then the time and issuer claims (Claims.CheckTimes).

// b64 is the strict base64url of JWS segments (no padding, no stray bits).
var b64 = base64.RawURLEncoding.Strict()

// Error is why a token was refused: a fixed phrase that never quotes the
// token and follows the token's name ("subject token is expired").
type Error struct{ desc string }

func (e *Error) Error() string { return e.desc }

// Phrases for refused tokens.
const (
	phraseMalformed  = "is malformed"
	phraseUnknownKey = "is signed with an unknown key"
	phraseBadSig     = "signature is invalid or its algorithm is not allowed"
	phraseExpired    = "is expired"
	phraseNotYet     = "is not valid yet"
	phraseMissing    = "lacks a required claim"
	phraseIssuer     = "issuer is not trusted"
)

var (
	errMalformed  = &Error{phraseMalformed}
	errUnknownAlg = &Error{phraseUnknownKey}
	errBadSig     = &Error{phraseBadSig}
	errExpired    = &Error{phraseExpired}
	errNotYet     = &Error{phraseNotYet}
	errMissing    = &Error{phraseMissing}
	// ErrIssuer is CheckTimes' verdict on an iss other than the one
	// expected.
	ErrIssuer = &Error{phraseIssuer}
)

// KidKind is how a header carries kid.
type KidKind uint8

// kid states of a header.
const (
	KidAbsent KidKind = iota
	KidString
	KidOther // present but not a string
)

// Header is what tokex reads from a JOSE header.
type Header struct {
	Alg     string
	AlgOK   bool // alg is present and a string
	Kid     string
	KidKind KidKind
}

// maxCachedHeader and maxCachedHeaders bound the header cache.
const (
	maxCachedHeader  = 512
	maxCachedHeaders = 64
)

// headerCache maps an encoded header segment to its reading. Only headers of
// tokens that verified are added, so a client cannot fill it with unsigned
// headers; a full cache only sends new headers down the slow path.
type headerCache struct {
	m  atomic.Pointer[map[string]Header] // replaced whole, read without locks
	mu sync.Mutex
}

func (c *headerCache) get(seg string) (Header, bool) {
	if m := c.m.Load(); m != nil {
		h, ok := (*m)[seg]
		return h, ok
	}
	return Header{}, false
}

func (c *headerCache) add(seg string, h Header) {
	if len(seg) > maxCachedHeader {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil && (len(*old) >= maxCachedHeaders || (*old)[seg] == h) {
		return
	}
	m := make(map[string]Header, 1+len(deref(old)))
	for k, v := range deref(old) {
		m[k] = v
	}
	m[strings.Clone(seg)] = h
	c.m.Store(&m)
}

func deref(m *map[string]Header) map[string]Header {
	if m == nil {
		return nil
	}
	return *m
}

// Verifier checks inbound compact JWS tokens: the strict reader, an
// algorithm allow-list, the one key the caller picks, the signature. It
// caches the readings of headers that verified. The zero Verifier allows no
// algorithm; it must not be copied after first use.
type Verifier struct {
	Algorithms []string // RS256, ES256, EdDSA
	headers    headerCache
}

// KeyFunc returns the one key that may verify a token with header h and
// claims c (not verified yet). Its error is returned by Verify as it is.
type KeyFunc func(h Header, c *Claims) (crypto.PublicKey, error)

// Verify reads raw and checks its algorithm and signature with the key
// that key returns. The claims are then those the key's holder signed;
// their times and issuer are the caller's to check (Claims.CheckTimes).
// The error is an *Error phrase (or key's error).
func (v *Verifier) Verify(raw string, key KeyFunc) (*Claims, error) {
	t, err := v.parse(raw)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(v.Algorithms, t.header.Alg) {
		return nil, errBadSig
	}
	pub, err := key(t.header, &t.claims)
	if err != nil {
		return nil, err
	}
	if !t.verifySignature(pub) {
		return nil, errBadSig
	}
	if !t.cached {
		v.headers.add(t.headerSeg, t.header)
	}
	return &t.claims, nil
}

// compactJWS is an inbound token split and decoded, before its signature is
// checked.
type compactJWS struct {
	header       Header
	headerSeg    string
	cached       bool   // header came from the cache
	signingInput string // header.payload
	sig          []byte
	der          [72]byte // room for an ES256 signature in DER
	claims       Claims
}

// parse reads raw up to (not including) the signature check. The error is
// an *Error phrase ("header …", "is …").
func (v *Verifier) parse(raw string) (*compactJWS, error) {
	t := &compactJWS{}
	seg, rest, dotted := strings.Cut(raw, ".")
	t.headerSeg = seg
	t.header, t.cached = v.headers.get(seg)
	if !t.cached && dotted {
		if err := checkHeader(raw); err != nil {
			return nil, &Error{"header " + err.Error()}
		}
	}
	payloadSeg, sigSeg, ok := strings.Cut(rest, ".")
	if !dotted || !ok || strings.IndexByte(sigSeg, '.') >= 0 {
		return nil, errMalformed
	}
	if !t.cached {
		hb, err := b64.DecodeString(seg)
		if err != nil {
			return nil, errMalformed
		}
		if t.header, ok = readHeader(hb); !ok {
			return nil, errMalformed
		}
	}
	payload, err := b64.DecodeString(payloadSeg)
	if err != nil || !json.Valid(payload) {
		return nil, errMalformed
	}
	// A null payload leaves the claims empty, as encoding/json does.
	if string(bytes.TrimSpace(payload)) != "null" {
		if err := t.claims.decode(payload); err != nil {
			return nil, err
		}
	}
	if !t.header.AlgOK || jwt.GetSigningMethod(t.header.Alg) == nil {
		return nil, errUnknownAlg
	}
	if t.sig, err = b64.DecodeString(sigSeg); err != nil {
		return nil, errMalformed
	}
	t.signingInput = raw[:len(seg)+1+len(payloadSeg)]
	return t, nil
}

// readHeader reads alg and kid as golang-jwt does: from the header decoded
// into a map (checkHeader has refused duplicate and case-variant names).
func readHeader(b []byte) (Header, bool) {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return Header{}, false
	}
	var h Header
	h.Alg, h.AlgOK = m["alg"].(string)
	if kv, has := m["kid"]; has {
		h.KidKind = KidOther
		if s, ok := kv.(string); ok {
			h.Kid, h.KidKind = s, KidString
		}
	}
	return h, true
}

// Key selection errors.
var (
	errKidNotString = &Error{"header kid is not a string"}
	errKidAmbiguous = &Error{"has no kid and the JWKS holds more than one key for its alg"}
	errUnknownKey   = &Error{"is signed with an unknown key"}
	errKeyMismatch  = &Error{"names a key that does not fit its alg"}
)

// KeyFor is the one key of set that may verify a token with header h
// (jwks.Set.Select: by kid, or the only key that fits the alg); the error
// is an *Error phrase.
func KeyFor(set *jwks.Set, h Header) (crypto.PublicKey, error) {
	if h.KidKind == KidOther {
		return nil, errKidNotString
	}
	k, err := set.Select(h.Alg, h.Kid, h.KidKind == KidString)
	switch {
	case errors.Is(err, jwks.ErrAmbiguous):
		return nil, errKidAmbiguous
	case errors.Is(err, jwks.ErrMismatch):
		return nil, errKeyMismatch
	case err != nil:
		return nil, errUnknownKey
	}
	return k.Public, nil
}

// verifySignature checks the signature with the key KeyFor found for the
// alg; a key of another type fails.
func (t *compactJWS) verifySignature(key crypto.PublicKey) bool {
	alg, signingInput, sig := t.header.Alg, t.signingInput, t.sig
	switch alg {
	case ES256:
		pub, ok := key.(*ecdsa.PublicKey)
		if !ok || len(sig) != 64 {
			return false
		}
		d := sha256.Sum256([]byte(signingInput))
		return ecdsa.VerifyASN1(pub, d[:], appendES256DER(t.der[:0], sig))
	case RS256:
		pub, ok := key.(*rsa.PublicKey)
		if !ok {
			return false
		}
		d := sha256.Sum256([]byte(signingInput))
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], sig) == nil
	case EdDSA:
		pub, ok := key.(ed25519.PublicKey)
		return ok && len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, []byte(signingInput), sig)
	}
	return false
}

// appendES256DER appends JWS's r‖s (RFC 7518 §3.4, 32 bytes each) as the
// ASN.1 DER SEQUENCE of two INTEGERs that ecdsa.VerifyASN1 reads: minimal
// big-endian, a zero byte before a set high bit. At most 72 bytes.
// appendRawES256 (sign.go) is the other direction.
func appendES256DER(dst, sig []byte) []byte {
	r, s := trimZeros(sig[:32]), trimZeros(sig[32:])
	dst = append(dst, 0x30, byte(2+derIntLen(r)+2+derIntLen(s)))
	return appendDERInt(appendDERInt(dst, r), s)
}

// trimZeros drops leading zero bytes, keeping one for zero.
func trimZeros(n []byte) []byte {
	for len(n) > 1 && n[0] == 0 {
		n = n[1:]
	}
	return n
}

func derIntLen(n []byte) int {
	if n[0]&0x80 != 0 {
		return len(n) + 1
	}
	return len(n)
}

func appendDERInt(dst, n []byte) []byte {
	l := derIntLen(n)
	dst = append(dst, 0x02, byte(l))
	if l > len(n) {
		dst = append(dst, 0)
	}
	return append(dst, n...)
}
