package authserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/subject"
)

// Options are the inputs that do not belong in a YAML file.
type Options struct {
	// ClientSecret is the default clients' shared secret.
	ClientSecret string
	// SubjectJWKS is used when the config names no subject JWKS, and
	// ActorJWKS when subject.actor has an issuer and names no JWKS.
	SubjectJWKS, ActorJWKS []byte
	Logger                 *slog.Logger
}

// Server is a running-ready reference authorization server.
type Server struct {
	cfg     Config
	log     *slog.Logger
	clients map[string]*client
	verify  *verifier // subject tokens, jwt-bearer assertions
	actors  *verifier // actor tokens: verify unless subject.actor has an issuer
	key     *jose.Key
	jwks    []byte
	faults  *faults
	tlsPair *tls.Certificate
	baseURL string
	mux     *http.ServeMux
	handler http.Handler // mux behind the framing check
	meta    []byte

	// headerAT and headerJWT are the issued tokens' encoded headers.
	headerAT, headerJWT string
	form                *formCache
	assert              *assertionVerifier
	// clientCAs verify client certificates (tls_client_auth); nil: none asked.
	clientCAs *x509.CertPool

	// metricsURL is where the process metrics are served ("" off).
	metricsURL string
}

// New builds a server from a validated config. ctx bounds JWKS refreshes.
func New(ctx context.Context, cfg Config, opt Options) (*Server, error) {
	if err := cfg.Validate(nil); err != nil {
		return nil, err
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log}
	var err error
	if s.clients, err = buildClients(cfg, opt.ClientSecret, log); err != nil {
		return nil, err
	}
	s.form = newFormCache(s.clients)
	if err := s.startAssertions(ctx, cfg.ClientAuth); err != nil {
		return nil, err
	}
	if cfg.TLS.ClientCAFile != "" {
		pem, err := tlscert.ReadPEM(cfg.TLS.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("tls.client_ca_file: %w", err)
		}
		if s.clientCAs = x509.NewCertPool(); !s.clientCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls.client_ca_file: no certificate in %s", cfg.TLS.ClientCAFile)
		}
	}
	if err := s.startVerifiers(ctx, cfg.Subject, opt); err != nil {
		return nil, err
	}
	if cfg.Signing.KeyFile != "" {
		s.key, err = subject.LoadPEM(cfg.Signing.KeyFile)
	} else {
		s.key, err = jose.GenerateKey(cfg.Signing.Alg)
	}
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	if s.jwks, err = jose.JWKS(s.key); err != nil {
		return nil, err
	}
	s.headerAT, s.headerJWT = jwsHeaders(s.key)
	s.faults = newFaults(cfg.Faults)
	if cfg.TLS.Enabled {
		if cfg.TLS.CertFile != "" {
			c, err := tlscert.LoadPair(cfg.TLS.CertFile, cfg.TLS.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("tls: %w", err)
			}
			s.tlsPair = &c
		} else {
			p, err := tlscert.Loopback()
			if err != nil {
				return nil, err
			}
			s.tlsPair = &p.Cert
		}
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc(cfg.TokenPath, s.handleToken)
	s.mux.HandleFunc("GET /jwks.json", s.handleJWKS)
	s.mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.handleMetadata)
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	s.handler = s.framing(s.mux)
	return s, nil
}

// startVerifiers reads (or starts fetching) the subject keys and, when
// subject.actor has an issuer, the actor keys.
func (s *Server) startVerifiers(ctx context.Context, sc SubjectConfig, opt Options) error {
	var err error
	if s.verify, err = newVerifier(ctx, sc, subjectSource(sc), sc.Issuer, sc.Audience, opt.SubjectJWKS, s.log); err != nil {
		return err
	}
	s.actors = s.verify
	if sc.Actor.Issuer != "" {
		s.actors, err = newVerifier(ctx, sc, actorSource(sc), sc.Actor.Issuer, sc.Actor.Audience, opt.ActorJWKS, s.log)
	}
	return err
}

// framing refuses request smuggling (RFC 9112 §6.1, §6.3). Go's server lets
// Transfer-Encoding override Content-Length and hides which of them came,
// so every HTTP/1.1 request framed by Transfer-Encoding is refused with 400
// and its connection closed: tokex's endpoints take small bodies, and every
// client sends those with Content-Length. An HTTP/1.0 request may carry a
// Transfer-Encoding that Go silently ignores, so its connection is closed
// after the answer.
func (s *Server) framing(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 1 {
			next.ServeHTTP(w, r)
			return
		}
		if r.ProtoMinor == 0 {
			w.Header().Set("Connection", "close")
		}
		if len(r.TransferEncoding) > 0 {
			w.Header().Set("Connection", "close")
			s.writeError(w, fail(400, exchange.ErrInvalidRequest, "Transfer-Encoding is not accepted; send the body with Content-Length"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Faults describes the configured fault injection ("" when off).
func (s *Server) Faults() string { return s.faults.String() }

// Key is the issued tokens' signing key (its public half is in the JWKS).
func (s *Server) Key() *jose.Key { return s.key }

// Handler serves every endpoint. SetBaseURL must have been called (Serve
// does it) for metadata and the default issuer to be right.
func (s *Server) Handler() http.Handler { return s.handler }

// SetBaseURL fixes the public base URL, from which the issuer defaults.
func (s *Server) SetBaseURL(u string) {
	s.baseURL = strings.TrimSuffix(u, "/")
	if s.cfg.Issuer == "" {
		s.cfg.Issuer = s.baseURL
	}
	meta := map[string]any{
		"issuer":                                s.cfg.Issuer,
		"token_endpoint":                        s.baseURL + s.cfg.TokenPath,
		"jwks_uri":                              s.baseURL + "/jwks.json",
		"grant_types_supported":                 s.grantTypes(),
		"response_types_supported":              []string{},
		"token_endpoint_auth_methods_supported": s.authMethods(),
		"token_endpoint_auth_signing_alg_values_supported": s.cfg.ClientAuth.Algorithms,
		"tls_client_certificate_bound_access_tokens":       s.clientCAs != nil,
		"scopes_supported":      s.allScopes(),
		"token_types_supported": []string{exchange.TokenTypeAccessToken, exchange.TokenTypeJWT},
	}
	s.meta, _ = json.Marshal(meta)
	s.assert.audiences = append(slices.Clone(s.cfg.ClientAuth.Audiences), s.baseURL+s.cfg.TokenPath, s.cfg.Issuer)
}

// grantTypes are the grants some client may use.
func (s *Server) grantTypes() []string {
	out := []string{}
	for _, g := range exchange.GrantTypes {
		for _, c := range s.clients {
			if c.grants[g] {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// authMethods are the client authentication methods some client may use.
func (s *Server) authMethods() []string {
	var out []string
	for _, m := range exchange.AuthMethods {
		for _, c := range s.clients {
			if c.methods[m] && (m != exchange.AuthTLSClient || s.clientCAs != nil) {
				out = append(out, string(m))
				break
			}
		}
	}
	return out
}

// Issuer is the iss of issued tokens.
func (s *Server) Issuer() string { return s.cfg.Issuer }

func (s *Server) allScopes() []string {
	seen := map[string]bool{}
	out := []string{}
	for _, c := range s.clients {
		for sc := range c.scopes {
			if !seen[sc] {
				seen[sc] = true
				out = append(out, sc)
			}
		}
	}
	return out
}

// Listen opens the configured address (with SO_REUSEPORT when reuse_port:
// the local driver's engines share one port).
func (s *Server) Listen() (net.Listener, error) {
	if s.cfg.ReusePort {
		lc := net.ListenConfig{Control: reusePort}
		return lc.Listen(context.Background(), "tcp", s.cfg.Addr)
	}
	return net.Listen("tcp", s.cfg.Addr)
}

// Serve serves on ln until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	scheme := "http"
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	var p http.Protocols
	p.SetHTTP1(true)
	h2 := s.cfg.HTTP2 == nil || *s.cfg.HTTP2
	if s.tlsPair != nil {
		scheme = "https"
		p.SetHTTP2(h2)
		protos := []string{"http/1.1"}
		if h2 {
			protos = []string{"h2", "http/1.1"}
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*s.tlsPair}, MinVersion: tls.VersionTLS12, NextProtos: protos}
		if s.clientCAs != nil { // a certificate is asked for, and verified when given: tls_client_auth
			srv.TLSConfig.ClientCAs, srv.TLSConfig.ClientAuth = s.clientCAs, tls.VerifyClientCertIfGiven
		}
	} else {
		p.SetUnencryptedHTTP2(h2)
	}
	srv.Protocols = &p
	if s.baseURL == "" {
		s.SetBaseURL(scheme + "://" + ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() {
		if s.tlsPair != nil {
			errc <- srv.ServeTLS(ln, "", "")
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		if e := <-errc; !errors.Is(e, http.ErrServerClosed) && err == nil {
			err = e
		}
		return err
	}
}

// BaseURL is the URL the server answers on.
func (s *Server) BaseURL() string { return s.baseURL }

func (s *Server) handleJWKS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/jwk-set+json")
	_, _ = w.Write(s.jwks)
}

func (s *Server) handleMetadata(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.meta)
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}`))
}

// startAssertions prepares the checks of client assertions and jwt-bearer
// assertions. With clients that may send either it waits for the next
// whole second, so that every assertion it accepts was issued (iat, whole
// seconds) after it started: the replay caches are in memory, and a
// restart must not accept an assertion used before it
// (assertionVerifier.freshSince).
func (s *Server) startAssertions(ctx context.Context, a ClientAuthConfig) error {
	n, bearers := 0, 0
	for _, cl := range s.clients {
		if cl.methods[exchange.AuthPrivateKeyJWT] {
			n++
		}
		if cl.grants[exchange.GrantTypeJWTBearer] {
			bearers++
		}
	}
	since := time.Now().Truncate(time.Second).Add(time.Second)
	s.assert = newAssertionVerifier(a, n, bearers, since)
	if n == 0 && bearers == 0 {
		return nil
	}
	t := time.NewTimer(time.Until(since))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
