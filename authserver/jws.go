package authserver

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/subject"
)

// The inbound compact JWS is read here, without golang-jwt's header and
// claims maps, in golang-jwt's order and with its verdicts (the old path is
// kept as the oracle of the differential tests): header checks, three
// segments, header, claims, alg, signature segment, allowed alg, key,
// signature, then the time and issuer claims.

// b64 is the strict base64url of JWS segments (no padding, no stray bits).
var b64 = base64.RawURLEncoding.Strict()

// Phrases for refused tokens; each follows "subject token " or "actor token ".
const (
	phraseMalformed  = "is malformed"
	phraseUnknownKey = "is signed with an unknown key"
	phraseBadSig     = "signature is invalid or its algorithm is not allowed"
	phraseExpired    = "is expired"
	phraseNotYet     = "is not valid yet"
	phraseMissing    = "lacks a required claim"
	phraseIssuer     = "issuer is not trusted"
)

// kid states of a header.
const (
	kidAbsent = iota
	kidString
	kidOther // present but not a string
)

// jwsHeader is what tokex reads from a JOSE header.
type jwsHeader struct {
	alg     string
	algOK   bool // alg is present and a string
	kid     string
	kidKind uint8
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
	m  atomic.Pointer[map[string]jwsHeader] // replaced whole, read without locks
	mu sync.Mutex
}

func (c *headerCache) get(seg string) (jwsHeader, bool) {
	if m := c.m.Load(); m != nil {
		h, ok := (*m)[seg]
		return h, ok
	}
	return jwsHeader{}, false
}

func (c *headerCache) add(seg string, h jwsHeader) {
	if len(seg) > maxCachedHeader {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil && (len(*old) >= maxCachedHeaders || (*old)[seg] == h) {
		return
	}
	m := make(map[string]jwsHeader, 1+len(deref(old)))
	for k, v := range deref(old) {
		m[k] = v
	}
	m[strings.Clone(seg)] = h
	c.m.Store(&m)
}

func deref(m *map[string]jwsHeader) map[string]jwsHeader {
	if m == nil {
		return nil
	}
	return *m
}

// compactJWS is an inbound token split and decoded, before its signature is
// checked.
type compactJWS struct {
	header       jwsHeader
	headerSeg    string
	cached       bool   // header came from the cache
	signingInput string // header.payload
	sig          []byte
	der          [72]byte // room for an ES256 signature in DER
	claims       inbound
}

// parseJWS reads raw up to (not including) the signature check. The error is
// a *tokenError phrase without the token's name ("header …", "is …").
func (v *verifier) parseJWS(raw string) (*compactJWS, error) {
	t := &compactJWS{}
	seg, rest, dotted := strings.Cut(raw, ".")
	t.headerSeg = seg
	t.header, t.cached = v.headers.get(seg)
	if !t.cached && dotted {
		if err := checkHeader(raw); err != nil {
			return nil, &tokenError{"header " + err.Error()}
		}
	}
	payloadSeg, sigSeg, ok := strings.Cut(rest, ".")
	if !dotted || !ok || strings.IndexByte(sigSeg, '.') >= 0 {
		return nil, &tokenError{phraseMalformed}
	}
	if !t.cached {
		hb, err := b64.DecodeString(seg)
		if err != nil {
			return nil, &tokenError{phraseMalformed}
		}
		if t.header, ok = readHeader(hb); !ok {
			return nil, &tokenError{phraseMalformed}
		}
	}
	payload, err := b64.DecodeString(payloadSeg)
	if err != nil || !json.Valid(payload) {
		return nil, &tokenError{phraseMalformed}
	}
	// A null payload leaves the claims empty, as encoding/json does.
	if string(bytes.TrimSpace(payload)) != "null" {
		if err := t.claims.decode(payload); err != nil {
			return nil, &tokenError{err.Error()}
		}
	}
	if !t.header.algOK || jwt.GetSigningMethod(t.header.alg) == nil {
		return nil, &tokenError{phraseUnknownKey}
	}
	if t.sig, err = b64.DecodeString(sigSeg); err != nil {
		return nil, &tokenError{phraseMalformed}
	}
	t.signingInput = raw[:len(seg)+1+len(payloadSeg)]
	return t, nil
}

// readHeader reads alg and kid as golang-jwt does: from the header decoded
// into a map (checkHeader has refused duplicate and case-variant names).
func readHeader(b []byte) (jwsHeader, bool) {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return jwsHeader{}, false
	}
	var h jwsHeader
	h.alg, h.algOK = m["alg"].(string)
	if kv, has := m["kid"]; has {
		h.kidKind = kidOther
		if s, ok := kv.(string); ok {
			h.kid, h.kidKind = s, kidString
		}
	}
	return h, true
}

// verifySignature checks the signature with the key jwks.Set.Select found
// for the alg; a key of another type fails.
func (t *compactJWS) verifySignature(key crypto.PublicKey) bool {
	alg, signingInput, sig := t.header.alg, t.signingInput, t.sig
	switch alg {
	case subject.ES256:
		pub, ok := key.(*ecdsa.PublicKey)
		if !ok || len(sig) != 64 {
			return false
		}
		d := sha256.Sum256([]byte(signingInput))
		return ecdsa.VerifyASN1(pub, d[:], appendES256DER(t.der[:0], sig))
	case subject.RS256:
		pub, ok := key.(*rsa.PublicKey)
		if !ok {
			return false
		}
		d := sha256.Sum256([]byte(signingInput))
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], sig) == nil
	case subject.EdDSA:
		pub, ok := key.(ed25519.PublicKey)
		return ok && len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, []byte(signingInput), sig)
	}
	return false
}

// appendES256DER appends JWS's r‖s (RFC 7518 §3.4, 32 bytes each) as the
// ASN.1 DER SEQUENCE of two INTEGERs that ecdsa.VerifyASN1 reads: minimal
// big-endian, a zero byte before a set high bit. At most 72 bytes.
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
