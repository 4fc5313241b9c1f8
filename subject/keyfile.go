package subject

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/tlscert"
)

// Key files: a signing key kept as PEM (jose.Key.MarshalPEM).

// LoadPEM reads a private key file (at most tlscert.MaxPEMBytes).
func LoadPEM(path string) (*jose.Key, error) {
	data, err := tlscert.ReadPEM(path)
	if err != nil {
		return nil, err
	}
	k, err := jose.ParsePEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// LoadOrCreate returns the key at path, creating it (0600) with alg when the
// file does not exist, so that a key an authorization server trusts stays
// stable across runs.
func LoadOrCreate(path, alg string) (*jose.Key, error) {
	if _, err := os.Stat(path); err == nil {
		return LoadPEM(path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	k, err := jose.GenerateKey(alg)
	if err != nil {
		return nil, err
	}
	data, err := k.MarshalPEM()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) { // lost a race with another tokex
			return LoadPEM(path)
		}
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	return k, f.Close()
}
