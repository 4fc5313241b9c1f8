package authserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"os"
	"strconv"

	"github.com/tokex-dev/tokex/exchange"
)

type client struct {
	id         string
	secretHash [32]byte
	grants     map[string]bool
	methods    map[exchange.AuthMethod]bool
	resources  map[string]bool
	scopes     map[string]bool
}

// dummyHash keeps authentication of an unknown client as slow as a known one.
var dummyHash = sha256.Sum256([]byte("tokex-unknown-client"))

// checkSecret compares in constant time; hashing first makes the comparison
// independent of the secrets' lengths.
func (c *client) checkSecret(secret string) bool {
	h := sha256.Sum256([]byte(secret))
	want := dummyHash
	if c != nil {
		want = c.secretHash
	}
	return subtle.ConstantTimeCompare(h[:], want[:]) == 1 && c != nil
}

func set[T ~string](xs []string) map[T]bool {
	m := make(map[T]bool, len(xs))
	for _, x := range xs {
		m[T(x)] = true
	}
	return m
}

// buildClients resolves secrets; sharedSecret is the default clients' secret.
func buildClients(cfg Config, sharedSecret string) (map[string]*client, error) {
	out := map[string]*client{}
	add := func(cc ClientConfig, secret string) error {
		if _, dup := out[cc.ID]; dup {
			return fmt.Errorf("client %q is listed twice", cc.ID)
		}
		grants := cc.GrantTypes
		if len(grants) == 0 {
			grants = []string{exchange.GrantTypeTokenExchange}
		}
		methods := cc.AuthMethods
		if len(methods) == 0 {
			methods = []string{string(exchange.AuthBasic), string(exchange.AuthPost)}
		}
		out[cc.ID] = &client{
			id:         cc.ID,
			secretHash: sha256.Sum256([]byte(secret)),
			grants:     set[string](grants),
			methods:    set[exchange.AuthMethod](methods),
			resources:  set[string](cc.Resources),
			scopes:     set[string](cc.Scopes),
		}
		return nil
	}
	if len(cfg.Clients) == 0 {
		d := cfg.DefaultClients
		if sharedSecret == "" {
			return nil, fmt.Errorf("no secret for the default clients (set %s or --client-secret)", d.SecretEnv)
		}
		for i := 0; i < d.Count; i++ {
			cc := ClientConfig{ID: d.Prefix + strconv.Itoa(i), Resources: d.Resources, Scopes: d.Scopes}
			if err := add(cc, sharedSecret); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	for _, cc := range cfg.Clients {
		secret := cc.Secret
		if cc.SecretEnv != "" {
			secret = os.Getenv(cc.SecretEnv)
			if secret == "" {
				return nil, fmt.Errorf("client %q: environment variable %s is empty", cc.ID, cc.SecretEnv)
			}
		}
		if err := add(cc, secret); err != nil {
			return nil, err
		}
	}
	return out, nil
}
