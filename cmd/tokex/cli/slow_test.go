package cli

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunExitCodeAgainstAServerHoldingRequests is issue 23 item 1 through
// the command: a server that holds every 5th request past the request
// timeout, answering the others at once, is alive. The run completes and
// fails its success threshold (exit 1); it used to stop as "target
// unreachable" (exit 2) at the first held request.
func TestRunExitCodeAgainstAServerHoldingRequests(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if n.Add(1)%5 == 0 {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"at","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer"}`))
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	cfg := filepath.Join(t.TempDir(), "slow.yaml")
	if err := os.WriteFile(cfg, []byte("request:\n  timeout: 1s\nthresholds:\n  p95_ms: 60000\nsample_interval: 100ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "run", "--config", cfg, "--target", "http://"+ln.Addr().String()+"/token", "--out", t.TempDir(),
		"--stages", "20", "--rounds", "1", "--duration", "2s", "--warmup", "0s", "--agents", "2", "--subject-alg", "ES256",
		"--no-sanity", "--no-tui", "--idle", "0s", "--unreachable-after", "1s", "--allow-warning", "generator_late,generator_starved,host_saturated,"+shortRunCPU)
	if code != ExitThresholds || !strings.Contains(out, "error: timeout ×8") || !strings.Contains(out, "success 80.00%") {
		t.Errorf("exit %d, want %d, 8 timeouts of 40\nstdout:\n%s\nstderr:\n%s", code, ExitThresholds, out, errs)
	}
}
