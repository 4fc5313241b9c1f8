package subject

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/statedir"
)

// StoredKey returns tokex's stored subject key for alg, creating it on first
// use: one key per algorithm, each stable across runs so that a server that
// trusts it keeps working. The RS256 key is subject-key.pem (as it has always
// been); the others are subject-key-<alg>.pem. An older tokex may have
// created subject-key.pem with another algorithm: it then stays that
// algorithm's key.
func StoredKey(alg string) (*jose.Key, string, error) {
	if err := checkAlg(alg); err != nil {
		return nil, "", err
	}
	first, err := statedir.SubjectKeyPath()
	if err != nil {
		return nil, "", err
	}
	k, err := LoadPEM(first)
	switch {
	case err == nil && k.Alg == alg:
		return k, first, nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, "", err
	case err != nil && alg == jose.RS256: // no first key yet: RS256 takes its place
		k, err := LoadOrCreate(first, alg)
		return k, first, err
	}
	p, err := statedir.SubjectKeyPathFor(alg)
	if err != nil {
		return nil, "", err
	}
	k, err = LoadOrCreate(p, alg)
	if err == nil && k.Alg != alg {
		return nil, "", fmt.Errorf("%s holds a %s key, not %s", p, k.Alg, alg)
	}
	return k, p, err
}

// StoredKeys returns the stored key of every algorithm (Algorithms order).
func StoredKeys() ([]*jose.Key, error) {
	var out []*jose.Key
	for _, alg := range jose.Algorithms {
		k, _, err := StoredKey(alg)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// checkAlg refuses an algorithm tokex does not sign with.
func checkAlg(alg string) error {
	if slices.Contains(jose.Algorithms, alg) {
		return nil
	}
	return fmt.Errorf("unsupported algorithm %q (want RS256, ES256 or EdDSA)", alg)
}

// Keys are the subject keys a command works with: the key in keyFile, else
// the stored key of alg, else the stored key of every algorithm. kid, when
// set, renames the one key selected (a server registered it so).
func Keys(keyFile, alg, kid string) ([]*jose.Key, error) {
	var keys []*jose.Key
	switch {
	case keyFile != "":
		k, err := LoadPEM(keyFile)
		if err != nil {
			return nil, err
		}
		if alg != "" && k.Alg != alg {
			return nil, fmt.Errorf("%s is a %s key, not %s", keyFile, k.Alg, alg)
		}
		keys = []*jose.Key{k}
	case alg != "":
		k, _, err := StoredKey(alg)
		if err != nil {
			return nil, err
		}
		keys = []*jose.Key{k}
	default:
		var err error
		if keys, err = StoredKeys(); err != nil {
			return nil, err
		}
	}
	if kid != "" {
		if len(keys) != 1 {
			return nil, errors.New("a kid names one key: give the algorithm or the key file too")
		}
		keys[0] = keys[0].WithKid(kid)
	}
	return keys, nil
}
