package local

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tokex-dev/tokex/authserver"
	"github.com/tokex-dev/tokex/internal/owner"
	"github.com/tokex-dev/tokex/internal/tlscert"
	"github.com/tokex-dev/tokex/subject"
)

// EmbeddedOptions describe the reference server tokex starts for itself.
type EmbeddedOptions struct {
	Exe           string // the tokex binary; default os.Executable()
	Clients       int    // perf-agent-0..N-1
	ClientPrefix  string // perf-agent-
	Secret        string // passed through the environment, never argv
	SubjectKey    *subject.Key
	SubjectIssuer string
	// SubjectLifetime is the minted tokens' lifetime; the server accepts it
	// even when longer than its default maximum.
	SubjectLifetime time.Duration
	SigningAlg      string
	TLS             bool
	Resources       []string
	Scopes          []string
	BaseConfig      string // a tokex serve YAML to start from
	Log             func(level, msg string)
}

// embeddedPrefix names the temporary folder of an embedded server.
const embeddedPrefix = "tokex-embedded-"

// OnEmbeddedStart, when set (tests), learns each child's pid.
var OnEmbeddedStart func(pid int)

// Embedded is a running child `tokex serve` plus the HTTPS JWKS endpoint of
// the generator's key (the article's perf-jwks-server).
type Embedded struct {
	URL     string // token endpoint
	PID     int
	TLS     *tls.Config // trusts the child's certificate
	dir     string
	cmd     *exec.Cmd
	jwks    *subject.IssuerServer
	exited  chan struct{}
	exitErr error
}

// StartEmbedded starts the JWKS endpoint and the child server and waits
// until it answers /healthz.
func StartEmbedded(ctx context.Context, o EmbeddedOptions) (e *Embedded, err error) {
	if o.Exe == "" {
		if o.Exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	logf := o.Log
	if logf == nil {
		logf = func(string, string) {}
	}
	// A tokex killed with SIGKILL could not remove its folder (with a TLS
	// private key): remove those whose owner is gone, ours only.
	if removed, _ := owner.Sweep(os.TempDir(), embeddedPrefix, ""); len(removed) > 0 {
		logf("info", fmt.Sprintf("removed %d temporary folder(s) of killed tokex runs: %s", len(removed), strings.Join(removed, ", ")))
	}
	dir, err := os.MkdirTemp("", embeddedPrefix)
	if err != nil {
		return nil, err
	}
	e = &Embedded{dir: dir, exited: make(chan struct{})}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	if err = owner.Mark(dir); err != nil {
		return e, err
	}
	// The subject JWKS over HTTPS with its own self-signed certificate.
	jwksPair, err := tlscert.Loopback()
	if err != nil {
		return e, err
	}
	if e.jwks, err = subject.ServeIssuer(subject.IssuerOptions{Addr: "127.0.0.1:0", Keys: []*subject.Key{o.SubjectKey}, Cert: &jwksPair.Cert}); err != nil {
		return e, err
	}
	caFile := filepath.Join(dir, "jwks-ca.pem")
	if err = os.WriteFile(caFile, jwksPair.CertPEM, 0o600); err != nil {
		return e, err
	}

	cfg := authserver.Default()
	if o.BaseConfig != "" {
		if cfg, _, err = authserver.Load(o.BaseConfig); err != nil {
			return e, err
		}
	}
	cfg.Addr = "127.0.0.1:0"
	cfg.Subject.JWKSURL, cfg.Subject.JWKSFile, cfg.Subject.CAFile = e.jwks.JWKSURL, "", caFile
	cfg.Subject.Issuer = o.SubjectIssuer
	cfg.Subject.MaxLifetime = max(cfg.Subject.MaxLifetime, o.SubjectLifetime)
	if o.SigningAlg != "" {
		cfg.Signing.Alg = o.SigningAlg
	}
	if len(cfg.Clients) == 0 {
		cfg.DefaultClients.Count = o.Clients
		cfg.DefaultClients.Prefix = o.ClientPrefix
		cfg.DefaultClients.SecretEnv = "TOKEX_CLIENT_SECRET"
		cfg.DefaultClients.Resources = o.Resources
		cfg.DefaultClients.Scopes = o.Scopes
	}
	if o.TLS {
		pair, err := tlscert.Loopback()
		if err != nil {
			return e, err
		}
		certFile, keyFile := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
		if err := os.WriteFile(certFile, pair.CertPEM, 0o600); err != nil {
			return e, err
		}
		if err := os.WriteFile(keyFile, pair.KeyPEM, 0o600); err != nil {
			return e, err
		}
		cfg.TLS = authserver.TLSConfig{Enabled: true, CertFile: certFile, KeyFile: keyFile}
		e.TLS = &tls.Config{RootCAs: tlscert.Pool(pair.CertPEM), MinVersion: tls.VersionTLS12}
	}
	if err = cfg.Validate(nil); err != nil {
		return e, fmt.Errorf("embedded server config: %w", err)
	}
	y, err := yaml.Marshal(cfg)
	if err != nil {
		return e, err
	}
	cfgFile := filepath.Join(dir, "serve.yaml")
	if err = os.WriteFile(cfgFile, y, 0o600); err != nil {
		return e, err
	}

	cmd := exec.Command(o.Exe, "serve", "--config", cfgFile)
	cmd.Env = append(os.Environ(), "TOKEX_CLIENT_SECRET="+o.Secret)
	cmd.SysProcAttr = sysProcAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return e, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return e, err
	}
	if err = cmd.Start(); err != nil {
		return e, fmt.Errorf("start embedded server: %w", err)
	}
	e.cmd, e.PID = cmd, cmd.Process.Pid
	if OnEmbeddedStart != nil {
		OnEmbeddedStart(e.PID)
	}
	urlc := make(chan string, 1)
	go pipeLines(stdout, func(line string) {
		if u, ok := strings.CutPrefix(line, "tokex serve: listening on "); ok {
			select {
			case urlc <- strings.TrimSpace(u):
			default:
			}
		}
		logf("info", line)
	})
	go pipeLines(stderr, func(line string) { logf(levelOf(line), line) })
	go func() {
		e.exitErr = cmd.Wait()
		close(e.exited)
	}()

	var base string
	select {
	case base = <-urlc:
	case <-e.exited:
		return e, fmt.Errorf("embedded server exited at start: %v", e.exitErr)
	case <-time.After(15 * time.Second):
		return e, errors.New("embedded server did not start within 15s")
	case <-ctx.Done():
		return e, ctx.Err()
	}
	e.URL = base + cfg.TokenPath
	return e, e.waitHealthy(ctx, base)
}

func (e *Embedded) waitHealthy(ctx context.Context, base string) error {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: e.TLS}}
	defer c.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := c.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("embedded server not healthy: %v", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-e.exited:
			return fmt.Errorf("embedded server exited: %v", e.exitErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Exited is closed when the child process ends.
func (e *Embedded) Exited() <-chan struct{} { return e.exited }

// ExitErr is the child's exit status once Exited is closed.
func (e *Embedded) ExitErr() error { return e.exitErr }

// Close stops the child (SIGTERM, then SIGKILL after 5 s), the JWKS
// endpoint, and removes the temporary folder with the TLS key.
func (e *Embedded) Close() error {
	var err error
	if e.cmd != nil && e.cmd.Process != nil {
		select {
		case <-e.exited:
		default:
			_ = e.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-e.exited:
			case <-time.After(5 * time.Second):
				_ = e.cmd.Process.Kill()
				<-e.exited
			}
		}
	}
	if e.jwks != nil {
		err = e.jwks.Close()
	}
	if e.dir != "" {
		err = errors.Join(err, os.RemoveAll(e.dir))
	}
	return err
}

func pipeLines(r io.Reader, f func(string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		f(sc.Text())
	}
}

// levelOf reads slog's text level from a child's log line.
func levelOf(line string) string {
	switch {
	case strings.Contains(line, "level=ERROR"):
		return "error"
	case strings.Contains(line, "level=WARN"):
		return "warn"
	}
	return "info"
}
