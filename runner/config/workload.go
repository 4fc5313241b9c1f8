package config

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/confload"
	"github.com/tokex-dev/tokex/internal/jose"
)

// Workload is what each arrival does: one token exchange (the article's),
// a delegation chain of exchanges, or a grant drawn from a mix; and the
// plain grant the exchange is compared with (docs/agentic.md).
type Workload struct {
	// Chain is the delegation chain's length, 1 to 5: hop 1 exchanges the
	// user's subject token for a token to service 1, hop k the token hop
	// k−1 was issued for a token to service k, each hop as its own
	// clients. The stages' rates count chains.
	Chain int `yaml:"chain"`
	// Hops are hops 2…chain: their clients and audience (default: clients
	// <agents.client_id_prefix>h<k>-<i>, resource https://hop<k>.example.internal/mcp).
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

// Hop is one hop of a delegation chain after the first.
type Hop struct {
	// ClientIDPrefix names the hop's clients: agent i is <prefix><i>.
	ClientIDPrefix string `yaml:"client_id_prefix,omitempty"`
	// Resource is the audience the hop's token is for.
	Resource string `yaml:"resource,omitempty"`
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
	// https://tokex-actor, ES256, tokex's stored actor key, 5m).
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
	DefaultActorIssuer   = "https://tokex-actor"
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

// IssuerOr, AlgOr, LifetimeOr and RefreshOr are the minted token's settings with defaults.
func (a Actor) IssuerOr() string { return cmpOr(a.Issuer, DefaultActorIssuer) }
func (a Actor) AlgOr() string    { return cmpOr(a.Alg, jose.ES256) }
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

// HopClientPrefix is the client id prefix of hop k (1: agents').
func (c *Campaign) HopClientPrefix(k int) string {
	if k <= 1 {
		return c.Agents.ClientIDPrefix
	}
	if i := k - 2; i < len(c.Workload.Hops) && c.Workload.Hops[i].ClientIDPrefix != "" {
		return c.Workload.Hops[i].ClientIDPrefix
	}
	return fmt.Sprintf("%sh%d-", c.Agents.ClientIDPrefix, k)
}

// HopClientID is agent i's client at hop k.
func (c *Campaign) HopClientID(k, i int) string { return fmt.Sprintf("%s%d", c.HopClientPrefix(k), i) }

// HopResource is the audience of hop k (1: the request's).
func (c *Campaign) HopResource(k int) string {
	if i := k - 2; i >= 0 && i < len(c.Workload.Hops) && c.Workload.Hops[i].Resource != "" {
		return c.Workload.Hops[i].Resource
	}
	return fmt.Sprintf("https://hop%d.example.internal/mcp", k)
}

// HopTemplate is the request of hop k of a chain (1: the request itself):
// hop k's subject token is the token hop k−1 was issued, of the type it
// asked for, for hop k's resource.
func (c *Campaign) HopTemplate(k int) exchange.Template {
	t := c.Request.Template()
	if c.Subject.Actor.On() {
		t.ActorTokenType = c.Subject.Actor.Type()
	}
	if k <= 1 {
		return t
	}
	t.SubjectTokenType = exchange.TokenTypeURI(c.Request.RequestedTokenType)
	if t.SubjectTokenType == "" {
		t.SubjectTokenType = exchange.TokenTypeAccessToken
	}
	t.Resources, t.Audiences = []string{c.HopResource(k)}, nil
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
		if h.Resource != "" {
			if u, err := url.Parse(h.Resource); err != nil || !u.IsAbs() || u.Fragment != "" || len(h.Resource) > 512 {
				return doc.Errorf(f+".resource", "must be an absolute URI without fragment, at most 512 characters")
			}
		}
		if len(h.ClientIDPrefix) > 128 || strings.ContainsFunc(h.ClientIDPrefix, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
			return doc.Errorf(f+".client_id_prefix", "at most 128 characters, no spaces or control characters")
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
