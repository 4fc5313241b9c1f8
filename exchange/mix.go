package exchange

import (
	"math"
	"strconv"
	"strings"
)

// Weight is one grant's share of a mix.
type Weight struct {
	Grant  Grant   `json:"kind"`
	Weight float64 `json:"weight"`
}

// Mix draws each arrival's grant from weights (workload.mix): arrival seq
// of agent is grant i when a 32-bit hash of (seed, agent, seq) falls below
// the i-th cumulative threshold. The draw is a function of the arrival,
// not of an order, so both drivers draw the same grant for it and anyone
// can draw it again from the seed.
type Mix struct {
	Seed    uint32   `json:"seed"`
	Weights []Weight `json:"weights"`
}

// Thresholds are the cumulative bounds of the weights on the hash's 2³²
// values; the last is 2³². The k6 agent script gets them as they are
// (MixEnv), so no float arithmetic has to agree between Go and JavaScript.
func (m Mix) Thresholds() []uint64 {
	var total float64
	for _, w := range m.Weights {
		total += max(w.Weight, 0)
	}
	out := make([]uint64, len(m.Weights))
	var cum float64
	for i, w := range m.Weights {
		cum += max(w.Weight, 0)
		out[i] = uint64(math.Floor(cum / total * (1 << 32)))
	}
	if n := len(out); n > 0 {
		out[n-1] = 1 << 32
	}
	return out
}

// Draw is the grant of agent's arrival seq.
func (m Mix) Draw(agent int, seq int64) Grant {
	return m.pick(m.Thresholds(), agent, seq)
}

// Drawer is Draw with the thresholds computed once.
func (m Mix) Drawer() func(agent int, seq int64) Grant {
	th := m.Thresholds()
	return func(agent int, seq int64) Grant { return m.pick(th, agent, seq) }
}

func (m Mix) pick(th []uint64, agent int, seq int64) Grant {
	h := uint64(MixHash(m.Seed, agent, seq))
	for i, t := range th {
		if h < t {
			return m.Weights[i].Grant
		}
	}
	return GrantExchange
}

// MixEnv is the mix as the k6 agent script reads it: grant:threshold,…
func (m Mix) MixEnv() string {
	var parts []string
	for i, t := range m.Thresholds() {
		parts = append(parts, string(m.Weights[i].Grant)+":"+strconv.FormatUint(t, 10))
	}
	return strings.Join(parts, ",")
}

// MixHash is the arrival's 32-bit hash: murmur3's finaliser over the seed,
// the agent and both halves of seq, the arithmetic of JavaScript's
// Math.imul and >>> (the agent script's mixHash).
func MixHash(seed uint32, agent int, seq int64) uint32 {
	h := fmix32(seed ^ 0x9e3779b9)
	h = fmix32(h ^ uint32(agent))
	h = fmix32(h ^ uint32(uint64(seq)))
	return fmix32(h ^ uint32(uint64(seq)>>32))
}

func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
