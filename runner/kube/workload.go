package kube

import (
	"encoding/json"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/runner/config"
)

// scriptWork is the agent script's WORKLOAD: what a run's arrivals do
// beyond the article's single exchange, as the local driver sends it.
type scriptWork struct {
	Grant     exchange.Grant    `json:"grant,omitempty"` // a baseline run's
	Chain     int               `json:"chain"`
	Hops      []string          `json:"hops"`               // each hop's fixed form
	Services  []string          `json:"services,omitempty"` // the clients of hops 2…
	Plain     map[string]string `json:"plain,omitempty"`    // the plain grants' fixed forms
	Mix       *scriptMix        `json:"mix,omitempty"`
	Actor     *scriptActor      `json:"actor,omitempty"`
	Assertion *scriptAssertion  `json:"assertion,omitempty"`
}

type scriptMix struct {
	Seed       uint32  `json:"seed"`
	Thresholds [][]any `json:"thresholds"` // [grant, threshold] pairs (exchange.Mix.Thresholds)
}

type scriptActor struct {
	Alg      string `json:"alg"`
	Issuer   string `json:"issuer"`
	Lifetime int64  `json:"lifetime_s"`
	Refresh  int64  `json:"refresh_s"`
}

type scriptAssertion struct {
	Aud      string `json:"aud"`
	Lifetime int64  `json:"lifetime_s"`
}

// actorMinted reports agents that send minted actor tokens.
func (o *Objects) actorMinted() bool {
	return o.Cfg.Subject.Actor.Source == config.ActorMinted && o.ActorKey != nil
}

// workload is run p's WORKLOAD, "" for single exchanges without actor tokens.
func (o *Objects) workload(p event.PlannedRun) string {
	c := o.Cfg
	mix := c.Workload.MixSpec()
	if p.Grant == "" && p.Chain <= 1 && mix == nil && !c.Subject.Actor.On() {
		return ""
	}
	n := max(p.Chain, 1)
	w := scriptWork{Grant: p.Grant, Chain: n, Services: c.HopClients()[:n-1], Plain: map[string]string{}}
	for k := 1; k <= n; k++ {
		w.Hops = append(w.Hops, c.HopTemplate(k, n).Compile().Fixed())
	}
	for _, g := range exchange.Baselines {
		if c.Workload.Uses(g) {
			w.Plain[string(g)] = c.GrantTemplate(g).Compile().Fixed()
		}
	}
	if mix != nil && p.Grant == "" {
		w.Mix = &scriptMix{Seed: mix.Seed}
		for i, t := range mix.Thresholds() {
			w.Mix.Thresholds = append(w.Mix.Thresholds, []any{mix.Weights[i].Grant, t})
		}
	}
	if a := c.Subject.Actor; o.actorMinted() {
		w.Actor = &scriptActor{Alg: o.ActorKey.Alg, Issuer: c.ActorIssuer(), Lifetime: int64(a.LifetimeOr() / time.Second),
			Refresh: int64(a.RefreshOr() / time.Second)}
	}
	if c.Workload.Uses(exchange.GrantJWTBearer) {
		aud := c.Request.ClientAssertion.Audience
		if aud == "" {
			aud = c.Target.URL
		}
		w.Assertion = &scriptAssertion{Aud: aud, Lifetime: int64(c.Request.ClientAssertion.Lifetime / time.Second)}
	}
	b, _ := json.Marshal(w) // strings and numbers only
	return string(b)
}
