package authserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
)

// The embedded server is the reference server run as a child process of
// tokex's local driver: `tokex-engine --config FILE --ready-fd 3` (or tokex
// itself in its hidden engine mode; the names stay for compatibility). Once it accepts connections it writes one JSON object,
// Ready, to the inherited descriptor and closes it; the parent
// (runner/local) reads it with a timeout and a size bound. Nothing is
// parsed from its log lines. This file is the server's side.

// ReadyProtocol is the version of the ready report.
const ReadyProtocol = 1

// MaxReadyBytes bounds the ready report a parent reads.
const MaxReadyBytes = 64 << 10

// ErrNoReport: the ready descriptor was closed with nothing written.
var ErrNoReport = errors.New("no ready report")

// Ready is the embedded server's report that it serves.
type Ready struct {
	Protocol int    `json:"protocol"`
	URL      string `json:"url"` // base URL: scheme://host:port
	PID      int    `json:"pid"`
	Version  string `json:"version"` // the server binary's build (BuildVersion)
	Go       string `json:"go"`
}

// BuildVersion names the running binary's build: module version, VCS
// revision and whether the tree was modified, as the Go toolchain stamped
// them ("(devel)" alone for `go run`).
func BuildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v
}

// EmbeddedMain is the embedded server's program: flags --config FILE (required),
// --ready-fd N and -v. It serves until SIGINT or SIGTERM and returns the
// exit code: 0, or 2 when it cannot serve.
func EmbeddedMain(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("tokex-engine", flag.ContinueOnError)
	fl.SetOutput(stderr)
	config := fl.String("config", "", "server YAML (the format of tokex serve --config)")
	readyFD := fl.Int("ready-fd", 0, "write the ready report (JSON) to this inherited descriptor, then close it")
	var verbose bool
	fl.BoolVar(&verbose, "v", false, "log at debug level")
	fl.BoolVar(&verbose, "verbose", false, "log at debug level")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if err := runEmbedded(*config, *readyFD, verbose, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "tokex-engine:", err)
		return 2
	}
	return 0
}

func runEmbedded(config string, readyFD int, verbose bool, stdout, stderr io.Writer) error {
	if config == "" {
		return errors.New("--config is required")
	}
	var ready *os.File
	if readyFD > 0 {
		ready = os.NewFile(uintptr(readyFD), "ready")
		defer ready.Close()
	}
	cfg, doc, err := Load(config)
	if err == nil {
		err = cfg.Validate(doc)
	}
	if err != nil {
		return err
	}
	source := cfg.Subject.JWKSURL + cfg.Subject.JWKSFile
	if source == "" {
		return errors.New("subject.jwks_url or subject.jwks_file is required")
	}
	opt := Options{Logger: NewLogger(stderr, verbose)}
	if len(cfg.Clients) == 0 {
		opt.ClientSecret = os.Getenv(cfg.DefaultClients.SecretEnv)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, cfg, opt, Banner{Out: stdout, SubjectSource: source, ClientsFrom: config}, func(s *Server) error {
		if ready == nil {
			return nil
		}
		err := writeReady(ready, Ready{Protocol: ReadyProtocol, URL: s.BaseURL(), PID: os.Getpid(), Version: BuildVersion(), Go: runtime.Version()})
		if cerr := ready.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

func writeReady(w io.Writer, r Ready) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ParseReady reads a ready report: one JSON object of at most MaxReadyBytes
// with this protocol, a pid and an http(s) base URL with a host and port.
func ParseReady(b []byte) (Ready, error) {
	var r Ready
	if len(b) > MaxReadyBytes {
		return r, fmt.Errorf("ready report over %d bytes", MaxReadyBytes)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return r, ErrNoReport
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("ready report: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return r, errors.New("ready report: more than one JSON value")
	}
	if r.Protocol != ReadyProtocol {
		return r, fmt.Errorf("ready report: protocol %d, want %d (an embedded server of another tokex version?)", r.Protocol, ReadyProtocol)
	}
	if r.PID <= 0 {
		return r, fmt.Errorf("ready report: pid %d", r.PID)
	}
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return r, fmt.Errorf("ready report: url %.100q is not an http(s) base URL", r.URL)
	}
	if host, port, err := net.SplitHostPort(u.Host); err != nil || host == "" || port == "" {
		return r, fmt.Errorf("ready report: url %.100q has no host and port", r.URL)
	}
	if len(r.Version) > 256 || len(r.Go) > 64 {
		return r, errors.New("ready report: version too long")
	}
	return r, nil
}
