// Package statedir holds what tokex keeps between runs: the default client
// secret and the default subject-token signing key, which must stay stable
// while an authorization server trusts them and are never printed.
package statedir

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Dir is $TOKEX_HOME, else $XDG_CONFIG_HOME/tokex, else ~/.config/tokex.
func Dir() (string, error) {
	if d := os.Getenv("TOKEX_HOME"); d != "" {
		return d, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "tokex"), nil
}

// SubjectKeyPath is where the first stored subject-token signing key lives
// (RS256 unless an older tokex created it with another algorithm).
func SubjectKeyPath() (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "subject-key.pem"), nil
}

// SubjectKeyPathFor is where the stored subject key of an algorithm other
// than the first one's lives: subject-key-ES256.pem and so on.
func SubjectKeyPathFor(alg string) (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "subject-key-"+alg+".pem"), nil
}

// ActorKeyPath is where the stored actor-token signing key of an algorithm
// lives (actor-key-<alg>.pem): the agents' workload identities, signed by
// an issuer of their own (subject.ActorIssuer), beside the subject keys.
func ActorKeyPath(alg string) (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "actor-key-"+alg+".pem"), nil
}

// ClientKeyDir is where the agents' stored client keys (private_key_jwt)
// and certificates (tls_client_auth) live.
func ClientKeyDir() (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "clients"), nil
}

// ClientSecret returns the default perf-agent-* client secret, creating a
// random one (0600) on first use.
func ClientSecret() (string, error) { return storedRandom("client-secret") }

// OwnerKey returns this user's key for sealing what tokex writes and must
// later trust (internal/owner), creating a random one (0600) on first use.
// It never leaves this folder.
func OwnerKey() ([]byte, error) {
	s, err := storedRandom("owner-key")
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// storedRandom reads the random value kept in the file name of the state
// folder, creating it (24 random bytes, base64url, 0600) on first use.
func storedRandom(name string) (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(d, name)
	if b, err := os.ReadFile(path); err == nil {
		s := strings.TrimSpace(string(b))
		if s == "" {
			return "", errors.New(path + " is empty")
		}
		return s, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	value := base64.RawURLEncoding.EncodeToString(raw)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return storedRandom(name)
	}
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(value + "\n"); err != nil {
		f.Close()
		return "", err
	}
	return value, f.Close()
}

// IssuerCertPaths are the certificate and key of `tokex jwks --serve --tls`,
// kept so that a server told to trust the issuer once keeps trusting it.
func IssuerCertPaths() (cert, key string, err error) {
	d, err := Dir()
	if err != nil {
		return "", "", err
	}
	return filepath.Join(d, "issuer-cert.pem"), filepath.Join(d, "issuer-key.pem"), nil
}
