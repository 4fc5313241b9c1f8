package authserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/tokex-dev/tokex/internal/confload"
)

// MetricsConfig is the server's own Prometheus endpoint: the process's CPU
// and memory, on a listener of its own, for a Prometheus to scrape (and
// tokex's PromQL method to ask). Off unless Addr is set.
type MetricsConfig struct {
	Addr string `yaml:"addr"` // host:port, like 127.0.0.1:9100; port 0 picks one
}

// processMetrics is what the endpoint serves: the three series of
// Prometheus's process collector that measure the engine, read at each
// scrape. It serves nothing else: no client, token, key or setting.
func processMetrics(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	p, ok := readProcess()
	if !ok {
		http.Error(w, "process figures unavailable on this system", http.StatusServiceUnavailable)
		return
	}
	b := make([]byte, 0, 512)
	b = series(b, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", p.cpuSeconds)
	if p.rssBytes > 0 {
		b = series(b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", float64(p.rssBytes))
	}
	b = series(b, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", startTime)
	_, _ = w.Write(b)
}

// startTime is when the process started, to the millisecond.
var startTime = float64(time.Now().UnixMilli()) / 1000

func series(b []byte, name, typ, help string, v float64) []byte {
	b = fmt.Appendf(b, "# HELP %s %s\n# TYPE %s %s\n%s ", name, help, name, typ, name)
	b = strconv.AppendFloat(b, v, 'g', -1, 64)
	return append(b, '\n')
}

// serveMetrics serves the process metrics on their own listener until ctx
// ends, with the token endpoint's bounds on slow and large requests.
func serveMetrics(ctx context.Context, ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(processMetrics), ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 8 << 10}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return
	}
}

func (m MetricsConfig) validate(doc *confload.Doc) error {
	if m.Addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(m.Addr)
	if err != nil {
		return doc.Errorf("metrics.addr", "must be host:port (like 127.0.0.1:9100): %v", err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return doc.Errorf("metrics.addr", "%q is not a TCP port", port)
	}
	if host != "" && net.ParseIP(host) == nil && host != "localhost" {
		return doc.Errorf("metrics.addr", "the host must be an IP address or localhost (%q)", host)
	}
	return nil
}
