package subject

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"time"
)

// JWKSServer publishes the public JWKS of the generator's signing key, like
// the article's perf-jwks-server (nginx over HTTPS).
type JWKSServer struct {
	URL string // e.g. https://127.0.0.1:40123/jwks.json
	srv *http.Server
	ln  net.Listener
}

// JWKSPath is where the key set is served.
const JWKSPath = "/jwks.json"

// ServeJWKS starts serving jwks on addr; with cert non-nil it serves HTTPS.
func ServeJWKS(addr string, jwks []byte, cert *tls.Certificate) (*JWKSServer, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+JWKSPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", "max-age=300")
		_, _ = w.Write(jwks)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if cert != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12})
		scheme = "https"
	}
	s := &JWKSServer{
		URL: scheme + "://" + ln.Addr().String() + JWKSPath,
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second},
		ln:  ln,
	}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener closed under us; Close reports nothing more useful
		}
	}()
	return s, nil
}

// Close stops the server.
func (s *JWKSServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}
