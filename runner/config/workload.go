package config

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/confload"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/subject"
)

// Workload is what each arrival does: one token exchange (the article's),
// a delegation chain of exchanges, or a grant drawn from a mix; and the
// plain grant the exchange is compared with (docs/agentic.md).
type Workload struct {
	// Chain is the delegation chain's length, 1 to 5: hop 1 (the agent)
	// exchanges the user's subject token for a token to service 2, hop k
	// (service k) the token hop k−1 was issued for a token to service
	// k+1, and the last hop for a token to the request's resources. The
	// stages' rates count chains.
	Chain int `yaml:"chain"`
	// Hops are the services of hops 2…chain: their client and the audience
	// the hop before asks for to reach them (default: client
	// <agents.client_id_prefix>hop<k>, the audience its client id).
	Hops []Hop `yaml:"hops,omitempty"`
	// Steps also runs chains of every length 1…chain−1 at each stage and
	// round, interleaved, so that each hop's CPU is the difference of two
	// measured runs (default: on when chain > 1; off: no CPU per hop).
	Steps *bool `yaml:"steps,omitempty"`
	// Baseline also runs this plain grant at each stage and round,
	// interleaved with the exchange, as the same clients against the same
	// server: client_credentials or jwt_bearer (RFC 7523 §2.1, the user's
	// subject token as the assertion).
	Baseline string `yaml:"baseline,omitempty"`
	// Mix draws each arrival's grant from these weights (exchange,
	// client_credentials, jwt_bearer): one arrival stream, seeded.
	Mix map[string]float64 `yaml:"mix,omitempty"`
	// Seed makes the mix's draws reproducible; 0: one is drawn when the
	// campaign starts and written to its config.yaml.
	Seed uint32 `yaml:"seed,omitempty"`
}

// Hop is the service of one hop of a delegation chain after the first:
// one client every agent's chain goes through, with the agents' secret.
type Hop struct {
	ClientID string `yaml:"client_id,omitempty"`
	// Audience names the service in the token the hop before asks for
	// (the audience parameter); default its client id.
	Audience string `yaml:"audience,omitempty"`
}

// Actor is the agent's own identity, sent as actor_token with every
// exchange (RFC 8693 §2.1): the issued token's act names it.
type Actor struct {
	// Source: "" (no actor token), minted (a JWT tokex signs with the
	// actor key, the agent's workload identity) or client_credentials (a
	// token the agent's client gets from the target itself, refreshed
	// before it expires).
	Source string `yaml:"source,omitempty"`
	// Issuer, Alg, KeyFile and Lifetime shape the minted tokens (default
	// <subject.issuer>/actors, ES256, a fresh key for the embedded server,
	// else tokex's stored actor key; 5m).
	Issuer   string        `yaml:"issuer,omitempty"`
	Alg      string        `yaml:"alg,omitempty"`
	KeyFile  string        `yaml:"key_file,omitempty"`
	Lifetime time.Duration `yaml:"lifetime,omitempty"`
	// TokenType is the actor_token_type: jwt (minted) or access_token
	// (client_credentials) by default.
	TokenType string `yaml:"token_type,omitempty"`
	// RefreshBefore replaces a kept token this long before it expires (30s).
	RefreshBefore time.Duration `yaml:"refresh_before,omitempty"`
}

// Actor sources.
const (
	ActorMinted            = "minted"
	ActorClientCredentials = "client_credentials"
)

// Defaults of subject.actor.
const (
	DefaultActorLifetime = 5 * time.Minute
	DefaultActorRefresh  = 30 * time.Second
)

// On reports an actor token with every exchange.
func (a Actor) On() bool { return a.Source != "" }

// Type is the actor_token_type URI.
func (a Actor) Type() string {
	switch {
	case a.TokenType != "":
		return exchange.TokenTypeURI(a.TokenType)
	case a.Source == ActorClientCredentials:
		return exchange.TokenTypeAccessToken
	}
	return exchange.TokenTypeJWT
}

// ActorIssuer is the minted actor tokens' iss: subject.actor.issuer, else
// the subject issuer's /actors (what tokex jwks --serve publishes).
func (c *Campaign) ActorIssuer() string {
	return cmpOr(c.Subject.Actor.Issuer, subject.ActorIssuer(c.Subject.Issuer))
}

// ActorKey is the key actor tokens are minted with: subject.actor.key_file;
// for a server tokex starts itself, a fresh key; else tokex's stored actor
// key of the algorithm.
func (c *Campaign) ActorKey() (*jose.Key, error) {
	a := c.Subject.Actor
	var k *jose.Key
	var err error
	switch {
	case a.KeyFile != "":
		k, err = subject.LoadPEM(a.KeyFile)
	case c.LocalEmbedded():
		k, err = jose.GenerateKey(a.AlgOr())
	default:
		k, _, err = subject.StoredActorKey(a.AlgOr())
	}
	if err != nil {
		return nil, fmt.Errorf("actor key: %w", err)
	}
	return k, nil
}

// AlgOr, LifetimeOr and RefreshOr are the minted token's settings with defaults.
func (a Actor) AlgOr() string { return cmpOr(a.Alg, jose.ES256) }
func (a Actor) LifetimeOr() time.Duration {
	if a.Lifetime > 0 {
		return a.Lifetime
	}
	return DefaultActorLifetime
}
func (a Actor) RefreshOr() time.Duration {
	if a.RefreshBefore > 0 {
		return a.RefreshBefore
	}
	return DefaultActorRefresh
}

func cmpOr(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// DrawSeed draws the mix's seed when none was given, for a new campaign:
// its config.yaml then records the seed its arrivals were drawn with.
func (w *Workload) DrawSeed() {
	for len(w.Mix) > 0 && w.Seed == 0 {
		w.Seed = rand.Uint32()
	}
}

// ChainLen is the chain's length, 1 without a chain.
func (w Workload) ChainLen() int { return max(w.Chain, 1) }

// StepsOn reports runs of the shorter chains (workload.steps).
func (w Workload) StepsOn() bool {
	return w.ChainLen() > 1 && (w.Steps == nil || *w.Steps)
}

// Variants is how many runs each stage has per round: the campaign's own
// workload, the chain's shorter lengths (steps) and the baseline.
func (w Workload) Variants() int {
	n := 1
	if w.StepsOn() {
		n += w.ChainLen() - 1
	}
	if w.Baseline != "" {
		n++
	}
	return n
}

// Uses reports a workload some of whose arrivals make grant g (the
// baseline's, or one the mix draws).
func (w Workload) Uses(g exchange.Grant) bool {
	if w.BaselineGrant() == g {
		return true
	}
	if m := w.MixSpec(); m != nil {
		return slices.ContainsFunc(m.Weights, func(x exchange.Weight) bool { return x.Grant == g })
	}
	return g == exchange.GrantExchange
}

// BaselineGrant is workload.baseline as a grant ("" none).
func (w Workload) BaselineGrant() exchange.Grant {
	g, _ := exchange.ParseGrant(w.Baseline)
	return g
}

// MixSpec is the mix with its seed, its weights in exchange.Grants order;
// nil without a mix.
func (w Workload) MixSpec() *exchange.Mix {
	if len(w.Mix) == 0 {
		return nil
	}
	m := &exchange.Mix{Seed: w.Seed}
	for _, g := range exchange.Grants {
		for k, v := range w.Mix {
			if p, _ := exchange.ParseGrant(k); p == g && v > 0 {
				m.Weights = append(m.Weights, exchange.Weight{Grant: g, Weight: v})
			}
		}
	}
	return m
}

// HopClientID is agent i's client at hop k: its own at hop 1, the hop's
// service's after.
func (c *Campaign) HopClientID(k, i int) string {
	if k <= 1 {
		return c.ClientID(i)
	}
	if j := k - 2; j < len(c.Workload.Hops) && c.Workload.Hops[j].ClientID != "" {
		return c.Workload.Hops[j].ClientID
	}
	return fmt.Sprintf("%shop%d", c.Agents.ClientIDPrefix, k)
}

// HopClients are the services' clients, hops 2…chain.
func (c *Campaign) HopClients() []string {
	var out []string
	for k := 2; k <= c.Workload.ChainLen(); k++ {
		out = append(out, c.HopClientID(k, 0))
	}
	return out
}

// HopAudience names hop k's service (k ≥ 2) in the token hop k−1 asks for.
func (c *Campaign) HopAudience(k int) string {
	if j := k - 2; j >= 0 && j < len(c.Workload.Hops) && c.Workload.Hops[j].Audience != "" {
		return c.Workload.Hops[j].Audience
	}
	return c.HopClientID(k, 0)
}

// HopTemplate is the request of hop k of a chain of n (1: the request
// itself, for n = 1): hop k's subject token is the one hop k−1 was issued
// (hop 1: the user's), of the type it asked for; it asks for a token to
// the next hop's service, the last hop for the request's resources.
func (c *Campaign) HopTemplate(k, n int) exchange.Template {
	t := c.Request.Template()
	if c.Subject.Actor.On() {
		t.ActorTokenType = c.Subject.Actor.Type()
	}
	if k > 1 {
		t.SubjectTokenType = exchange.TokenTypeURI(c.Request.RequestedTokenType)
		if t.SubjectTokenType == "" {
			t.SubjectTokenType = exchange.TokenTypeAccessToken
		}
	}
	if k < n {
		t.Resources, t.Audiences = nil, []string{c.HopAudience(k + 1)}
	}
	return t
}

// GrantTemplate is the request of a plain grant, as the same clients ask
// for the same resources and scope.
func (c *Campaign) GrantTemplate(g exchange.Grant) exchange.Template {
	t := c.Request.Template()
	t.Grant = g
	return t
}

// validateWorkload checks workload and subject.actor.
func (c *Campaign) validateWorkload(doc *confload.Doc) error {
	w := c.Workload
	if w.Chain < 0 || w.Chain > stats.MaxChain {
		return doc.Errorf("workload.chain", "%d: a chain has 1 to %d hops", w.Chain, stats.MaxChain)
	}
	if len(w.Hops) > w.ChainLen()-1 {
		return doc.Errorf("workload.hops", "%d hops configured for a chain of %d (hops 2…%d)", len(w.Hops), w.ChainLen(), w.ChainLen())
	}
	for i, h := range w.Hops {
		f := fmt.Sprintf("workload.hops[%d]", i)
		for _, v := range []struct{ field, v string }{{".client_id", h.ClientID}, {".audience", h.Audience}} {
			if len(v.v) > 256 || strings.ContainsFunc(v.v, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
				return doc.Errorf(f+v.field, "at most 256 characters, no spaces or control characters")
			}
		}
	}
	if w.ChainLen() > 1 {
		if m := exchange.AuthMethod(c.Request.AuthMethod); m != exchange.AuthBasic && m != exchange.AuthPost {
			return doc.Errorf("workload.chain", "the hops' services authenticate with the agents' secret: use client_secret_basic or client_secret_post with a chain")
		}
		seen := map[string]bool{}
		for k := 2; k <= w.ChainLen(); k++ {
			if id := c.HopClientID(k, 0); seen[id] || strings.HasPrefix(id, c.Agents.ClientIDPrefix) && isDigits(id[len(c.Agents.ClientIDPrefix):]) {
				return doc.Errorf("workload.hops", "hop %d's client %q is another hop's or an agent's: each hop is a client of its own", k, id)
			} else {
				seen[id] = true
			}
		}
	}
	if w.Baseline != "" {
		g, err := exchange.ParseGrant(w.Baseline)
		if err != nil || g == exchange.GrantExchange {
			return doc.Errorf("workload.baseline", "%q: client_credentials or jwt_bearer", w.Baseline)
		}
	}
	if err := c.validateMix(doc); err != nil {
		return err
	}
	if err := c.validateWorkloadSize(doc); err != nil {
		return err
	}
	if c.Subject.Premint && w.Uses(exchange.GrantJWTBearer) {
		return doc.Errorf("subject.premint", "jwt_bearer assertions are short-lived (request.client_assertion.lifetime) and signed as the run goes; pre-minted ones would outlive what servers accept")
	}
	return c.validateActor(doc)
}

// validateWorkloadSize keeps the runs of every variant within what the
// evidence readers accept: a chain's every hop is a row.
func (c *Campaign) validateWorkloadSize(doc *confload.Doc) error {
	w := c.Workload
	if n := len(c.Stages) * c.Rounds * w.Variants(); n+1 > MaxRuns {
		return doc.Errorf("workload", "%d stages × %d rounds × %d workloads (the chain's lengths, the baseline) is %d runs; at most %d with the sanity run",
			len(c.Stages), c.Rounds, w.Variants(), n, MaxRuns)
	}
	for i, s := range c.Stages {
		if n := s * float64(w.ChainLen()) * (c.Warmup + c.Duration).Seconds(); n > MaxArrivalsPerRun {
			return doc.Errorf(fmt.Sprintf("stages[%d]", i), "rate %g in chains of %d over %s is %.0f requests in one run; at most %d",
				s, w.ChainLen(), c.Warmup+c.Duration, n, MaxArrivalsPerRun)
		}
	}
	return nil
}

// validateMix checks workload.mix's weights.
func (c *Campaign) validateMix(doc *confload.Doc) error {
	w := c.Workload
	if len(w.Mix) == 0 {
		return nil
	}
	var sum float64
	names := slices.Sorted(mapKeys(w.Mix))
	for _, k := range names {
		v := w.Mix[k]
		if _, err := exchange.ParseGrant(k); err != nil {
			return doc.Errorf("workload.mix."+k, "%v", err)
		}
		if !inRange(v, 0, 1e6) {
			return doc.Errorf("workload.mix."+k, "weight %g must be between 0 and 1,000,000", v)
		}
		sum += v
	}
	if sum <= 0 || math.IsInf(sum, 0) {
		return doc.Errorf("workload.mix", "the weights must not all be 0")
	}
	if w.Baseline != "" {
		return doc.Errorf("workload.baseline", "a mix already runs its grants in one stream; give a baseline or a mix")
	}
	return nil
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// validateActor checks subject.actor.
func (c *Campaign) validateActor(doc *confload.Doc) error {
	a := c.Subject.Actor
	switch a.Source {
	case "":
		return nil
	case ActorMinted, ActorClientCredentials:
	default:
		return doc.Errorf("subject.actor.source", "unknown source %q (minted, client_credentials)", a.Source)
	}
	if a.Alg != "" && !slices.Contains(jose.Algorithms, a.Alg) {
		return doc.Errorf("subject.actor.alg", "unsupported algorithm %q (RS256, ES256, EdDSA)", a.Alg)
	}
	if a.Lifetime != 0 && (a.Lifetime < 10*time.Second || a.Lifetime > MaxPhase) {
		return doc.Errorf("subject.actor.lifetime", "must be between 10s and 24h")
	}
	if a.RefreshBefore < 0 || a.RefreshBefore > time.Hour {
		return doc.Errorf("subject.actor.refresh_before", "must be between 0 (30s) and 1h")
	}
	if m := exchange.AuthMethod(c.Request.AuthMethod); a.Source == ActorClientCredentials && m != exchange.AuthBasic && m != exchange.AuthPost {
		return doc.Errorf("subject.actor.source", "client_credentials actor tokens are got with the agents' secret: use client_secret_basic or client_secret_post")
	}
	if c.Driver == "kube" && a.Source == ActorClientCredentials {
		return doc.Errorf("subject.actor.source", "the k6 agents mint their actor tokens (source: minted): k6's VUs share no memory, and each would get its own client_credentials token beside the requests k6 counts")
	}
	if c.Driver == "kube" && a.Source == ActorMinted && a.AlgOr() != jose.RS256 && a.AlgOr() != jose.ES256 {
		return doc.Errorf("subject.actor.alg", "the k6 agents sign RS256 or ES256 actor tokens with WebCrypto, not %q", a.AlgOr())
	}
	if a.Source == ActorMinted && a.RefreshOr() >= a.LifetimeOr() {
		return doc.Errorf("subject.actor.refresh_before", "%s is not shorter than the actor token's lifetime %s", a.RefreshOr(), a.LifetimeOr())
	}
	if a.TokenType != "" && !strings.Contains(exchange.TokenTypeURI(a.TokenType), ":") {
		return doc.Errorf("subject.actor.token_type", "%q is neither %s nor a token type URI", a.TokenType, strings.Join(exchange.TokenTypeNames, ", "))
	}
	for _, f := range []struct{ field, v string }{{"subject.actor.issuer", a.Issuer}, {"subject.actor.key_file", a.KeyFile}} {
		if len(f.v) > 512 || strings.ContainsFunc(f.v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return doc.Errorf(f.field, "must be at most 512 characters without control characters")
		}
	}
	return nil
}
