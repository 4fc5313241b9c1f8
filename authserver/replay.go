package authserver

import (
	"crypto/sha256"
	"sync"
)

// replayCache remembers the jti of every accepted client assertion until
// it expires (RFC 7523 §3 item 7), and at most max of them: when full it
// refuses new assertions rather than forget one still valid. Entries sit in
// buckets by expiry, so forgetting the expired costs a map delete per
// bucket, never a scan of the entries.
type replayCache struct {
	mu      sync.Mutex
	width   int64 // seconds of expiry per bucket
	leeway  int64 // seconds an expired assertion is still accepted
	buckets map[int64]map[[16]byte]struct{}
	n, max  int
}

func newReplayCache(max int, width, leeway int64) *replayCache {
	return &replayCache{width: max64(width, 1), leeway: leeway, max: max, buckets: map[int64]map[[16]byte]struct{}{}}
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
	replayFull
)

// add records the assertion (client, jti) that expires at exp (unix
// seconds), now being now; replaySeen when it was recorded before.
func (c *replayCache) add(client, jti string, exp, now int64) replayVerdict {
	h := sha256.New()
	h.Write([]byte(client))
	h.Write([]byte{0})
	h.Write([]byte(jti))
	var key [16]byte
	copy(key[:], h.Sum(nil))
	c.mu.Lock()
	defer c.mu.Unlock()
	for b, m := range c.buckets {
		if (b+1)*c.width <= now-c.leeway { // every entry expired beyond the leeway
			c.n -= len(m)
			delete(c.buckets, b)
			continue
		}
		if _, ok := m[key]; ok {
			return replaySeen
		}
	}
	if c.n >= c.max {
		return replayFull
	}
	b := exp / c.width
	m := c.buckets[b]
	if m == nil {
		m = map[[16]byte]struct{}{}
		c.buckets[b] = m
	}
	m[key] = struct{}{}
	c.n++
	return replayNew
}
