// Package e2e runs Dex, a real third-party RFC 8693 server built from the Go
// module proxy by scripts/dex-e2e/build.sh, on loopback for tokex's
// end-to-end suite: tokex's subject issuer is Dex's upstream OIDC provider,
// and Dex's own Prometheus metrics are what tokex's figures are held against.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"text/template"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Options describe the Dex to start.
type Options struct {
	Bin       string // the dex binary
	Dir       string // its config and log
	Upstream  string // the OIDC issuer Dex trusts: tokex's subject issuer
	Connector string // the connector id clients name (connector_id)
	Clients   int    // perf-agent-0..N-1
	Secret    string
	// Procs is Dex's GOMAXPROCS (0: the machine's).
	Procs int
}

// Dex is a running Dex.
type Dex struct {
	Issuer     string // http://127.0.0.1:PORT/dex
	TokenURL   string
	MetricsURL string
	PID        int
	Log        string // path of its output
	cmd        *exec.Cmd
	exited     chan struct{}
}

// config is Dex's configuration: memory storage, every address on
// 127.0.0.1, token exchange on, the perf-agent clients, and one OIDC
// connector to tokex's issuer that verifies id_token subject tokens locally
// against the issuer's discovery document and JWKS. With the email and
// groups scopes Dex reads email, email_verified and groups from the subject
// token and puts them into the tokens it issues.
var config = template.Must(template.New("dex").Parse(`issuer: {{.Issuer}}
storage:
  type: memory
web:
  http: {{.Web}}
telemetry:
  http: {{.Telemetry}}
logger:
  level: warn
  format: text
oauth2:
  grantTypes: ["urn:ietf:params:oauth:grant-type:token-exchange"]
  skipApprovalScreen: true
staticClients:
{{- range .Clients}}
- id: {{.}}
  name: {{.}}
  secret: {{$.Secret}}
{{- end}}
connectors:
- type: oidc
  id: {{.Connector}}
  name: tokex
  config:
    issuer: {{.Upstream}}
    clientID: dex-unused
    clientSecret: unused
    redirectURI: {{.Issuer}}/callback
    scopes: ["openid", "email", "groups"]
    userNameKey: sub
    insecureEnableGroups: true
`))

// Start writes the config, starts Dex and waits until its discovery
// document answers.
func Start(ctx context.Context, o Options) (*Dex, error) {
	web, err := freeAddr()
	if err != nil {
		return nil, err
	}
	tel, err := freeAddr()
	if err != nil {
		return nil, err
	}
	d := &Dex{Issuer: "http://" + web + "/dex", MetricsURL: "http://" + tel + "/metrics", exited: make(chan struct{})}
	d.TokenURL = d.Issuer + "/token"
	var clients []string
	for i := 0; i < o.Clients; i++ {
		clients = append(clients, fmt.Sprintf("perf-agent-%d", i))
	}
	var b bytes.Buffer
	if err := config.Execute(&b, map[string]any{"Issuer": d.Issuer, "Web": web, "Telemetry": tel, "Clients": clients,
		"Secret": o.Secret, "Connector": o.Connector, "Upstream": o.Upstream}); err != nil {
		return nil, err
	}
	cfg := filepath.Join(o.Dir, "dex.yaml")
	if err := os.WriteFile(cfg, b.Bytes(), 0o600); err != nil {
		return nil, err
	}
	d.Log = filepath.Join(o.Dir, "dex.log")
	logf, err := os.Create(d.Log)
	if err != nil {
		return nil, err
	}
	d.cmd = exec.Command(o.Bin, "serve", cfg)
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	d.cmd.Env = os.Environ()
	if o.Procs > 0 {
		d.cmd.Env = append(d.cmd.Env, fmt.Sprintf("GOMAXPROCS=%d", o.Procs))
	}
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start dex: %w", err)
	}
	d.PID = d.cmd.Process.Pid
	go func() {
		_ = d.cmd.Wait()
		logf.Close()
		close(d.exited)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(d.Issuer + "/.well-known/openid-configuration")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return d, nil
			}
		}
		select {
		case <-d.exited:
			return nil, fmt.Errorf("dex exited at start: %s", tail(d.Log))
		case <-ctx.Done():
			d.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.Stop()
			return nil, fmt.Errorf("dex did not answer within 60s: %s", tail(d.Log))
		}
	}
}

// Stop ends Dex (SIGTERM, then SIGKILL after 5 s).
func (d *Dex) Stop() {
	select {
	case <-d.exited:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(5 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
}

// Metric sums the samples of a counter or gauge whose labels include all
// of want, from Dex's telemetry endpoint.
func (d *Dex) Metric(name string, want map[string]string) (float64, error) {
	resp, err := http.Get(d.MetricsURL)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, err
	}
	format := expfmt.ResponseFormat(resp.Header)
	if format.FormatType() == expfmt.TypeUnknown {
		format = expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), format)
	var sum float64
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, err
		}
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue metrics
				}
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum, nil // no series yet is zero: Dex creates one at its first request
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// tail is the last lines of a log, for an error message.
func tail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 20 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
