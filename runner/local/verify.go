package local

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math"
	"sync/atomic"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// verifySampler picks the successes whose issued token is verified
// (check.verify.sample): each success independently with probability p,
// by AES under a secret key drawn for the run over (agent, seq) — the
// keystream of a CSPRNG per agent, read at the arrival's position. A
// target cannot tell which of its answers will be checked (issue 25 item
// 3: "every 10th" let it sign only those), and with the key, written to
// the evidence once the run ended, anyone can tell which were.
type verifySampler struct {
	block     cipher.Block
	key       [16]byte
	threshold uint64 // pick when the block's first 8 bytes are below it
	all       bool   // p = 1
	p         float64
	// The run's measured phase: tokens verified and failed.
	checked, failed atomic.Int64
}

// newVerifySampler draws a fresh key for one run.
func newVerifySampler(p float64) *verifySampler {
	s := &verifySampler{p: p, all: p >= 1}
	_, _ = rand.Read(s.key[:]) // crypto/rand never fails on a supported platform
	s.block, _ = aes.NewCipher(s.key[:])
	if !s.all {
		s.threshold = uint64(math.Ldexp(max(p, 0), 64))
	}
	return s
}

// pick reports whether agent's arrival seq, if it succeeds, is verified.
func (s *verifySampler) pick(agent int, seq int64) bool {
	if s.all {
		return true
	}
	var in, out [aes.BlockSize]byte
	binary.BigEndian.PutUint64(in[:8], uint64(agent))
	binary.BigEndian.PutUint64(in[8:], uint64(seq))
	s.block.Encrypt(out[:], in[:])
	return binary.BigEndian.Uint64(out[:8]) < s.threshold
}

// count files one verification of the measured phase.
func (s *verifySampler) count(phase stats.Phase, failed bool) {
	if phase != stats.Measured {
		return
	}
	s.checked.Add(1)
	if failed {
		s.failed.Add(1)
	}
}

// result is the run's verification for its evidence, with the key.
func (s *verifySampler) result() *sample.Verification {
	return &sample.Verification{Sample: s.p, Checked: s.checked.Load(), Failed: s.failed.Load(), Key: hex.EncodeToString(s.key[:])}
}
