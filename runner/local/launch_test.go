package local

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tokex-dev/tokex/authserver"
	"github.com/tokex-dev/tokex/internal/jose"
)

// init lets this test binary be an embedded server that misbehaves
// ("engine-exit", "engine-silent", "engine-lies"); TestMain makes it one
// that serves ("engine", localtest.RunIfServer).
func init() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case "engine-exit":
		fmt.Fprintln(os.Stderr, "level=ERROR msg=\"cannot serve\"")
		os.Exit(3)
	case "engine-silent":
		time.Sleep(time.Minute)
		os.Exit(0)
	case "engine-lies": // reports a pid that is not its own, as a wrapper would
		f := os.NewFile(3, "ready")
		b, _ := json.Marshal(authserver.Ready{Protocol: authserver.ReadyProtocol, URL: "http://127.0.0.1:1", PID: os.Getppid()})
		_, _ = f.Write(append(b, '\n'))
		f.Close()
		time.Sleep(time.Minute)
		os.Exit(0)
	}
}

// engineConfig writes a server YAML trusting a fresh subject key.
func launchConfig(t *testing.T, tls bool) string {
	t.Helper()
	key, err := jose.GenerateKey(jose.ES256)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := jose.JWKS(key)
	dir := t.TempDir()
	cfg := authserver.Default()
	cfg.Addr = "127.0.0.1:0"
	cfg.Subject.JWKSFile = filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(cfg.Subject.JWKSFile, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.TLS.Enabled, cfg.TLS.SelfSigned = tls, tls
	y, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "serve.yaml")
	if err := os.WriteFile(path, y, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func startTestServer(t *testing.T, mode, config string) (*serverProcess, []string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	p, err := startServer(context.Background(), serverCommand{
		Path: exe, Args: []string{mode}, Config: config,
		Env:    append(os.Environ(), "TOKEX_CLIENT_SECRET=engine-test-Zq9"),
		Stdout: func(l string) { lines <- l }, Stderr: func(l string) { lines <- l },
		Timeout: 10 * time.Second,
	})
	var out []string
	for len(lines) > 0 {
		out = append(out, <-lines)
	}
	return p, out, err
}

// TestEngineReadyHandshake: the engine reports its base URL and pid on the
// ready descriptor once it accepts connections; nothing is read from its
// log lines. It serves there and stops on SIGTERM.
func TestEngineReadyHandshake(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tls), func(t *testing.T) {
			p, _, err := startTestServer(t, "engine", launchConfig(t, tls))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop(5 * time.Second)
			want := "http://127.0.0.1:"
			if tls {
				want = "https://127.0.0.1:"
			}
			if !strings.HasPrefix(p.Ready.URL, want) || p.Ready.PID != p.PID() || p.Ready.Protocol != authserver.ReadyProtocol || p.Ready.Version == "" || p.Ready.Go == "" {
				t.Fatalf("ready report %+v (pid %d)", p.Ready, p.PID())
			}
			if !tls {
				resp, err := http.Get(p.Ready.URL + "/healthz")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("/healthz: %d", resp.StatusCode)
				}
			}
			p.Stop(5 * time.Second)
			<-p.Exited()
			if err := p.ExitErr(); err != nil {
				t.Errorf("after SIGTERM: %v", err)
			}
		})
	}
}

// TestEngineNotReady: an engine that exits, stays silent or reports
// another process's pid is an error that says so, and is not left running.
func TestEngineNotReady(t *testing.T) {
	cfg := launchConfig(t, false)
	for _, c := range []struct{ mode, config, want string }{
		{"engine-exit", cfg, `exited before it was ready (exit status 3; last line: "level=ERROR msg=\"cannot serve\""`},
		{"engine", filepath.Join(t.TempDir(), "missing.yaml"), "missing.yaml"},
		{"engine-lies", cfg, "a wrapper must exec the server"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			p, _, err := startTestServer(t, c.mode, c.config)
			if err == nil {
				p.Stop(time.Second)
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestEngineReadyTimeout(t *testing.T) {
	exe, _ := os.Executable()
	_, err := startServer(context.Background(), serverCommand{Path: exe, Args: []string{"engine-silent"}, Config: "x",
		Timeout: 300 * time.Millisecond, Stdout: func(string) {}})
	if err == nil || !strings.Contains(err.Error(), "not ready within") {
		t.Fatalf("err = %v", err)
	}
}
