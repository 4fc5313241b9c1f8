package owner

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/tokex-dev/tokex/internal/statedir"
)

// sealPrefix names the seal's form.
const sealPrefix = "hmac-sha256:"

// Seal marks data that tokex wrote for this user and will later act on
// (an evidence folder's config.yaml, which `run --resume` follows): an
// HMAC under a key kept in tokex's state folder (statedir.OwnerKey), so
// that a folder written by someone else, or edited since, is told from
// one this user's tokex wrote. The seal itself is no secret.
func Seal(data []byte) (string, error) {
	key, err := statedir.OwnerKey()
	if err != nil {
		return "", err
	}
	return sealPrefix + hex.EncodeToString(mac(key, data)), nil
}

// Sealed reports whether seal is this user's Seal of data.
func Sealed(data []byte, seal string) bool {
	got, ok := strings.CutPrefix(seal, sealPrefix)
	if !ok {
		return false
	}
	sum, err := hex.DecodeString(got)
	if err != nil {
		return false
	}
	key, err := statedir.OwnerKey()
	if err != nil {
		return false
	}
	return hmac.Equal(sum, mac(key, data))
}

func mac(key, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("tokex sealed content v1\x00"))
	m.Write(data)
	return m.Sum(nil)
}
