package subject

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/internal/jose"
)

// Paths of the issuer's documents.
const (
	JWKSPath         = "/jwks.json"
	DiscoveryPath    = "/.well-known/openid-configuration"
	OAuthMetaPath    = "/.well-known/oauth-authorization-server"
	AuthorizePath    = "/authorize"
	maxIssuerURLSize = 2048
)

// IssuerOptions configure a minimal OpenID Connect issuer for the subject
// tokens tokex mints: what an authorization server needs to trust them
// (Dex's OIDC connector, Keycloak's identity provider, zitadel, …).
type IssuerOptions struct {
	Addr string      // HOST:PORT to listen on (port 0: any free port)
	Keys []*jose.Key // published in the JWKS; at least one
	// Cert serves HTTPS; nil serves HTTP, on a loopback address only.
	Cert *tls.Certificate
	// URL is the issuer as the authorization server reaches it (a host
	// name in a cluster, a proxy); default scheme://Addr as listened on.
	URL string
	// Clients are JWK Sets served at /clients/<client id>/jwks.json: the
	// agents' private_key_jwt keys, for a server that registers a
	// jwks_uri per client.
	Clients map[string][]byte
	// Actors are the actor-token keys (ActorMinter): served as an issuer
	// of their own, ActorIssuer(URL) — its discovery document and JWKS
	// below /actors. None: no actor issuer.
	Actors []*jose.Key
}

// ClientJWKSPath is where the issuer serves a client's JWKS (%s: its id).
const ClientJWKSPath = "/clients/%s/jwks.json"

// IssuerServer serves /.well-known/openid-configuration (and the same
// document at RFC 8414's /.well-known/oauth-authorization-server) and the
// JWKS of the subject keys: the article's perf-jwks-server, plus the
// discovery document OIDC clients look the JWKS up in.
type IssuerServer struct {
	URL     string // the issuer: subject.issuer of the campaign
	JWKSURL string
	// ActorURL and ActorJWKSURL are the actor issuer's (subject.actor of
	// the reference server); "" without actor keys.
	ActorURL, ActorJWKSURL string
	srv                    *http.Server
	ln                     net.Listener
}

// Discovery is the issuer's discovery document.
type Discovery struct {
	Issuer                           string   `json:"issuer"`
	JWKSURI                          string   `json:"jwks_uri"`
	AuthorizationEndpoint            string   `json:"authorization_endpoint"`
	ResponseTypesSupported           []string `json:"response_types_supported"`
	SubjectTypesSupported            []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported []string `json:"id_token_signing_alg_values_supported"`
	ClaimsSupported                  []string `json:"claims_supported"`
}

// ServeIssuer starts the issuer. Plain HTTP is refused on anything but a
// loopback address: the JWKS decides which tokens a server accepts.
func ServeIssuer(o IssuerOptions) (*IssuerServer, error) {
	if len(o.Keys) == 0 {
		return nil, errors.New("issuer: no keys to publish")
	}
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("issuer address %q: %w", o.Addr, err)
	}
	if o.Cert == nil && !isLoopback(host) {
		return nil, fmt.Errorf("issuer address %s is not loopback: serve it over HTTPS (a certificate, or a generated one)", o.Addr)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if o.Cert != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*o.Cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}})
		scheme = "https"
	}
	issuer := strings.TrimSuffix(o.URL, "/")
	if issuer == "" {
		issuer = scheme + "://" + ln.Addr().String()
	} else if err := checkIssuerURL(issuer); err != nil {
		ln.Close()
		return nil, err
	}
	prefix := ""
	if u, err := url.Parse(issuer); err == nil {
		prefix = strings.TrimSuffix(u.Path, "/") // an issuer with a path serves below it
	}
	mux, err := issuerMux(prefix, issuer, o)
	if err != nil {
		ln.Close()
		return nil, err
	}
	s := &IssuerServer{
		URL: issuer, JWKSURL: issuer + JWKSPath, ln: ln,
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
			WriteTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 16 << 10},
	}
	if len(o.Actors) > 0 {
		s.ActorURL = ActorIssuer(issuer)
		s.ActorJWKSURL = s.ActorURL + JWKSPath
	}
	go func() { _ = s.srv.Serve(ln) }() // ends with Close
	return s, nil
}

// discovery is the discovery document and the JWKS of an issuer.
func discovery(issuer string, keys []*jose.Key) (meta, jwks []byte, err error) {
	if jwks, err = jose.JWKS(keys...); err != nil {
		return nil, nil, err
	}
	doc := Discovery{
		Issuer: issuer, JWKSURI: issuer + JWKSPath, AuthorizationEndpoint: issuer + AuthorizePath,
		ResponseTypesSupported: []string{"id_token"}, SubjectTypesSupported: []string{"public"},
		ClaimsSupported: []string{"iss", "sub", "aud", "iat", "exp", "jti"},
	}
	for _, k := range keys {
		if !slices.Contains(doc.IDTokenSigningAlgValuesSupported, k.Alg) {
			doc.IDTokenSigningAlgValuesSupported = append(doc.IDTokenSigningAlgValuesSupported, k.Alg)
		}
	}
	meta, err = json.Marshal(doc)
	return meta, jwks, err
}

// issuerMux serves the JWKS, the discovery document, the clients' JWK Sets
// and a refusing authorization endpoint below prefix, and the actor
// issuer's discovery document and JWKS below prefix/actors.
func issuerMux(prefix, issuer string, o IssuerOptions) (*http.ServeMux, error) {
	mux := http.NewServeMux()
	static := func(body []byte, ctype string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Cache-Control", "max-age=300")
			_, _ = w.Write(body)
		}
	}
	serve := func(prefix, issuer string, keys []*jose.Key) error {
		meta, jwks, err := discovery(issuer, keys)
		if err != nil {
			return err
		}
		mux.HandleFunc("GET "+prefix+JWKSPath, static(jwks, "application/jwk-set+json"))
		mux.HandleFunc("GET "+prefix+DiscoveryPath, static(meta, "application/json"))
		mux.HandleFunc("GET "+OAuthMetaPath+prefix, static(meta, "application/json"))
		return nil
	}
	if err := serve(prefix, issuer, o.Keys); err != nil {
		return nil, err
	}
	if len(o.Actors) > 0 {
		if err := serve(prefix+ActorPath, ActorIssuer(issuer), o.Actors); err != nil {
			return nil, err
		}
	}
	if len(o.Clients) > 0 {
		mux.HandleFunc("GET "+prefix+fmt.Sprintf(ClientJWKSPath, "{id}"), func(w http.ResponseWriter, r *http.Request) {
			b, ok := o.Clients[r.PathValue("id")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			static(b, "application/jwk-set+json")(w, r)
		})
	}
	mux.HandleFunc(prefix+AuthorizePath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"unsupported_response_type","error_description":"tokex's subject issuer has no login: tokex signs the subject tokens itself"}`))
	})
	return mux, nil
}

// Addr is the address the issuer listens on.
func (s *IssuerServer) Addr() string { return s.ln.Addr().String() }

// Close stops the server.
func (s *IssuerServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// checkIssuerURL accepts an https URL, or http on a loopback host, with no
// query or fragment (OpenID Connect Discovery 1.0 §3).
func checkIssuerURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" || u.Fragment != "" || len(s) > maxIssuerURLSize {
		return fmt.Errorf("issuer URL %q must be an http(s) URL without query or fragment", s)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return fmt.Errorf("issuer URL %q: plain http only on loopback", s)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
