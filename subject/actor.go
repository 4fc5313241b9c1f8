package subject

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/statedir"
)

// Actor tokens (RFC 8693 §2.1 actor_token) are the agents' own workload
// identities: signed by a key of their own under an issuer of their own,
// so that a user's subject token can never pass for an agent and an
// agent's identity never for a user. tokex publishes the actor keys beside
// the subject keys (`tokex jwks --serve` serves them at <issuer>/actors).

// ActorPath is the actor issuer's path below the subject issuer.
const ActorPath = "/actors"

// ActorIssuer is the actor issuer that goes with a subject issuer: the
// subject issuer's URL with /actors appended (https://pf-perf-subject →
// https://pf-perf-subject/actors).
func ActorIssuer(subjectIssuer string) string {
	return strings.TrimSuffix(subjectIssuer, "/") + ActorPath
}

// ActorMinter signs actor tokens: the agent's client id as sub, aud its
// client id (the reference server's default, subject.actor.audience
// client_id) unless Audience fixes one, iat, a short exp and a jti unique
// to the minter. It has Minter's shape: Mint(clientID) is safe for
// concurrent use, signs through jose.Key.AppendCompact under a header
// encoded once, and costs one signature and a few appends.
type ActorMinter struct {
	Key      *jose.Key
	Issuer   string // ActorIssuer(subject issuer), or the configured actor issuer
	Lifetime time.Duration
	Audience string // "": the presenting agent's client id
	Prefix   string // jti prefix, unique per campaign and agent
	Now      func() time.Time

	seq    atomic.Uint64
	once   sync.Once
	header string // base64url of the header, with the dot
	err    error
	bufs   sync.Pool
}

func (m *ActorMinter) init() {
	if m.Key == nil {
		m.err = fmt.Errorf("actor minter: no key")
		return
	}
	m.header = jose.EncodeHeader(m.Key.Alg, m.Key.Kid, "JWT")
	m.err = m.Key.CanSign()
}

// Mint signs the actor token of the agent whose client id is clientID.
func (m *ActorMinter) Mint(clientID string) (string, error) {
	m.once.Do(m.init)
	if m.err != nil {
		return "", m.err
	}
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	t := now().Unix()
	aud := m.Audience
	if aud == "" {
		aud = clientID
	}
	bp, _ := m.bufs.Get().(*[2][]byte)
	if bp == nil {
		bp = &[2][]byte{make([]byte, 0, 512), make([]byte, 0, 256)}
	}
	b := appendRegistered(bp[1][:0], m.Issuer, clientID, aud, t, m.Lifetime)
	b = append(b, `,"jti":"`...)
	b = append(b, jsonStringBody(m.Prefix+strconv.FormatUint(m.seq.Add(1)-1, 36))...)
	b = append(b, `"}`...)
	out, err := signCompact(bp, m.header, b, m.Key)
	m.bufs.Put(bp)
	return out, err
}

// StoredActorKey returns tokex's stored actor key for alg, creating it on
// first use (actor-key-<alg>.pem in the state folder, beside the subject
// keys): stable across runs, so a server that trusts the actor issuer
// keeps working. Its kid is its RFC 7638 thumbprint, unlike any subject
// key's.
func StoredActorKey(alg string) (*jose.Key, string, error) {
	if err := checkAlg(alg); err != nil {
		return nil, "", err
	}
	p, err := statedir.ActorKeyPath(alg)
	if err != nil {
		return nil, "", err
	}
	k, err := LoadOrCreate(p, alg)
	if err == nil && k.Alg != alg {
		return nil, "", fmt.Errorf("%s holds a %s key, not %s", p, k.Alg, alg)
	}
	return k, p, err
}

// ActorKeys are the actor keys a command works with: the stored key of alg,
// else the stored key of every algorithm (jose.Algorithms order).
func ActorKeys(alg string) ([]*jose.Key, error) {
	algs := jose.Algorithms
	if alg != "" {
		algs = []string{alg}
	}
	var out []*jose.Key
	for _, a := range algs {
		k, _, err := StoredActorKey(a)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}
