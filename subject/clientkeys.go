package subject

import (
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/statedir"
)

// fileSafeID is a client id that can name a file as it is.
var fileSafeID = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$`)

// FileSafeID reports whether a client id can name a file as it is.
func FileSafeID(id string) bool { return fileSafeID.MatchString(id) }

// StoredClientKey returns the stored private_key_jwt key of a client for
// alg, creating it on first use (clients/<client id>.<alg>.pem in tokex's
// state folder): stable across runs, so a server that registered its
// public key keeps accepting it.
func StoredClientKey(clientID, alg string) (*jose.Key, string, error) {
	if err := checkAlg(alg); err != nil {
		return nil, "", err
	}
	if !FileSafeID(clientID) {
		return nil, "", fmt.Errorf("client id %q cannot name a key file (letters, digits, '.', '_', '-'; give agents.client_key.file)", clientID)
	}
	dir, err := statedir.ClientKeyDir()
	if err != nil {
		return nil, "", err
	}
	p := filepath.Join(dir, clientID+"."+alg+".pem")
	k, err := LoadOrCreate(p, alg)
	if err == nil && k.Alg != alg {
		return nil, "", fmt.Errorf("%s holds a %s key, not %s", p, k.Alg, alg)
	}
	return k, p, err
}
