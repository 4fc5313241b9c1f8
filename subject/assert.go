package subject

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokex-dev/tokex/internal/jose"
)

// Asserter signs one client's RFC 7523 client assertions (private_key_jwt):
// iss and sub the client id, aud the authorization server, a short exp and
// a jti unique to the asserter. Like Minter it signs with the standard
// library directly under a header encoded once, so an ES256 assertion costs
// one ECDSA signature and a few appends.
type Asserter struct {
	Key      *jose.Key
	ClientID string
	Audience string // the token endpoint URL, or the server's issuer
	Lifetime time.Duration
	Prefix   string // jti prefix, unique per campaign and client
	Now      func() time.Time

	seq    atomic.Uint64
	once   sync.Once
	head   string // base64url header and the dot
	fixed  []byte // `{"iss":…,"sub":…,"aud":…,"iat":` — the constant claims
	jti    string // `,"jti":"<prefix>` JSON-escaped
	err    error
	bufs   sync.Pool
	secLen int64
}

func (a *Asserter) init() {
	a.head = jose.EncodeHeader(a.Key.Alg, a.Key.Kid, "JWT")
	b := append([]byte(`{"iss":`), appendJSONString(nil, a.ClientID)...)
	b = append(append(b, `,"sub":`...), appendJSONString(nil, a.ClientID)...)
	b = append(append(b, `,"aud":`...), appendJSONString(nil, a.Audience)...)
	a.fixed = append(b, `,"iat":`...)
	a.jti = `,"jti":"` + jsonStringBody(a.Prefix)
	a.secLen = int64(a.Lifetime / time.Second)
	a.err = a.Key.CanSign()
}

// Assert signs a fresh assertion, valid from now for Lifetime.
func (a *Asserter) Assert() (string, error) {
	a.once.Do(a.init)
	if a.err != nil {
		return "", a.err
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	t := now().Unix()
	bp, _ := a.bufs.Get().(*[2][]byte)
	if bp == nil {
		bp = &[2][]byte{make([]byte, 0, 512), make([]byte, 0, 256)}
	}
	b := append(bp[1][:0], a.fixed...)
	b = strconv.AppendInt(b, t, 10)
	b = append(b, `,"exp":`...)
	b = strconv.AppendInt(b, t+a.secLen, 10)
	b = append(b, a.jti...)
	b = strconv.AppendUint(b, a.seq.Add(1)-1, 36)
	b = append(b, `"}`...)
	out, err := signCompact(bp, a.head, b, a.Key)
	a.bufs.Put(bp)
	return out, err
}
