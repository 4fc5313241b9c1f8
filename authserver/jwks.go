package authserver

import (
	"context"
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/tokex-dev/tokex/internal/confload"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/jwks"
	"github.com/tokex-dev/tokex/internal/tlscert"
)

// MaxJWKSBytes caps the subject JWKS, from a file or fetched: an endless
// response must not grow the server's memory.
const MaxJWKSBytes = jwks.MaxBytes

// jwksFetchTimeout bounds one fetch of the subject JWKS.
const jwksFetchTimeout = 10 * time.Second

// keySet is the subject (or actor) JWKS: the keys by kid, replaced whole by
// a refresh. A remote set is refreshed periodically and, at most once per
// unknown_kid_interval, when a token names a kid it does not hold.
type keySet struct {
	keys atomic.Pointer[jwks.Set]
	name string // subject or subject.actor: the config block, in logs and errors

	url     string // empty: a file or given set, never refreshed
	client  *http.Client
	ctx     context.Context // the server's lifetime; bounds refreshes
	limiter *rate.Limiter
	log     *slog.Logger

	mu       sync.Mutex
	inflight chan struct{} // closed when the running refresh ends
}

// keySource is where a key set comes from: a block of the config.
type keySource struct {
	name                        string // subject, subject.actor
	jwksURL, jwksFile, caFile   string
	refresh, unknownKidInterval time.Duration
}

func newKeySet(ctx context.Context, sc keySource, given []byte, log *slog.Logger) (*keySet, error) {
	s := &keySet{ctx: ctx, log: log, name: sc.name}
	switch {
	case sc.jwksFile != "":
		raw, err := confload.ReadLimited(sc.jwksFile, MaxJWKSBytes)
		if err != nil {
			return nil, fmt.Errorf("%s.jwks_file: %w", sc.name, err)
		}
		km, err := s.parse(raw)
		if err != nil {
			return nil, fmt.Errorf("%s.jwks_file %s: %w", sc.name, sc.jwksFile, err)
		}
		s.keys.Store(km)
		return s, nil
	case sc.jwksURL == "" && given != nil:
		km, err := s.parse(given)
		if err != nil {
			return nil, err
		}
		s.keys.Store(km)
		return s, nil
	case sc.jwksURL == "":
		return nil, fmt.Errorf("%s: set jwks_url or jwks_file", sc.name)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if sc.caFile != "" {
		pem, err := tlscert.ReadPEM(sc.caFile)
		if err != nil {
			return nil, fmt.Errorf("%s.ca_file: %w", sc.name, err)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: tlscert.Pool(pem), MinVersion: tls.VersionTLS12}
	}
	s.url = sc.jwksURL
	s.client = &http.Client{Transport: tr, Timeout: jwksFetchTimeout,
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			return fmt.Errorf("%s JWKS: redirect to %s refused; configure the final URL", sc.name, req.URL.Redacted())
		}}
	s.limiter = rate.NewLimiter(rate.Every(sc.unknownKidInterval), 1)
	empty, _ := jwks.Parse([]byte(`{"keys":[]}`), nil)
	s.keys.Store(empty)
	// Start even when the JWKS host is not up yet: an unknown kid refreshes.
	if err := s.refresh(); err != nil {
		log.Warn(sc.name+" JWKS fetch failed; retried on the first token and periodically", "url", s.url, "error", err)
	}
	go s.periodic(sc.refresh)
	return s, nil
}

func readAllCapped(r io.Reader, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxJWKSBytes {
		return nil, fmt.Errorf("%s is larger than 1 MiB (the limit for a JWKS)", what)
	}
	return b, nil
}

func (s *keySet) periodic(every time.Duration) {
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			if err := s.refresh(); err != nil {
				s.log.Warn(s.name+" JWKS refresh failed; keeping the previous keys", "url", s.url, "error", err)
			}
		}
	}
}

// refresh fetches the set under its own timeout and replaces the keys; on
// any failure the previous keys stay.
func (s *keySet) refresh() error {
	ctx, cancel := context.WithTimeout(s.ctx, jwksFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	if resp.ContentLength > MaxJWKSBytes {
		return errors.New("the response is larger than 1 MiB (the limit for a JWKS)")
	}
	raw, err := readAllCapped(resp.Body, "the response")
	if err != nil {
		return err
	}
	km, err := s.parse(raw)
	if err != nil {
		return err
	}
	s.keys.Store(km)
	return nil
}

// refreshUnknown refreshes for a token with an unknown kid: at most once per
// unknown_kid_interval; a request arriving while a refresh runs waits for
// it, one the limiter turns away fails fast. The refresh itself runs under
// its own timeout, so neither the limiter nor the request bounds it.
func (s *keySet) refreshUnknown(ctx context.Context) {
	if s.url == "" {
		return
	}
	s.mu.Lock()
	ch := s.inflight
	if ch == nil {
		if !s.limiter.Allow() {
			s.mu.Unlock()
			return
		}
		ch = make(chan struct{})
		s.inflight = ch
		go func() {
			if err := s.refresh(); err != nil {
				s.log.Warn(s.name+" JWKS refresh for an unknown kid failed", "url", s.url, "error", err)
			}
			s.mu.Lock()
			s.inflight = nil
			s.mu.Unlock()
			close(ch)
		}()
	}
	s.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// selectKey finds the one key that may verify a token with header h
// (jose.KeyFor); an unknown kid refreshes a remote set first.
func (s *keySet) selectKey(ctx context.Context, h jose.Header) (crypto.PublicKey, error) {
	if h.KidKind == jose.KidString && !s.keys.Load().Has(h.Kid) {
		s.refreshUnknown(ctx)
	}
	return jose.KeyFor(s.keys.Load(), h)
}

// parse reads a JWK set, logging each key it skips.
func (s *keySet) parse(raw []byte) (*jwks.Set, error) {
	return jwks.Parse(raw, func(i int, kid, why string) {
		s.log.Warn(s.name+" JWKS: key skipped", "index", i, "kid", kid, "reason", why)
	})
}
