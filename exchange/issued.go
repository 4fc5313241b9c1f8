package exchange

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/jwks"
)

// Expect is what an issued token must show beyond a valid signature of a
// key the target publishes and an exp in the future.
type Expect struct {
	Audience string        // a member of aud; "" not checked
	Client   bool          // client_id or act.sub is the client that asked
	Lifetime time.Duration // exp − iat exactly; 0 not checked
	// Actors is the act chain the token must carry exactly (CheckActChain:
	// the current actor first); nil is not checked, an empty non-nil
	// slice requires no act.
	Actors []string
}

// IssuedVerifier checks issued tokens against the target's published keys
// (jose.VerifyJWT).
type IssuedVerifier struct {
	Keys   *jwks.Set
	Issuer string // the metadata's issuer; the token's iss must equal it when set
	Expect Expect
}

// Verify checks the access_token of a successful response issued to
// clientID. The error's text is a fixed phrase that quotes nothing of the
// token.
func (v *IssuedVerifier) Verify(body []byte, clientID string) error {
	claims, err := v.claims(body)
	if err != nil {
		return err
	}
	return v.Expect.check(claims, clientID)
}

// claims are the verified claims of the response's access_token.
func (v *IssuedVerifier) claims(body []byte) (jwt.MapClaims, error) {
	tok, ok := StringMember(body, "access_token")
	if !ok {
		return nil, errors.New("issued token: the response has no access_token")
	}
	claims, err := jose.VerifyJWT(tok, v.Keys, v.Issuer)
	if err != nil {
		return nil, errors.New("issued token " + err.Error())
	}
	return claims, nil
}

// VerifyActors is Verify with the act chain the token must carry, current
// actor first (Expect.Actors; nil or empty: no act), for a verifier shared
// by hops that expect different chains.
func (v *IssuedVerifier) VerifyActors(body []byte, clientID string, actors []string) error {
	claims, err := v.claims(body)
	if err != nil {
		return err
	}
	e := v.Expect
	e.Actors = actors
	if actors == nil {
		e.Actors = []string{}
	}
	return e.check(claims, clientID)
}

func (e Expect) check(c jwt.MapClaims, clientID string) error {
	if e.Audience != "" {
		aud, _ := c.GetAudience()
		if !slices.Contains(aud, e.Audience) {
			return errors.New("issued token: aud does not hold the expected audience")
		}
	}
	if e.Client {
		act, _ := c["act"].(map[string]any)
		if id, _ := c["client_id"].(string); id != clientID && act["sub"] != clientID {
			return errors.New("issued token: neither client_id nor act.sub is the client")
		}
	}
	if e.Actors != nil {
		if err := CheckActChain(c, e.Actors); err != nil {
			return err
		}
	}
	if e.Lifetime > 0 {
		iat, _ := c.GetIssuedAt()
		exp, _ := c.GetExpirationTime()
		if iat == nil || exp.Sub(iat.Time) != e.Lifetime {
			return fmt.Errorf("issued token: exp − iat is not %s", e.Lifetime)
		}
	}
	return nil
}

// MetadataURLs are where a target's metadata may be, given its token
// endpoint: OpenID Connect discovery and RFC 8414 for an issuer at the
// endpoint's folder (Dex: /dex/token → /dex), then at the host's root.
func MetadataURLs(tokenURL string) []string {
	u, err := url.Parse(tokenURL)
	if err != nil || u.Host == "" {
		return nil
	}
	origin := u.Scheme + "://" + u.Host
	dir := strings.TrimSuffix(path.Dir(u.Path), "/")
	if dir == "." {
		dir = ""
	}
	out := []string{origin + dir + "/.well-known/openid-configuration", origin + "/.well-known/oauth-authorization-server" + dir}
	if dir != "" {
		out = append(out, origin+"/.well-known/openid-configuration", origin+"/.well-known/oauth-authorization-server")
	}
	return out
}

// Discover reads the target's metadata (metadataURL, else the first of
// MetadataURLs that answers with a jwks_uri) and the JWKS it names. Every
// read is bounded; hc should not send credentials. Redirects are never
// followed, whatever hc's CheckRedirect says (SECURITY.md): a 3xx is an
// answer without metadata.
func Discover(ctx context.Context, hc *http.Client, tokenURL, metadataURL string) (*IssuedVerifier, string, error) {
	c := *hc
	c.CheckRedirect = NoRedirect
	hc = &c
	urls := MetadataURLs(tokenURL)
	if metadataURL != "" {
		urls = []string{metadataURL}
	}
	var md struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	var tried []string
	for _, u := range urls {
		raw, err := get(ctx, hc, u)
		if err == nil && json.Unmarshal(raw, &md) == nil && md.JWKSURI != "" {
			ju, err := url.Parse(md.JWKSURI)
			if err != nil || (ju.Scheme != "http" && ju.Scheme != "https") {
				return nil, u, fmt.Errorf("%s: jwks_uri is not an http(s) URL", u)
			}
			raw, err := get(ctx, hc, md.JWKSURI)
			if err != nil {
				return nil, u, fmt.Errorf("jwks_uri of %s: %w", u, err)
			}
			set, err := jwks.Parse(raw, nil)
			if err != nil {
				return nil, u, fmt.Errorf("jwks_uri of %s: %w", u, err)
			}
			if set.Len() == 0 {
				return nil, u, fmt.Errorf("jwks_uri of %s: no key that verifies signatures", u)
			}
			return &IssuedVerifier{Keys: set, Issuer: md.Issuer}, u, nil
		}
		if err == nil {
			err = errors.New("no jwks_uri in it")
		}
		tried = append(tried, u+" ("+err.Error()+")")
	}
	return nil, "", fmt.Errorf("no metadata with a jwks_uri: tried %s", strings.Join(tried, ", "))
}

// get reads one document, at most jwks.MaxBytes.
func get(ctx context.Context, hc *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return nil, fmt.Errorf("HTTP %d, a redirect: not followed", resp.StatusCode)
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, jwks.MaxBytes+1))
	if err != nil {
		return nil, errors.New("read cut")
	}
	if len(raw) > jwks.MaxBytes {
		return nil, errors.New("larger than 1 MiB")
	}
	return raw, nil
}
