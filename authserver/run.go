package authserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
)

// NewLogger is the server's log: slog's text format on w, at debug level
// when verbose.
func NewLogger(w io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// Banner is what a started server prints about itself, besides its URL.
type Banner struct {
	Out           io.Writer
	SubjectSource string // where the subject keys come from
	ClientsFrom   string // the file that lists the clients, if any
}

// Run listens, prints the banner, calls ready (when set) once it accepts
// connections, and serves until ctx ends. It is `tokex serve` and the
// engine's common body.
func Run(ctx context.Context, cfg Config, opt Options, b Banner, ready func(*Server) error) error {
	srv, err := New(ctx, cfg, opt)
	if err != nil {
		return err
	}
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	scheme := "http"
	if cfg.TLS.Enabled {
		scheme = "https"
	}
	srv.SetBaseURL(scheme + "://" + ln.Addr().String())
	if cfg.Metrics.Addr != "" {
		mln, err := net.Listen("tcp", cfg.Metrics.Addr)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("metrics.addr: %w", err)
		}
		mctx, stop := context.WithCancel(ctx)
		defer stop()
		go serveMetrics(mctx, mln)
		srv.metricsURL = "http://" + mln.Addr().String() + "/metrics"
	}
	b.print(srv, cfg)
	if ready != nil {
		if err := ready(srv); err != nil {
			_ = ln.Close()
			return err
		}
	}
	if err := srv.Serve(ctx, ln); err != nil {
		return err
	}
	fmt.Fprintln(b.Out, "tokex serve: stopped")
	return nil
}

func (b Banner) print(srv *Server, cfg Config) {
	out := b.Out
	fmt.Fprintf(out, "tokex serve: listening on %s\n", srv.BaseURL())
	fmt.Fprintf(out, "  token endpoint  %s%s\n", srv.BaseURL(), cfg.TokenPath)
	fmt.Fprintf(out, "  issuer          %s (signs %s, kid %s)\n", srv.Issuer(), srv.Key().Alg, srv.Key().Kid)
	fmt.Fprintf(out, "  subject tokens  iss %s, keys from %s, lifetime ≤ %s\n", cfg.Subject.Issuer, b.SubjectSource, cfg.Subject.MaxLifetime)
	if a := cfg.Subject.Actor; a.Issuer != "" {
		fmt.Fprintf(out, "  actor tokens    iss %s, audience %s\n", a.Issuer, a.Audience)
	}
	fmt.Fprintf(out, "  grants          %s; act chains ≤ %d actors\n", strings.Join(srv.grantTypes(), ", "), cfg.Delegation.MaxDepth)
	if len(cfg.Clients) == 0 {
		fmt.Fprintf(out, "  clients         %s0..%d (shared secret, not shown)\n", cfg.DefaultClients.Prefix, cfg.DefaultClients.Count-1)
	} else {
		fmt.Fprintf(out, "  clients         %d from %s\n", len(cfg.Clients), b.ClientsFrom)
	}
	if srv.metricsURL != "" {
		fmt.Fprintf(out, "  metrics         %s (process CPU and memory, for Prometheus)\n", srv.metricsURL)
	}
	if f := srv.Faults(); f != "" {
		fmt.Fprintf(out, "  FAULT INJECTION ON: %s\n", f)
	}
}
