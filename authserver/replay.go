package authserver

import (
	"crypto/sha256"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// replayCache remembers the jti of every accepted client assertion until
// it expires (RFC 7523 §3 item 7), and at most max of them: when full it
// refuses new assertions rather than forget one still valid. Entries sit in
// buckets by expiry, so forgetting the expired costs a map delete per
// bucket (and one count per client in it), never a scan of the entries.
//
// The room is shared fairly: half of it is reserved, an equal share for
// each client that may send assertions, and the other half is a pool any
// client may use beyond its share. So one client that fills the cache is
// refused alone, and every other one keeps at least its share (issue 25
// item 10: one client denied private_key_jwt to all for the assertions'
// lifetime).
type replayCache struct {
	mu      sync.Mutex
	width   int64 // seconds of expiry per bucket
	leeway  int64 // seconds an expired assertion is still accepted
	buckets map[int64]*replayBucket
	n, max  int
	// share is each client's reserved room, pool the room beyond the
	// shares, pooled the entries using it (Σ max(0, held − share)).
	share, pool, pooled int
	held                map[string]int // live entries by client
}

// replayBucket holds the entries that expire within one bucket's width.
type replayBucket struct {
	keys map[[16]byte]struct{}
	by   map[string]int // entries by client
}

// newReplayCache holds at most max entries shared by clients clients (the
// ones that may authenticate by assertion).
func newReplayCache(max int, width, leeway int64, clients int) *replayCache {
	c := &replayCache{width: max64(width, 1), leeway: leeway, max: max, buckets: map[int64]*replayBucket{},
		held: map[string]int{}}
	if clients > 0 {
		c.share = max / (2 * clients)
	}
	c.pool = max - clients*c.share
	return c
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// replayVerdict is what add decided.
type replayVerdict int

const (
	replayNew replayVerdict = iota
	replaySeen
	replayFull // the client's share and the pool are full
)

// add records the client assertion (client, jti) that expires at exp
// (unix seconds), now being now; replaySeen when it was recorded before.
func (c *replayCache) add(client, jti string, exp, now int64) replayVerdict {
	return c.addKey(client, replayKey(client, jti), exp, now)
}

// replayKey is the hash of an assertion's issuer and jti (RFC 7523 §3 item
// 7: a jti is unique per issuer).
func replayKey(issuer, jti string) [16]byte {
	h := sha256.New()
	h.Write([]byte(issuer))
	h.Write([]byte{0})
	h.Write([]byte(jti))
	var key [16]byte
	copy(key[:], h.Sum(nil))
	return key
}

// addKey records the assertion key that expires at exp, charged to client
// (its share, then the pool); replaySeen when it was recorded before,
// whoever presented it then.
func (c *replayCache) addKey(client string, key [16]byte, exp, now int64) replayVerdict {
	c.mu.Lock()
	defer c.mu.Unlock()
	for b, bk := range c.buckets {
		if (b+1)*c.width <= now-c.leeway { // every entry expired beyond the leeway
			c.forget(bk)
			delete(c.buckets, b)
			continue
		}
		if _, ok := bk.keys[key]; ok {
			return replaySeen
		}
	}
	held := c.held[client]
	switch {
	case held < c.share && c.n < c.max:
	case c.pooled < c.pool && c.n < c.max:
		c.pooled++
	default:
		return replayFull
	}
	b := exp / c.width
	bk := c.buckets[b]
	if bk == nil {
		bk = &replayBucket{keys: map[[16]byte]struct{}{}, by: map[string]int{}}
		c.buckets[b] = bk
	}
	bk.keys[key] = struct{}{}
	bk.by[client]++
	c.held[client] = held + 1
	c.n++
	return replayNew
}

// forget releases an expired bucket's entries, client by client.
func (c *replayCache) forget(bk *replayBucket) {
	for client, k := range bk.by {
		was := c.held[client]
		now := was - k
		c.pooled -= max(0, was-c.share) - max(0, now-c.share)
		if now > 0 {
			c.held[client] = now
		} else {
			delete(c.held, client)
		}
	}
	c.n -= len(bk.keys)
}

// fullLog says, at most once per fullLogEvery, that assertions were
// refused because a client's share of the replay cache was full: which
// clients, how many refusals, how full the cache is.
type fullLog struct {
	what    string // "client assertions", "jwt-bearer assertions"
	mu      sync.Mutex
	last    time.Time
	refusal map[string]int // since the last line, by client (bounded: configured clients)
}

const fullLogEvery = 10 * time.Second

func (f *fullLog) refused(log *slog.Logger, client string, c *replayCache) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refusal == nil {
		f.refusal = map[string]int{}
	}
	f.refusal[client]++
	now := time.Now()
	if now.Sub(f.last) < fullLogEvery {
		return
	}
	f.last = now
	clients := slices.Sorted(maps.Keys(f.refusal))
	counts := make([]int, len(clients))
	for i, id := range clients {
		counts[i] = f.refusal[id]
	}
	c.mu.Lock()
	held, share, pool, pooled, n, max := c.held[client], c.share, c.pool, c.pooled, c.n, c.max
	c.mu.Unlock()
	log.Warn("replay cache: "+f.what+" refused (503): the client's share and the shared pool are full",
		"clients", clients, "refused", counts, "client_live", held, "share", share, "pool_used", pooled, "pool", pool,
		"entries", n, "replay_cache", max, "next_line_after", fullLogEvery)
	clear(f.refusal)
}
