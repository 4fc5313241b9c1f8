package authserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/confload"
	"github.com/tokex-dev/tokex/internal/jwks"
)

type client struct {
	id         string
	secretHash [32]byte
	grants     map[string]bool
	methods    map[exchange.AuthMethod]bool
	resources  map[string]bool
	scopes     map[string]bool
	keys       *jwks.Set  // private_key_jwt
	tls        TLSBinding // tls_client_auth
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

// buildClients resolves secrets and keys; sharedSecret is the default
// clients' secret.
func buildClients(cfg Config, sharedSecret string, log *slog.Logger) (map[string]*client, error) {
	out := map[string]*client{}
	add := func(cc ClientConfig, secret string) error {
		if _, dup := out[cc.ID]; dup {
			return fmt.Errorf("client %q is listed twice", cc.ID)
		}
		cl, err := newClient(cc, secret, log)
		out[cc.ID] = cl
		return err
	}
	if len(cfg.Clients) == 0 {
		return out, defaultClients(cfg.DefaultClients, sharedSecret, add)
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

// newClient builds one client: the methods its credentials allow unless
// auth_methods narrows them, and the grants of grant_types (default: token
// exchange only).
func newClient(cc ClientConfig, secret string, log *slog.Logger) (*client, error) {
	grants := cc.GrantTypes
	if len(grants) == 0 {
		grants = []string{exchange.GrantTypeTokenExchange}
	}
	methods := cc.AuthMethods
	if len(methods) == 0 {
		for _, m := range cc.credentials() {
			methods = append(methods, string(m))
		}
	}
	cl := &client{id: cc.ID, secretHash: sha256.Sum256([]byte(secret)), grants: set[string](grants),
		methods: set[exchange.AuthMethod](methods), resources: set[string](cc.Resources), scopes: set[string](cc.Scopes), tls: cc.TLSBinding}
	raw := []byte(cc.JWKS)
	if cc.JWKSFile != "" {
		var err error
		if raw, err = confload.ReadLimited(cc.JWKSFile, jwks.MaxBytes); err != nil {
			return nil, fmt.Errorf("client %q: jwks_file: %w", cc.ID, err)
		}
	}
	if len(raw) > 0 {
		var err error
		cl.keys, err = jwks.Parse(raw, func(i int, kid, why string) {
			log.Warn("client JWKS: key skipped", "client", cc.ID, "index", i, "kid", kid, "reason", why)
		})
		if err != nil {
			return nil, fmt.Errorf("client %q: jwks: %w", cc.ID, err)
		}
	}
	return cl, nil
}

// defaultClients adds the article's clients prefix0..count-1: the shared
// secret, the keys of default_clients.jwks_file and the subject DN of
// default_clients.tls_client_auth_subject_dn.
func defaultClients(d DefaultClients, sharedSecret string, add func(ClientConfig, string) error) error {
	if sharedSecret == "" && d.JWKSFile == "" && d.TLSClientAuthSubjectDN == "" {
		return fmt.Errorf("no secret for the default clients (set %s or --client-secret)", d.SecretEnv)
	}
	var sets map[string]json.RawMessage
	if d.JWKSFile != "" {
		raw, err := confload.ReadLimited(d.JWKSFile, int64(MaxClients)*4096)
		if err != nil {
			return fmt.Errorf("default_clients.jwks_file: %w", err)
		}
		if err := json.Unmarshal(raw, &sets); err != nil {
			return fmt.Errorf("default_clients.jwks_file: not a JSON object of JWK Sets by client id: %w", err)
		}
	}
	for i := 0; i < d.Count; i++ {
		id := d.Prefix + strconv.Itoa(i)
		cc := ClientConfig{ID: id, GrantTypes: d.GrantTypes, Resources: d.Resources, Scopes: d.Scopes, JWKS: string(sets[id]), Secret: sharedSecret}
		cc.TLSBinding.SubjectDN = strings.ReplaceAll(d.TLSClientAuthSubjectDN, "{{client_id}}", id)
		if err := add(cc, sharedSecret); err != nil {
			return err
		}
	}
	return nil
}
