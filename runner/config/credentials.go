package config

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/statedir"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/subject"
)

// SecretEnv overrides agents.client_secret.
const SecretEnv = "TOKEX_CLIENT_SECRET"

// LocalEmbedded reports whether tokex starts the reference server itself
// for this campaign, so that it may trust credentials made for it alone.
func (c *Campaign) LocalEmbedded() bool { return c.Embedded() && c.Driver != "kube" }

// AgentSecret is the agents' client secret and where it came from (never
// the secret itself): flag, else $TOKEX_CLIENT_SECRET, else
// agents.client_secret; without any, a fresh random one for a server tokex
// starts itself, else tokex's stored default secret. It is never written
// anywhere.
func (c *Campaign) AgentSecret(flag string) (secret, source string, err error) {
	for _, s := range []struct{ secret, source string }{
		{flag, "--client-secret"},
		{os.Getenv(SecretEnv), SecretEnv},
		{c.Agents.ClientSecret, "agents.client_secret of the config"},
	} {
		if s.secret != "" {
			return s.secret, s.source, nil
		}
	}
	if c.LocalEmbedded() {
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		return base64.RawURLEncoding.EncodeToString(b), "a random secret for this campaign's embedded server", nil
	}
	if secret, err = statedir.ClientSecret(); err != nil {
		return "", "", fmt.Errorf("client secret: %w", err)
	}
	dir, _ := statedir.Dir()
	return secret, "tokex's stored secret (" + filepath.Join(dir, "client-secret") +
		"), none given: the target's clients must have it, else pass --client-secret or " + SecretEnv, nil
}

// SubjectKey is the key subject tokens are signed with, named subject.kid
// when set: subject.key_file; for a server tokex starts itself, a fresh key
// of subject.alg (the server trusts it for this campaign only); else
// tokex's stored key of subject.alg.
func (c *Campaign) SubjectKey() (*jose.Key, error) {
	var k *jose.Key
	var err error
	switch {
	case c.Subject.KeyFile != "":
		k, err = subject.LoadPEM(c.Subject.KeyFile)
	case c.LocalEmbedded():
		k, err = jose.GenerateKey(c.Subject.Alg)
	default:
		k, _, err = subject.StoredKey(c.Subject.Alg) // one stored key per algorithm
	}
	if err != nil {
		return nil, fmt.Errorf("subject key: %w", err)
	}
	return k.WithKid(c.Subject.Kid), nil
}

// ClientKeys are the agents' private_key_jwt keys, one per agent (a shared
// key repeats), and where they came from: for a server tokex starts itself,
// fresh keys of agents.client_key.alg (the server trusts them for this
// campaign only) unless agents.client_key.file; else RegisteredClientKeys.
func (c *Campaign) ClientKeys() ([]*jose.Key, string, error) {
	k := c.Agents.ClientKey
	if !c.LocalEmbedded() || k.File != "" {
		return c.RegisteredClientKeys()
	}
	keys := make([]*jose.Key, c.Agents.Count)
	for i := range keys {
		g, err := jose.GenerateKey(k.Alg)
		if err != nil {
			return nil, "", fmt.Errorf("client key: %w", err)
		}
		keys[i] = g.WithKid(k.Kid)
	}
	return keys, "a fresh " + k.Alg + " key per agent for this campaign's embedded server", nil
}

// RegisteredClientKeys are the keys a server registers the agents with:
// agents.client_key.file for every agent, else each agent's stored key of
// agents.client_key.alg (tokex jwks --clients prints their public keys).
func (c *Campaign) RegisteredClientKeys() ([]*jose.Key, string, error) {
	k := c.Agents.ClientKey
	keys := make([]*jose.Key, c.Agents.Count)
	if k.File != "" {
		key, err := subject.LoadPEM(k.File)
		if err != nil {
			return nil, "", fmt.Errorf("agents.client_key.file: %w", err)
		}
		for i := range keys {
			keys[i] = key.WithKid(k.Kid)
		}
		return keys, "agents.client_key.file " + k.File + ", shared by every agent", nil
	}
	dir := ""
	for i := range keys {
		key, p, err := subject.StoredClientKey(c.ClientID(i), k.Alg)
		if err != nil {
			return nil, "", fmt.Errorf("client key: %w", err)
		}
		keys[i], dir = key.WithKid(k.Kid), filepath.Dir(p)
	}
	return keys, "tokex's stored " + k.Alg + " key per agent (" + dir + "; tokex jwks --clients prints their public keys)", nil
}

// ClientCerts are the agents' TLS client certificates (tls_client_auth)
// and what a server needs to recognise them.
type ClientCerts struct {
	Certs []tls.Certificate // one per agent (a shared one repeats)
	// CAPEM is what the server trusts: the CA that issued them, or the
	// shared certificate itself.
	CAPEM []byte
	// SubjectDN is each client's registered subject DN (RFC 4514);
	// {{client_id}} stands for the client's id.
	SubjectDN string
	Source    string // where they came from
}

// ClientCerts are the agents' certificates: agents.client_cert for every
// agent; for a server tokex starts itself, one per agent from a fresh CA
// (the server trusts it for this campaign only); else one per agent from
// tokex's stored client CA (tokex jwks --client-ca-out writes it, for the
// server to trust).
func (c *Campaign) ClientCerts() (*ClientCerts, error) {
	out := &ClientCerts{Certs: make([]tls.Certificate, c.Agents.Count), SubjectDN: "CN={{client_id}}"}
	if f := c.Agents.ClientCert; f.CertFile != "" {
		pair, err := tlscert.LoadPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("agents.client_cert: %w", err)
		}
		for i := range out.Certs {
			out.Certs[i] = pair
		}
		out.CAPEM, _ = tlscert.ReadPEM(f.CertFile)
		out.SubjectDN, out.Source = pair.Leaf.Subject.String(), "agents.client_cert "+f.CertFile+", shared by every agent"
		return out, nil
	}
	var issue func(i int) (*tlscert.Pair, error)
	if c.LocalEmbedded() {
		ca, err := tlscert.NewClientCA(48 * time.Hour)
		if err != nil {
			return nil, err
		}
		issue = func(i int) (*tlscert.Pair, error) { return ca.Issue(c.ClientID(i), 48*time.Hour) }
		out.CAPEM, out.Source = ca.CertPEM, "a fresh client CA and a certificate per agent (CN=<client id>) for this campaign's embedded server"
	} else {
		ca, caPath, err := StoredClientCA()
		if err != nil {
			return nil, err
		}
		issue = func(i int) (*tlscert.Pair, error) {
			id := c.ClientID(i)
			if !subject.FileSafeID(id) {
				return nil, fmt.Errorf("client id %q cannot name a certificate file (letters, digits, '.', '_', '-'; give agents.client_cert)", id)
			}
			dir := filepath.Dir(caPath)
			return ca.StoredClientCert(id, filepath.Join(dir, id+".crt.pem"), filepath.Join(dir, id+".key.pem"))
		}
		out.CAPEM, out.Source = ca.CertPEM, "tokex's stored client CA ("+caPath+"; the server must trust it) and a certificate per agent, subject CN=<client id>"
	}
	for i := range out.Certs {
		p, err := issue(i)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		out.Certs[i] = p.Cert
	}
	return out, nil
}

// StoredClientCA is tokex's client CA, created on first use, and where its
// certificate is.
func StoredClientCA() (*tlscert.ClientCA, string, error) {
	dir, err := statedir.ClientKeyDir()
	if err != nil {
		return nil, "", err
	}
	certPath := filepath.Join(dir, "ca.pem")
	ca, _, err := tlscert.StoredClientCA(certPath, filepath.Join(dir, "ca-key.pem"))
	if err != nil {
		return nil, "", fmt.Errorf("client CA: %w", err)
	}
	return ca, certPath, nil
}
