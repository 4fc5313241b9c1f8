// Package config is the campaign configuration (campaign.yaml): its
// defaults reproduce the seed article's campaign, profiles shorten it, and
// every problem is reported with file, line and field.
package config

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/confload"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/subject"
)

// Campaign is campaign.yaml.
type Campaign struct {
	Name     string        `yaml:"name"`
	Driver   string        `yaml:"driver"` // local (default) or kube
	Target   Target        `yaml:"target"`
	Request  Request       `yaml:"request"`
	Subject  Subject       `yaml:"subject"`
	Check    Check         `yaml:"check"`
	Agents   Agents        `yaml:"agents"`
	Users    Users         `yaml:"users"`
	Stages   []float64     `yaml:"stages"` // total exchanges per second
	Rounds   int           `yaml:"rounds"`
	Duration time.Duration `yaml:"duration"` // measured phase of each run
	Warmup   time.Duration `yaml:"warmup"`   // before it, excluded
	Pause    time.Duration `yaml:"pause"`    // between runs
	// Idle measures the engine at rest before the first run: the fixed
	// cost the marginal-cost fit's intercept is compared with.
	Idle       time.Duration    `yaml:"idle"`
	Capacity   Capacity         `yaml:"capacity"`
	Sanity     Sanity           `yaml:"sanity"`
	Thresholds stats.Thresholds `yaml:"thresholds"`
	Sampling   time.Duration    `yaml:"sample_interval"`
	Out        string           `yaml:"out"`
	Kube       Kube             `yaml:"kube"`
	// Workload is what each arrival does (a chain, a mix) and the plain
	// grant the exchange is compared with.
	Workload Workload `yaml:"workload"`
}

// Capacity configures the capacity search (tokex capacity): the probes
// run at rates it chooses, each with the campaign's warmup, duration and
// thresholds (the objective, plus p99_ms when set).
type Capacity struct {
	Start      float64       `yaml:"start"`      // first probe; 0: the first stage
	Min        float64       `yaml:"min"`        // lowest probe; 0: 1/s
	Max        float64       `yaml:"max"`        // highest probe; 0: 20,000/s per agent … MaxRate
	Factor     float64       `yaml:"factor"`     // exponential step; 0: 2
	Resolution float64       `yaml:"resolution"` // relative width of the final bracket; 0: 0.05
	Rounds     int           `yaml:"rounds"`     // per probe; 0: 2
	MaxProbes  int           `yaml:"max_probes"` // 0: 20
	CoolDown   time.Duration `yaml:"cool_down"`  // the longest cool-down after a broken probe; 0: twice a probe's length, 30s–10m
	P99Ms      float64       `yaml:"p99_ms"`     // also require p99 below this (0: not checked)
	Project    float64       `yaml:"project"`    // project the cores this rate needs (0: none)
}

// Kube configures the Kubernetes driver: where the k6 agent Jobs run and
// which Pods are the engines whose CPU is measured.
type Kube struct {
	Namespace string `yaml:"namespace"` // default: the kubeconfig context's namespace
	Image     string `yaml:"image"`     // grafana/k6:2.2.0
	Engines   struct {
		Namespace string `yaml:"namespace"` // default: Kube.Namespace
		Selector  string `yaml:"selector"`  // label selector of the engine Pods
		Service   string `yaml:"service"`   // engine Service, for verify and smoke
		Port      int    `yaml:"port"`      // its port (9031)
		// Prometheus is the URL of a Prometheus server that scrapes the
		// engine Pods' cAdvisor series: each run's engine CPU and memory
		// are asked of it over the run's window (PromQL, method promql).
		Prometheus string `yaml:"prometheus"`
		// Replicas are the engine counts the campaign measures in turn:
		// the workload is scaled to each, the plan run against it, and the
		// original count restored at the end (docs/scaling.md).
		Replicas []int `yaml:"replicas,omitempty"`
		// Workload is the engines' Deployment or StatefulSet
		// ("deployment/NAME", "statefulset/NAME"); default: found from the
		// selected Pods' owners.
		Workload string `yaml:"workload,omitempty"`
		// Settle is the wait after a count is Ready and behind the Service
		// (default 15s); ReadyTimeout bounds the wait for it (default 5m).
		Settle       time.Duration `yaml:"settle,omitempty"`
		ReadyTimeout time.Duration `yaml:"ready_timeout,omitempty"`
		// PauseHPA pins a HorizontalPodAutoscaler of the workload to each
		// count (min = max) and restores its bounds at the end; without it
		// a campaign with replicas refuses a workload an HPA scales.
		PauseHPA bool `yaml:"pause_hpa,omitempty"`
	} `yaml:"engines"`
	// Agent Pod shape, in Kubernetes' own JSON field names.
	Resources    map[string]any    `yaml:"resources"`
	NodeSelector map[string]string `yaml:"node_selector"`
	Tolerations  []map[string]any  `yaml:"tolerations"`
	Affinity     map[string]any    `yaml:"affinity"`
	Annotations  map[string]string `yaml:"annotations"`
	Labels       map[string]string `yaml:"labels"`
	// InsecureSkipVerify lets k6 accept the engines' self-signed certificate.
	InsecureSkipVerify bool          `yaml:"insecure_skip_verify"`
	TTLAfterFinished   time.Duration `yaml:"ttl_after_finished"`
	MetricsInterval    time.Duration `yaml:"metrics_interval"`
	StartTimeout       time.Duration `yaml:"start_timeout"` // a Pod not Running by then fails the run
	// SummaryMode is k6's --summary-mode: compact (k6's default) or full
	// (adds per-scenario and per-group sections to each agent's log).
	SummaryMode string `yaml:"summary_mode"`
	// EvidenceFile: each agent also writes its output gzipped in its Pod,
	// copied out (pods/exec) once k6 ends, so that lines the kubelet's log
	// rotation took are kept: auto (default: when a run's log would pass the
	// rotation size), always or never.
	EvidenceFile string `yaml:"evidence_file"`
}

// Target is the authorization server under test.
type Target struct {
	// URL of the token endpoint; empty runs tokex's embedded reference server.
	URL                string `yaml:"url"`
	CAFile             string `yaml:"ca_file"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
	HTTP2              *bool  `yaml:"http2"`
	// HTTP is the protocol, chosen explicitly: "1.1", "2" (over TLS) or
	// "h2c" (HTTP/2 without TLS); default HTTP/2 when TLS offers it.
	HTTP string `yaml:"http"`
	// KeepAlive false opens a new connection (and TLS handshake) for every
	// request, to measure what a short-lived client pays.
	KeepAlive *bool `yaml:"keep_alive"`
	// KeepAliveIdle is how long a kept-alive connection may sit idle and
	// still be reused (local driver); an older one is closed and a new one
	// dialed. Below the 5 s many servers close idle connections after
	// (Node, Apache, uvicorn), so tokex never sends on a connection the
	// server is closing; a server's Keep-Alive: timeout=N retires one
	// sooner, and a request that still meets a closed one is sent again.
	KeepAliveIdle time.Duration `yaml:"keep_alive_idle"`
	Embedded      Embedded      `yaml:"embedded"`
	// How the engine of a target.url is measured (one at most): a process
	// on this host and its descendants (or its own cgroup), a cgroup v2
	// directory, or a Prometheus endpoint with the server's process metrics.
	PID int `yaml:"pid"`
	// PIDFile names the file the server writes its PID to: read at every
	// start and resume, so a restarted server is found by its new PID.
	PIDFile    string `yaml:"pid_file"`
	Cgroup     string `yaml:"cgroup"`
	MetricsURL string `yaml:"metrics_url"`
	// Prometheus is the URL of a Prometheus server (its HTTP API) that
	// holds the engine's CPU-seconds counter (PrometheusCPU, a series
	// selector; default with the kube driver: cAdvisor's series of the
	// engine Pods) and memory (PrometheusMemory): each run's engine figure
	// is asked of it with PromQL over the run's exact window (method
	// promql), beside what tokex samples itself. TOKEX_PROMETHEUS_URL
	// overrides it (credentials stay out of the evidence).
	Prometheus       string `yaml:"prometheus"`
	PrometheusCPU    string `yaml:"prometheus_cpu"`
	PrometheusMemory string `yaml:"prometheus_memory"`
	// UnreachableAfter stops the run and the campaign when requests failed
	// and the target neither answered any (any HTTP status) nor accepted a
	// connection for this long. One that accepts connections but answers
	// slower than the request timeout is overloaded, not unreachable.
	UnreachableAfter time.Duration `yaml:"unreachable_after"`
}

// DefaultKeepAliveIdle is target.keep_alive_idle's default: below the 5 s
// keep-alive timeout of Node's http server, Apache and uvicorn.
const DefaultKeepAliveIdle = 4 * time.Second

// Protocol is the HTTP protocol asked for: "1.1", "2", "h2c", or "" (HTTP/2
// when TLS offers it, else HTTP/1.1).
func (t Target) Protocol() string {
	if t.HTTP == "" && t.HTTP2 != nil && !*t.HTTP2 {
		return "1.1"
	}
	return t.HTTP
}

// HTTPProtocols is target.http as net/http's protocol set: HTTP/1.1 and,
// unless http2: false, HTTP/2 when TLS offers it by default.
func (t Target) HTTPProtocols() *http.Protocols {
	var p http.Protocols
	switch t.Protocol() {
	case "1.1":
		p.SetHTTP1(true)
	case "2":
		p.SetHTTP2(true)
	case "h2c":
		p.SetUnencryptedHTTP2(true)
	default:
		p.SetHTTP1(true)
		p.SetHTTP2(true)
	}
	return &p
}

// NewConnectionPerRequest reports keep_alive: false.
func (t Target) NewConnectionPerRequest() bool { return t.KeepAlive != nil && !*t.KeepAlive }

// validateHTTP checks target.http against the scheme the target is reached by.
func (c *Campaign) validateHTTP(doc *confload.Doc) error {
	t := c.Target
	tls := strings.HasPrefix(t.URL, "https://") || (t.URL == "" && (t.Embedded.TLS == nil || *t.Embedded.TLS))
	switch t.HTTP {
	case "", "1.1":
	case "2":
		if !tls {
			return doc.Errorf("target.http", "HTTP/2 over TLS needs an https target (h2c is HTTP/2 without TLS)")
		}
	case "h2c":
		if tls {
			return doc.Errorf("target.http", "h2c is HTTP/2 without TLS: give an http:// target (embedded: target.embedded.tls: false)")
		}
	default:
		return doc.Errorf("target.http", "unknown protocol %q (1.1, 2, h2c)", t.HTTP)
	}
	if t.HTTP2 != nil && !*t.HTTP2 && (t.HTTP == "2" || t.HTTP == "h2c") {
		return doc.Errorf("target.http", "http2: false contradicts http: %s", t.HTTP)
	}
	if c.Driver == "kube" && t.HTTP == "h2c" {
		return doc.Errorf("target.http", "the k6 agents speak HTTP/1.1 or HTTP/2 over TLS; use the local driver for h2c")
	}
	if c.Driver == "kube" && t.NewConnectionPerRequest() {
		return doc.Errorf("target.keep_alive", "the k6 agents keep connections alive; use the local driver for a connection per request")
	}
	return nil
}

// Embedded configures the reference server tokex starts for itself.
type Embedded struct {
	SigningAlg string `yaml:"signing_alg"`
	TLS        *bool  `yaml:"tls"`
	Config     string `yaml:"config"` // a tokex serve YAML to start from
	// Engine is the server's program, tokex-engine; default: beside tokex,
	// or tokex itself (see local.FindServerProgram).
	Engine string `yaml:"engine,omitempty"`
	// Engines are the engine counts the campaign measures in turn: that
	// many processes sharing the port (SO_REUSEPORT), each pinned to its
	// own CPUs where the host has enough (docs/scaling.md).
	Engines []int `yaml:"engines,omitempty"`
}

// Request is the exchange request's fixed part.
type Request struct {
	SubjectTokenType   string            `yaml:"subject_token_type"`
	RequestedTokenType string            `yaml:"requested_token_type"`
	Resources          []string          `yaml:"resources"`
	Audiences          []string          `yaml:"audiences"`
	Scope              string            `yaml:"scope"`
	Extra              map[string]string `yaml:"extra"`
	AuthMethod         string            `yaml:"auth_method"`
	// ClientAssertion shapes private_key_jwt's assertions.
	ClientAssertion ClientAssertion `yaml:"client_assertion"`
	Timeout         time.Duration   `yaml:"timeout"`
}

// ClientAssertion is what private_key_jwt's assertions (RFC 7523) carry
// besides iss = sub = the client id and a unique jti.
type ClientAssertion struct {
	Audience string        `yaml:"audience"` // default: the token endpoint URL
	Lifetime time.Duration `yaml:"lifetime"` // exp − iat, 60s
}

// Template is the exchange request's fixed part, as every driver and
// `tokex smoke` send it.
func (r Request) Template() exchange.Template {
	return exchange.Template{SubjectTokenType: r.SubjectTokenType, RequestedTokenType: r.RequestedTokenType,
		Resources: r.Resources, Audiences: r.Audiences, Scope: r.Scope, Extra: r.Extra, Auth: exchange.AuthMethod(r.AuthMethod)}
}

// Check is what makes a response a success.
type Check struct {
	// Required members, non-empty strings (default access_token,
	// issued_token_type); TokenType the expected token_type, any case.
	Required  []string `yaml:"required,omitempty"` // unset (nil) is the default; [] requires nothing
	TokenType string   `yaml:"token_type"`
	Verify    Verify   `yaml:"verify"`
}

// Verify checks a sample of the issued tokens against the target's keys,
// found through its metadata.
type Verify struct {
	Sample      float64       `yaml:"sample"`       // fraction of successes verified, 0 (off) to 1
	MetadataURL string        `yaml:"metadata_url"` // default: discovered from target.url
	Audience    string        `yaml:"audience"`     // expected in aud; default the requested resource, "any" not checked
	Client      bool          `yaml:"client"`       // client_id or act.sub is the agent's client
	Lifetime    time.Duration `yaml:"lifetime"`     // expected exp − iat; 0 not checked
}

// Exchange is the check as exchange applies it.
func (c Check) Exchange() exchange.Check {
	return exchange.Check{Required: c.Required, TokenType: c.TokenType}
}

// Expect is what a verified token must show: check.verify's, with the
// audience by default the request's first resource or audience (none:
// not checked; "any": never).
func (c *Campaign) Expect() exchange.Expect {
	v := c.Check.Verify
	aud := v.Audience
	if want := append(slices.Clone(c.Request.Resources), c.Request.Audiences...); aud == "" && len(want) > 0 {
		aud = want[0]
	}
	if aud == "any" {
		aud = ""
	}
	return exchange.Expect{Audience: aud, Client: v.Client, Lifetime: v.Lifetime}
}

// Subject is how the generator mints subject tokens.
type Subject struct {
	Issuer   string        `yaml:"issuer"`
	Alg      string        `yaml:"alg"`
	KeyFile  string        `yaml:"key_file"`
	Lifetime time.Duration `yaml:"lifetime"`
	// Kid names the key in the token's header (default: its RFC 7638
	// thumbprint, which `tokex jwks` publishes).
	Kid string `yaml:"kid,omitempty"`
	// Typ is the header's typ (default JWT; at+jwt for RFC 9068).
	Typ string `yaml:"typ,omitempty"`
	// Audience is a fixed aud; default the agent's client id (the article).
	Audience string `yaml:"audience,omitempty"`
	// Claims are added to every token; strings may use {{user}},
	// {{user_number}} and {{client_id}}.
	Claims map[string]any `yaml:"claims,omitempty"`
	// Premint signs each run's tokens before the run starts (local driver):
	// the measured window then spends no CPU on signing.
	Premint bool `yaml:"premint,omitempty"`
	// Actor is the agent's own identity, sent as actor_token with every
	// exchange.
	Actor Actor `yaml:"actor,omitempty"`
}

// Shape is the subject tokens' shape beyond the article's claims.
func (s Subject) Shape() subject.Shape {
	return subject.Shape{Typ: s.Typ, Audience: s.Audience, Claims: s.Claims}
}

// Agents are the load agents (k6 Pods in the article).
type Agents struct {
	Count          int    `yaml:"count"`
	ClientIDPrefix string `yaml:"client_id_prefix"`
	ClientSecret   string `yaml:"client_secret"` // or TOKEX_CLIENT_SECRET; never written out
	MaxInFlight    int    `yaml:"max_in_flight"` // per agent; a full cap drops the arrival
	// ClientKey signs the agents' client assertions (private_key_jwt).
	ClientKey ClientKey `yaml:"client_key"`
	// ClientCert is the agents' TLS client certificate (tls_client_auth).
	ClientCert ClientCert `yaml:"client_cert"`
}

// ClientCert is one certificate every agent presents (tls_client_auth);
// unset, each agent has its own, subject CN=<client id>, issued by tokex's
// stored client CA (a fresh CA for the embedded server).
type ClientCert struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// ClientKey is the agents' private_key_jwt key: one stored key per agent
// (tokex jwks --clients prints their public keys), or one file for all.
type ClientKey struct {
	Alg  string `yaml:"alg"`  // of the stored keys: ES256 (default), RS256, EdDSA
	File string `yaml:"file"` // one key (PEM) every agent signs with
	Kid  string `yaml:"kid,omitempty"`
}

// Users is the synthetic user pool.
type Users struct {
	Count  int    `yaml:"count"`
	Prefix string `yaml:"prefix"`
}

// Names are the users' names: prefix001 … prefixN.
func (u Users) Names() []string {
	names := subject.Users(u.Count)
	if u.Prefix != "perf-user-" {
		for i := range names {
			names[i] = u.Prefix + strings.TrimPrefix(names[i], "perf-user-")
		}
	}
	return names
}

// Sanity is the throwaway run before the first round.
type Sanity struct {
	Enabled  bool          `yaml:"enabled"`
	Duration time.Duration `yaml:"duration"`
	Rate     float64       `yaml:"rate"` // 0: the first stage's rate
}

// Article returns the seed article's campaign.
func Article() Campaign {
	return Campaign{
		Name:   "article",
		Driver: "local",
		Request: Request{
			SubjectTokenType:   exchange.TokenTypeAccessToken,
			RequestedTokenType: exchange.TokenTypeAccessToken,
			Resources:          []string{"https://mcp.example.internal/mcp"},
			Scope:              "mcp:tools:invoke",
			AuthMethod:         string(exchange.AuthBasic),
			ClientAssertion:    ClientAssertion{Lifetime: time.Minute},
			Timeout:            10 * time.Second,
		},
		Target: Target{Embedded: Embedded{SigningAlg: jose.RS256}, UnreachableAfter: 10 * time.Second,
			KeepAliveIdle: DefaultKeepAliveIdle},
		Subject:    Subject{Issuer: "https://pf-perf-subject", Alg: jose.RS256, Lifetime: 5 * time.Minute},
		Agents:     Agents{Count: 10, ClientIDPrefix: "perf-agent-", MaxInFlight: 100, ClientKey: ClientKey{Alg: jose.ES256}},
		Users:      Users{Count: 100, Prefix: "perf-user-"},
		Stages:     []float64{100, 250, 500},
		Rounds:     3,
		Duration:   5 * time.Minute,
		Warmup:     30 * time.Second,
		Sanity:     Sanity{Enabled: true, Duration: 30 * time.Second},
		Idle:       30 * time.Second,
		Capacity:   Capacity{Resolution: 0.05, Rounds: 2},
		Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99, MaxDropped: 0},
		Sampling:   time.Second,
		Out:        "tokex-evidence",
		Kube: Kube{Image: "grafana/k6:2.2.0", TTLAfterFinished: 10 * time.Minute, MetricsInterval: 5 * time.Second,
			StartTimeout: 30 * time.Second},
		Workload: Workload{Chain: 1},
	}
}

// Profiles are named starting points; "quick" finishes in about two
// minutes on 2 cores with RS256 on both sides.
var Profiles = map[string]func() Campaign{
	"article": Article,
	"quick": func() Campaign {
		c := Article()
		c.Name = "quick"
		c.Stages = []float64{25, 50, 100}
		c.Duration = 10 * time.Second
		c.Warmup = 3 * time.Second
		c.Sanity.Duration = 5 * time.Second
		c.Idle = 10 * time.Second
		return c
	},
}

// Load reads path over the profile's defaults.
func Load(path, profile string) (Campaign, *confload.Doc, error) {
	if c, err := FromProfile(profile); err != nil {
		return c, nil, err
	}
	data, err := confload.ReadLimited(path, confload.MaxFileBytes)
	if err != nil {
		return Campaign{}, nil, err
	}
	return LoadData(path, data, profile)
}

// LoadData is Load of a file already read (an evidence folder's
// config.yaml, read through the folder); file names it in errors.
func LoadData(file string, data []byte, profile string) (Campaign, *confload.Doc, error) {
	c, err := FromProfile(profile)
	if err != nil {
		return c, nil, err
	}
	doc, err := confload.Parse(file, data)
	if err != nil {
		return c, nil, err
	}
	if err := doc.Decode(&c); err != nil {
		return c, doc, err
	}
	return c, doc, nil
}

// FromProfile returns a named profile.
func FromProfile(name string) (Campaign, error) {
	if name == "" {
		name = "article"
	}
	p, ok := Profiles[name]
	if !ok {
		return Campaign{}, fmt.Errorf("unknown profile %q (quick, article)", name)
	}
	return p(), nil
}

// Limits of a campaign (docs/running.md "Config limits"): every size is bounded, so
// a config cannot make tokex run out of memory or write evidence its own
// readers refuse.
const (
	MaxNameLen        = 64
	MaxStages         = 100
	MaxRounds         = 100
	MaxRuns           = stats.MaxRuns // stages × rounds, plus the sanity run: the readers' limit
	MinRate           = 0.01          // exchanges/s, one every 100 s
	MaxRate           = 100000
	MaxRatePerAgent   = 20000
	MaxArrivalsPerRun = stats.MaxRunRows // rows of one run's requests.csv.gz: the readers' limit
	MaxAgents         = 1000
	MaxInFlight       = 10000
	MaxWorkers        = 100000 // agents × max_in_flight: goroutines and connections
	MaxUsers          = 1_000_000
	MaxPhase          = 24 * time.Hour // duration, warmup, pause, sanity.duration, subject.lifetime
	MaxTimeout        = 5 * time.Minute
	MaxP95Ms          = 3_600_000
)

// inRange is false for NaN, unlike a pair of "<" / ">" refusals.
func inRange(x, lo, hi float64) bool { return x >= lo && x <= hi }

// Validate checks the campaign; doc (may be nil) locates fields in the file.
// The checks run in a fixed order and the first failure is returned, so a
// file with several mistakes always reports the same one.
func (c *Campaign) Validate(doc *confload.Doc) error {
	for _, check := range []func(*confload.Doc) error{
		c.validateDriver,
		c.validateTarget,
		c.validateSubject,
		c.validateRequest,
		c.validateAgents,
		c.validatePlan,
		c.validateWorkload,
		c.validateSanity,
		c.validateThresholds,
		c.validateReplicas,
	} {
		if err := check(doc); err != nil {
			return err
		}
	}
	return nil
}

// validateDriver checks the campaign's name and the driver with its settings.
func (c *Campaign) validateDriver(doc *confload.Doc) error {
	if len(c.Name) > MaxNameLen {
		return doc.Errorf("name", "is %d characters; at most %d", len(c.Name), MaxNameLen)
	}
	switch c.Driver {
	case "local", "":
	case "kube":
		if err := c.validateKube(doc); err != nil {
			return err
		}
	default:
		return doc.Errorf("driver", "unknown driver %q (local, kube)", c.Driver)
	}
	if c.Kube.TTLAfterFinished < 0 || c.Kube.TTLAfterFinished > 7*24*time.Hour {
		return doc.Errorf("kube.ttl_after_finished", "must be between 0 and 168h")
	}
	if p := c.Kube.Engines.Port; p < 0 || p > 65535 {
		return doc.Errorf("kube.engines.port", "%d is not a TCP port", p)
	}
	return nil
}

// validateTarget checks how the target is reached and how its engine is sampled.
func (c *Campaign) validateTarget(doc *confload.Doc) error {
	if c.Target.URL != "" {
		u, err := url.Parse(c.Target.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return doc.Errorf("target.url", "must be an http(s) URL of the token endpoint")
		}
	}
	if u := c.Target.UnreachableAfter; u < time.Second || u > time.Hour {
		return doc.Errorf("target.unreachable_after", "%s must be between 1s and 1h", u)
	}
	if k := c.Target.KeepAliveIdle; k < 100*time.Millisecond || k > time.Hour {
		return doc.Errorf("target.keep_alive_idle", "%s must be between 100ms and 1h", k)
	}
	if err := c.validateEngineSampling(doc); err != nil {
		return err
	}
	if err := c.validatePrometheus(doc); err != nil {
		return err
	}
	if a := c.Target.Embedded.SigningAlg; a != "" && !slices.Contains(jose.Algorithms, a) {
		return doc.Errorf("target.embedded.signing_alg", "unsupported algorithm %q (RS256, ES256, EdDSA)", a)
	}
	return nil
}

// validateSubject checks the subject tokens the agents mint.
func (c *Campaign) validateSubject(doc *confload.Doc) error {
	if !slices.Contains(jose.Algorithms, c.Subject.Alg) && c.Subject.KeyFile == "" {
		return doc.Errorf("subject.alg", "unsupported algorithm %q (RS256, ES256, EdDSA)", c.Subject.Alg)
	}
	if c.Subject.KeyFile != "" {
		// The agents sign with the key's algorithm and are sized for
		// subject.alg: the two must agree. An unreadable file is the key
		// loader's to report.
		if k, err := subject.LoadPEM(c.Subject.KeyFile); err == nil && k.Alg != c.Subject.Alg {
			return doc.Errorf("subject.alg", "%q, but subject.key_file holds a %s key: set subject.alg: %s (tokex signs with the key's algorithm)", c.Subject.Alg, k.Alg, k.Alg)
		}
	}
	if c.Subject.Issuer == "" {
		return doc.Errorf("subject.issuer", "is required")
	}
	if c.Subject.Lifetime < time.Second || c.Subject.Lifetime > MaxPhase {
		return doc.Errorf("subject.lifetime", "must be between 1s and 24h")
	}
	return c.validateSubjectShape(doc)
}

// validateAgents checks the agents, their concurrency and the users they act for.
func (c *Campaign) validateAgents(doc *confload.Doc) error {
	if c.Agents.Count < 1 || c.Agents.Count > MaxAgents {
		return doc.Errorf("agents.count", "must be between 1 and %d", MaxAgents)
	}
	if c.Agents.MaxInFlight < 1 || c.Agents.MaxInFlight > MaxInFlight {
		return doc.Errorf("agents.max_in_flight", "must be between 1 and %d", MaxInFlight)
	}
	if w := c.Agents.Count * c.Agents.MaxInFlight; w > MaxWorkers {
		return doc.Errorf("agents.max_in_flight", "%d agents × %d in flight is %d workers; at most %d", c.Agents.Count, c.Agents.MaxInFlight, w, MaxWorkers)
	}
	if c.Users.Count < 1 || c.Users.Count > MaxUsers {
		return doc.Errorf("users.count", "must be between 1 and %d", MaxUsers)
	}
	return nil
}

// validatePlan checks the stages, rounds and phases, and that no run is
// larger than the evidence readers accept.
func (c *Campaign) validatePlan(doc *confload.Doc) error {
	if len(c.Stages) == 0 || len(c.Stages) > MaxStages {
		return doc.Errorf("stages", "needs between 1 and %d rates", MaxStages)
	}
	if c.Rounds < 1 || c.Rounds > MaxRounds {
		return doc.Errorf("rounds", "must be between 1 and %d", MaxRounds)
	}
	if n := len(c.Stages) * c.Rounds; n+1 > MaxRuns {
		return doc.Errorf("rounds", "%d stages × %d rounds is %d runs; at most %d with the sanity run", len(c.Stages), c.Rounds, n, MaxRuns)
	}
	if err := c.validatePhases(doc); err != nil {
		return err
	}
	for i, s := range c.Stages {
		f := fmt.Sprintf("stages[%d]", i)
		if !inRange(s, MinRate, MaxRate) {
			return doc.Errorf(f, "rate %g must be between %g and %d exchanges/s", s, MinRate, MaxRate)
		}
		if s/float64(c.Agents.Count) > MaxRatePerAgent {
			return doc.Errorf(f, "rate %g is more than %d/s per agent; add agents", s, MaxRatePerAgent)
		}
		if n := s * (c.Warmup + c.Duration).Seconds(); n > MaxArrivalsPerRun {
			return doc.Errorf(f, "rate %g over %s is %.0f arrivals in one run; at most %d", s, c.Warmup+c.Duration, n, MaxArrivalsPerRun)
		}
	}
	return nil
}

// validateSanity checks the sanity run; it needs the stages checked first
// (a zero sanity.rate means the first stage's).
func (c *Campaign) validateSanity(doc *confload.Doc) error {
	if c.Sanity.Enabled && (c.Sanity.Duration < time.Second || c.Sanity.Duration > MaxPhase) {
		return doc.Errorf("sanity.duration", "must be between 1s and 24h")
	}
	if r := c.Sanity.Rate; r != 0 && !inRange(r, MinRate, MaxRate) {
		return doc.Errorf("sanity.rate", "must be 0 (the first stage's rate) or between %g and %d", MinRate, MaxRate)
	}
	if r := c.Sanity.Rate; c.Sanity.Enabled && r/float64(c.Agents.Count) > MaxRatePerAgent {
		return doc.Errorf("sanity.rate", "rate %g is more than %d/s per agent; add agents", r, MaxRatePerAgent)
	}
	if sr := c.Sanity.Rate; c.Sanity.Enabled && (sr == 0 && c.Stages[0]*c.Sanity.Duration.Seconds() > MaxArrivalsPerRun || sr*c.Sanity.Duration.Seconds() > MaxArrivalsPerRun) {
		return doc.Errorf("sanity.duration", "the sanity run would be more than %d arrivals", MaxArrivalsPerRun)
	}
	return nil
}

// validateThresholds checks the verdict's thresholds and the sampling interval.
func (c *Campaign) validateThresholds(doc *confload.Doc) error {
	th := c.Thresholds
	if !inRange(th.P95Ms, 0, MaxP95Ms) || th.P95Ms == 0 {
		return doc.Errorf("thresholds.p95_ms", "must be positive and at most %d", MaxP95Ms)
	}
	if !inRange(th.SuccessRatio, 0, 1) {
		return doc.Errorf("thresholds.success_ratio", "must be between 0 and 1")
	}
	if th.MaxDropped < 0 {
		return doc.Errorf("thresholds.max_dropped", "must not be negative")
	}
	for i, w := range th.AllowWarnings {
		if !w.Invalidating() {
			return doc.Errorf(fmt.Sprintf("thresholds.allow_warnings[%d]", i), "%q is not a warning that fails the verdict (%s)", w, InvalidatingList())
		}
	}
	if c.Sampling < 100*time.Millisecond || c.Sampling > time.Minute {
		return doc.Errorf("sample_interval", "must be between 100ms and 1m")
	}
	return nil
}

// InvalidatingList names the warning codes allow_warnings accepts.
func InvalidatingList() string {
	var names []string
	for _, c := range stats.InvalidatingCodes {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

// SetClaim adds an extra subject-token claim from NAME=VALUE (a command
// line flag): VALUE is JSON when it parses as JSON (["a","b"], true, 42),
// else a string ({{user}}@example.com).
func (c *Campaign) SetClaim(nameValue string) error {
	name, value, ok := strings.Cut(nameValue, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q: want NAME=VALUE", nameValue)
	}
	var v any = value
	if json.Valid([]byte(value)) {
		_ = json.Unmarshal([]byte(value), &v)
	}
	if c.Subject.Claims == nil {
		c.Subject.Claims = map[string]any{}
	}
	c.Subject.Claims[name] = v
	return nil
}

// SetFormField adds an extra form field from NAME=VALUE (a command line
// flag), such as Dex's connector_id.
func (c *Campaign) SetFormField(nameValue string) error {
	name, value, ok := strings.Cut(nameValue, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q: want NAME=VALUE", nameValue)
	}
	if c.Request.Extra == nil {
		c.Request.Extra = map[string]string{}
	}
	c.Request.Extra[name] = value
	return nil
}

// validateRequest checks the client authentication, the timeout, the token
// types, the extra form fields and the success check.
func (c *Campaign) validateRequest(doc *confload.Doc) error {
	if err := c.validateHTTP(doc); err != nil {
		return err
	}
	if err := c.validateClientAuth(doc); err != nil {
		return err
	}
	r := c.Request
	if r.Timeout <= 0 || r.Timeout > MaxTimeout {
		return doc.Errorf("request.timeout", "must be positive and at most 5m")
	}
	if r.SubjectTokenType == "" {
		return doc.Errorf("request.subject_token_type", "is required (%s, or a token type URI)", strings.Join(exchange.TokenTypeNames, ", "))
	}
	for _, f := range []struct{ field, v string }{{"request.subject_token_type", r.SubjectTokenType}, {"request.requested_token_type", r.RequestedTokenType}} {
		if f.v != "" && !strings.Contains(exchange.TokenTypeURI(f.v), ":") {
			return doc.Errorf(f.field, "%q is neither %s nor a token type URI", f.v, strings.Join(exchange.TokenTypeNames, ", "))
		}
	}
	if len(r.Extra) > 64 {
		return doc.Errorf("request.extra", "at most 64 extra form fields")
	}
	for k, v := range r.Extra {
		if slices.Contains(exchange.SentFields, k) {
			return doc.Errorf("request.extra."+k, "tokex sends %s itself; set it through the request's own settings", k)
		}
		if k == "" || len(k)+len(v) > 8192 {
			return doc.Errorf("request.extra", "a field needs a name, and name and value at most 8192 bytes")
		}
	}
	return c.validateCheck(doc)
}

// validateClientAuth checks request.auth_method and what it needs.
func (c *Campaign) validateClientAuth(doc *confload.Doc) error {
	m := exchange.AuthMethod(c.Request.AuthMethod)
	if !slices.Contains(exchange.AuthMethods, m) {
		return doc.Errorf("request.auth_method", "unknown method %q (client_secret_basic, client_secret_post, private_key_jwt, tls_client_auth)", m)
	}
	if c.Driver == "kube" && m != exchange.AuthBasic && m != exchange.AuthPost {
		return doc.Errorf("request.auth_method", "the k6 agents authenticate with a client secret (client_secret_basic or client_secret_post); use the local driver for %s", m)
	}
	a, k := c.Request.ClientAssertion, c.Agents.ClientKey
	if len(a.Audience) > 512 || strings.ContainsFunc(a.Audience+k.Kid, func(r rune) bool { return r < 0x20 || r == 0x7f }) || len(k.Kid) > 512 {
		return doc.Errorf("request.client_assertion.audience", "audience and agents.client_key.kid: at most 512 characters without control characters")
	}
	if a.Lifetime < time.Second || a.Lifetime > time.Hour {
		return doc.Errorf("request.client_assertion.lifetime", "must be between 1s and 1h")
	}
	if !slices.Contains(jose.Algorithms, k.Alg) {
		return doc.Errorf("agents.client_key.alg", "unsupported algorithm %q (ES256, RS256, EdDSA)", k.Alg)
	}
	if cc := c.Agents.ClientCert; (cc.CertFile == "") != (cc.KeyFile == "") {
		return doc.Errorf("agents.client_cert", "give cert_file and key_file together")
	}
	tls := strings.HasPrefix(c.Target.URL, "https://") || c.Embedded() && (c.Target.Embedded.TLS == nil || *c.Target.Embedded.TLS)
	if m == exchange.AuthTLSClient && !tls {
		return doc.Errorf("request.auth_method", "tls_client_auth needs TLS: an https target (embedded: target.embedded.tls: true)")
	}
	if m == exchange.AuthPrivateKeyJWT && c.Subject.Premint {
		return doc.Errorf("subject.premint", "client assertions are short-lived and signed as the run goes; pre-signed ones would outlive what servers accept: use private_key_jwt without pre-minting (ES256 subject tokens are cheap)")
	}
	return nil
}

// validateKube checks what only the kube driver needs or refuses.
func (c *Campaign) validateKube(doc *confload.Doc) error {
	if c.Target.URL == "" {
		return doc.Errorf("target.url", "the kube driver needs the engines' token endpoint as seen from inside the cluster")
	}
	if c.Kube.Image == "" {
		return doc.Errorf("kube.image", "is required")
	}
	if c.Subject.Alg != jose.RS256 && c.Subject.Alg != jose.ES256 {
		return doc.Errorf("subject.alg", "the k6 agents sign RS256 (the article's) or ES256 subject tokens with WebCrypto, not %q", c.Subject.Alg)
	}
	if c.Kube.MetricsInterval < time.Second || c.Kube.MetricsInterval > 5*time.Minute {
		return doc.Errorf("kube.metrics_interval", "must be between 1s and 5m")
	}
	if c.Kube.StartTimeout < time.Second || c.Kube.StartTimeout > time.Hour {
		return doc.Errorf("kube.start_timeout", "must be between 1s and 1h")
	}
	if c.Subject.Premint {
		return doc.Errorf("subject.premint", "the k6 agents sign each token inside its iteration; pre-minting is the local driver's")
	}
	if s := c.Subject; s.Typ != "" || s.Audience != "" || len(s.Claims) > 0 {
		return doc.Errorf(kubeUnsupported(s), "the k6 agents mint the article's subject token (typ JWT, aud the client id, no extra claims); use the local driver for this shape")
	}
	if m := c.Kube.SummaryMode; m != "" && m != "compact" && m != "full" {
		return doc.Errorf("kube.summary_mode", "unknown mode %q (compact, full: tokex reconciles every request with it)", m)
	}
	if m := c.Kube.EvidenceFile; m != "" && m != "auto" && m != "always" && m != "never" {
		return doc.Errorf("kube.evidence_file", "unknown mode %q (auto, always, never)", m)
	}
	return nil
}

// validateCheck checks the success check and the verification of issued
// tokens.
func (c *Campaign) validateCheck(doc *confload.Doc) error {
	k := c.Check
	if len(k.Required) > 16 {
		return doc.Errorf("check.required", "at most 16 members")
	}
	for _, f := range append(slices.Clone(k.Required), k.TokenType, k.Verify.Audience) {
		if len(f) > 256 || strings.ContainsFunc(f, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return doc.Errorf("check", "%q: at most 256 characters without control characters", f)
		}
	}
	v := k.Verify
	if !(v.Sample >= 0 && v.Sample <= 1) {
		return doc.Errorf("check.verify.sample", "must be between 0 (off) and 1 (every success)")
	}
	if v.Lifetime < 0 || v.Lifetime > MaxPhase {
		return doc.Errorf("check.verify.lifetime", "must be between 0 (not checked) and 24h")
	}
	if v.MetadataURL != "" {
		if u, err := url.Parse(v.MetadataURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return doc.Errorf("check.verify.metadata_url", "must be an http(s) URL")
		}
	}
	if c.Driver == "kube" && (k.Required != nil || k.TokenType != "" || v.Sample > 0) {
		return doc.Errorf("check", "the k6 agents check the article's response (access_token, issued_token_type); use the local driver for another check")
	}
	return nil
}

// kubeUnsupported names the first subject-shape field the k6 agents do not
// mint.
func kubeUnsupported(s Subject) string {
	switch {
	case s.Typ != "":
		return "subject.typ"
	case s.Audience != "":
		return "subject.audience"
	}
	return "subject.claims"
}

// validateSubjectShape checks the subject tokens' kid, typ, audience and
// extra claims.
func (c *Campaign) validateSubjectShape(doc *confload.Doc) error {
	s := c.Subject
	for _, f := range []struct{ field, v string }{{"subject.kid", s.Kid}, {"subject.typ", s.Typ}, {"subject.audience", s.Audience}} {
		if len(f.v) > 512 || strings.ContainsFunc(f.v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return doc.Errorf(f.field, "must be at most 512 characters without control characters")
		}
	}
	if err := s.Shape().Check(); err != nil {
		return doc.Errorf("subject.claims", "%v", err)
	}
	return nil
}

// validateEngineSampling checks target.pid (or pid_file), target.cgroup
// and target.metrics_url: each measures the whole engine, so at most one.
func (c *Campaign) validateEngineSampling(doc *confload.Doc) error {
	t := c.Target
	var set []string
	if t.PID != 0 {
		if t.PID < 0 || t.PID > 1<<22 {
			return doc.Errorf("target.pid", "%d is not a process id", t.PID)
		}
		set = append(set, "target.pid")
	}
	if t.PIDFile != "" {
		if strings.ContainsAny(t.PIDFile, "\x00\n") {
			return doc.Errorf("target.pid_file", "must be the path of the file the server writes its PID to")
		}
		set = append(set, "target.pid_file")
	}
	if t.Cgroup != "" {
		if !filepath.IsAbs(t.Cgroup) || strings.ContainsAny(t.Cgroup, "\x00\n") {
			return doc.Errorf("target.cgroup", "must be the absolute path of a cgroup v2 directory (like /sys/fs/cgroup/system.slice/as.service)")
		}
		set = append(set, "target.cgroup")
	}
	if t.MetricsURL != "" {
		u, err := url.Parse(t.MetricsURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return doc.Errorf("target.metrics_url", "must be an http(s) URL of a Prometheus endpoint (like http://as.internal:9090/metrics)")
		}
		set = append(set, "target.metrics_url")
	}
	if len(set) == 0 {
		return nil
	}
	if c.Embedded() {
		return doc.Errorf(set[0], "applies to a target.url only: tokex measures its embedded server itself")
	}
	if c.Driver == "kube" {
		return doc.Errorf(set[0], "the kube driver measures the engine Pods (kube.engines); leave it unset")
	}
	if len(set) > 1 {
		return doc.Errorf(set[1], "give only one of %s: each measures the whole engine, together they would count it twice", strings.Join(set, ", "))
	}
	return nil
}

// ClientID of agent i.
func (c *Campaign) ClientID(i int) string { return fmt.Sprintf("%s%d", c.Agents.ClientIDPrefix, i) }

// Embedded reports whether tokex runs its own reference server.
func (c *Campaign) Embedded() bool { return c.Target.URL == "" }

// Redacted renders the resolved configuration with every secret replaced.
func (c Campaign) Redacted() ([]byte, error) {
	if c.Agents.ClientSecret != "" {
		c.Agents.ClientSecret = "[redacted]"
	}
	c.Target.MetricsURL = redactURL(c.Target.MetricsURL)
	c.Target.Prometheus = redactURL(c.Target.Prometheus)
	c.Kube.Engines.Prometheus = redactURL(c.Kube.Engines.Prometheus)
	if len(c.Request.Extra) > 0 {
		extra := map[string]string{}
		for k, v := range c.Request.Extra {
			if strings.Contains(strings.ToLower(k), "secret") || strings.Contains(strings.ToLower(k), "password") {
				v = "[redacted]"
			}
			extra[k] = v
		}
		c.Request.Extra = extra
	}
	return yaml.Marshal(c)
}

// redactURL hides a password and query values (tokens) of a URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || s == "" {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "redacted")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"redacted"}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// validatePhases bounds the runs' phases, the engine at rest and the
// capacity search.
func (c *Campaign) validatePhases(doc *confload.Doc) error {
	if c.Duration < time.Second || c.Duration > MaxPhase {
		return doc.Errorf("duration", "must be between 1s and 24h")
	}
	if c.Warmup < 0 || c.Warmup > MaxPhase {
		return doc.Errorf("warmup", "must be between 0 and 24h")
	}
	if c.Pause < 0 || c.Pause > MaxPhase {
		return doc.Errorf("pause", "must be between 0 and 24h")
	}
	return c.validateCapacity(doc)
}

// validateCapacity bounds the capacity search like the stages it replaces.
func (c *Campaign) validateCapacity(doc *confload.Doc) error {
	if c.Idle < 0 || c.Idle > time.Hour {
		return doc.Errorf("idle", "must be between 0 and 1h")
	}
	k := c.Capacity
	for _, f := range []struct {
		name string
		v    float64
	}{{"start", k.Start}, {"min", k.Min}, {"max", k.Max}, {"project", k.Project}} {
		if f.v != 0 && !inRange(f.v, MinRate, MaxRate) {
			return doc.Errorf("capacity."+f.name, "rate %g must be 0 or between %g and %d exchanges/s", f.v, MinRate, MaxRate)
		}
	}
	switch {
	case k.Min > 0 && k.Max > 0 && k.Min > k.Max:
		return doc.Errorf("capacity.min", "%g is above capacity.max %g", k.Min, k.Max)
	case k.Factor != 0 && !inRange(k.Factor, 1.1, 10):
		return doc.Errorf("capacity.factor", "%g must be 0 or between 1.1 and 10", k.Factor)
	case k.Resolution != 0 && !inRange(k.Resolution, 0.005, 0.5):
		return doc.Errorf("capacity.resolution", "%g must be 0 or between 0.005 and 0.5", k.Resolution)
	case k.Rounds < 0 || k.Rounds > 10:
		return doc.Errorf("capacity.rounds", "must be between 0 and 10")
	case k.MaxProbes < 0 || k.MaxProbes > 50:
		return doc.Errorf("capacity.max_probes", "must be between 0 and 50")
	case k.CoolDown < 0 || k.CoolDown > time.Hour:
		return doc.Errorf("capacity.cool_down", "must be between 0 and 1h")
	case k.P99Ms != 0 && !inRange(k.P99Ms, 0.001, 3600000):
		return doc.Errorf("capacity.p99_ms", "must be 0 or between 0.001 and 3,600,000")
	}
	return nil
}

// EstimatedDuration is the campaign's planned wall time.
func (c *Campaign) EstimatedDuration() time.Duration {
	runs := c.Idle + time.Duration(len(c.Stages)*c.Rounds*c.Workload.Variants())*(c.Warmup+c.Duration+c.Pause)
	if c.Sanity.Enabled {
		runs += c.Sanity.Duration + c.Pause
	}
	if n := len(c.ReplicaCounts()); n > 1 {
		runs = time.Duration(n) * (runs + c.Settle())
	}
	return runs
}
