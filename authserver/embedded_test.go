package authserver

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tokex-dev/tokex/internal/jose"
)

// TestMain lets this test binary be the embedded server (its argv starts
// with "engine"); runner/local's tests start it through the launcher.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "engine" {
		os.Exit(EmbeddedMain(os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// engineConfig writes a server YAML trusting a fresh subject key.
func engineConfig(t *testing.T, tls bool) string {
	t.Helper()
	key, err := jose.GenerateKey(jose.ES256)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := jose.JWKS(key)
	dir := t.TempDir()
	cfg := Default()
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

// child is this test binary serving as the embedded server.
type child struct {
	cmd   *exec.Cmd
	Ready Ready
}

func (c *child) PID() int { return c.cmd.Process.Pid }

// Stop ends the child (SIGTERM, then SIGKILL after grace).
func (c *child) Stop(grace time.Duration) {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// startEngine starts this test binary as the embedded server on config
// (mode "engine") and reads its ready report, as runner/local does.
func startEngine(t *testing.T, mode, config string) (*child, []string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.Command(exe, mode, "--config", config, "--ready-fd", "3")
	var stderr strings.Builder
	cmd.ExtraFiles, cmd.Stderr = []*os.File{w}, &stderr
	cmd.Env = append(os.Environ(), "TOKEX_CLIENT_SECRET=engine-test-Zq9")
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, nil, err
	}
	w.Close()
	stop := context.AfterFunc(ctx, func() { _ = r.SetReadDeadline(time.Now()) })
	defer stop()
	b, err := io.ReadAll(io.LimitReader(r, MaxReadyBytes+1))
	c := &child{cmd: cmd}
	if err == nil {
		c.Ready, err = ParseReady(b)
	}
	if err != nil {
		c.Stop(time.Second)
		return nil, []string{stderr.String()}, err
	}
	return c, nil, nil
}

func TestParseReady(t *testing.T) {
	ok := `{"protocol":1,"url":"https://127.0.0.1:8443","pid":42,"version":"(devel)","go":"go1.26"}`
	if r, err := ParseReady([]byte(ok + "\n")); err != nil || r.URL != "https://127.0.0.1:8443" || r.PID != 42 {
		t.Fatalf("%+v %v", r, err)
	}
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "no ready report"},
		{"not json", "tokex serve: listening on http://127.0.0.1:1", "ready report"},
		{"two values", ok + ok, "more than one JSON value"},
		{"protocol", `{"protocol":2,"url":"http://127.0.0.1:1","pid":1}`, "protocol 2"},
		{"pid", `{"protocol":1,"url":"http://127.0.0.1:1","pid":0}`, "pid 0"},
		{"scheme", `{"protocol":1,"url":"file:///etc/passwd","pid":1}`, "not an http(s) base URL"},
		{"path", `{"protocol":1,"url":"http://127.0.0.1:1/x","pid":1}`, "not an http(s) base URL"},
		{"user", `{"protocol":1,"url":"http://u:p@127.0.0.1:1","pid":1}`, "not an http(s) base URL"},
		{"no port", `{"protocol":1,"url":"http://127.0.0.1","pid":1}`, "no host and port"},
		{"long version", `{"protocol":1,"url":"http://127.0.0.1:1","pid":1,"version":"` + strings.Repeat("v", 300) + `"}`, "too long"},
		{"huge", `{"protocol":1,"url":"http://127.0.0.1:1","pid":1,"x":"` + strings.Repeat("x", MaxReadyBytes) + `"}`, "over"},
	} {
		if _, err := ParseReady([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

// FuzzParseReady: any bytes give a report that passed every check, or an
// error; never a panic.
func FuzzParseReady(f *testing.F) {
	f.Add([]byte(`{"protocol":1,"url":"https://127.0.0.1:8443","pid":42,"version":"(devel)","go":"go1.26"}`))
	f.Add([]byte(`{"protocol":1,"url":"http://[::1]:80","pid":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseReady(b)
		if err != nil {
			return
		}
		if r.Protocol != ReadyProtocol || r.PID <= 0 || !(strings.HasPrefix(r.URL, "http://") || strings.HasPrefix(r.URL, "https://")) {
			t.Fatalf("accepted %+v", r)
		}
	})
}
