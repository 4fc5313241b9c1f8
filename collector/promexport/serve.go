package promexport

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server serves an exporter's series at /metrics (OpenMetrics when the
// scraper asks for it, Prometheus's text format otherwise).
type Server struct {
	ln  net.Listener
	srv *http.Server

	mu      sync.Mutex
	scraped time.Time // when the latest scrape began
	changed chan struct{}
}

// Serve listens on addr (host:port) and serves e until Close.
func Serve(addr string, e *Exporter) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, changed: make(chan struct{})}
	metrics := promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{EnableOpenMetrics: true, MaxRequestsInFlight: 4, Timeout: 10 * time.Second})
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		metrics.ServeHTTP(w, r)
		s.mu.Lock()
		if began.After(s.scraped) {
			s.scraped = began
		}
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	}))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 16 << 10}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return
		}
	}()
	return s, nil
}

// Addr is where it listens.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// WaitScrape waits until a scrape that began after t has been answered (so
// Prometheus holds the campaign's last figures), at most until ctx ends;
// it reports whether one came.
func (s *Server) WaitScrape(ctx context.Context, t time.Time) bool {
	for {
		s.mu.Lock()
		done, ch := s.scraped.After(t), s.changed
		s.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-ch:
		}
	}
}

// Close stops serving.
func (s *Server) Close() error { return s.srv.Close() }
