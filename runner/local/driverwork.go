package local

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/subject"
)

// workload compiles what the campaign's arrivals send beyond a single
// exchange: every hop of a chain of each length its plan runs, the plain
// grants, the services' clients, the mix and the actor tokens.
func (d *Driver) workload(tlsCfg *tls.Config) Workload {
	c := d.Cfg
	w := Workload{Services: c.HopClients(), Mix: c.Workload.MixSpec(), Plain: map[exchange.Grant]exchange.Body{}}
	for k := 2; k <= c.Workload.ChainLen(); k++ {
		w.Audiences = append(w.Audiences, c.HopAudience(k))
	}
	for n := 1; n <= c.Workload.ChainLen(); n++ {
		for k := 1; k <= n; k++ {
			w.Chains[n] = append(w.Chains[n], c.HopTemplate(k, n).Compile())
		}
	}
	for _, g := range exchange.Baselines {
		w.Plain[g] = c.GrantTemplate(g).Compile()
	}
	a := c.Subject.Actor
	switch a.Source {
	case config.ActorMinted:
		m := &subject.ActorMinter{Key: d.ActorKey, Issuer: c.ActorIssuer(), Lifetime: a.LifetimeOr(), Prefix: d.CampaignID + "-actor-"}
		w.Actors = newActorCache(mintedActors(m, a.LifetimeOr()), a.RefreshOr())
	case config.ActorClientCredentials:
		hc := &http.Client{Timeout: c.Request.Timeout, CheckRedirect: exchange.NoRedirect,
			Transport: &http.Transport{TLSClientConfig: tlsCfg.Clone(), MaxIdleConnsPerHost: 4}}
		w.Actors = newActorCache(credentialsActors(hc, d.target, w.Plain[exchange.GrantClientCredentials], func() string { return d.Secret }), a.RefreshOr())
	}
	return w
}

// actorKey is the key the embedded server trusts actor tokens of; nil
// without minted ones.
func (d *Driver) actorKey() *jose.Key {
	if d.Cfg.Subject.Actor.Source != config.ActorMinted {
		return nil
	}
	return d.ActorKey
}

// bearer mints agent i's jwt_bearer assertions: the user's token for the
// token endpoint (request.client_assertion.audience), short-lived as a
// client assertion; nil when no arrival makes one.
func (d *Driver) bearer(i int, users []string) TokenSource {
	c := d.Cfg
	if !usesGrant(c, exchange.GrantJWTBearer) {
		return nil
	}
	aud := c.Request.ClientAssertion.Audience
	if aud == "" {
		aud = d.target
	}
	shape := c.Subject.Shape()
	shape.Audience = aud
	return &subject.Minter{Key: d.SubjectKey, Issuer: c.Subject.Issuer, Lifetime: c.Request.ClientAssertion.Lifetime,
		Users: users, Shape: shape, Prefix: fmt.Sprintf("%s-b%d-", d.CampaignID, i)}
}

// usesGrant reports a campaign some of whose arrivals make grant g.
func usesGrant(c config.Campaign, g exchange.Grant) bool { return c.Workload.Uses(g) }

// grantTypes are the grants the embedded server's clients may use.
func grantTypes(c config.Campaign) []string {
	gts := []string{exchange.GrantTypeTokenExchange}
	if usesGrant(c, exchange.GrantClientCredentials) || c.Subject.Actor.Source == config.ActorClientCredentials {
		gts = append(gts, exchange.GrantTypeClientCredentials)
	}
	if usesGrant(c, exchange.GrantJWTBearer) {
		gts = append(gts, exchange.GrantTypeJWTBearer)
	}
	return gts
}

// prepareRun signs run p's tokens ahead (subject.premint) and gets its
// actor tokens before it starts.
func (d *Driver) prepareRun(ctx context.Context, p event.PlannedRun) error {
	if err := d.premint(ctx, p); err != nil {
		return err
	}
	return d.actorsBefore(ctx, p)
}

// actorsBefore gets the actor token of every client run p sends as before
// it starts, so that no measured request waits for one.
func (d *Driver) actorsBefore(ctx context.Context, p event.PlannedRun) error {
	ac := d.gen.Work.Actors
	if ac == nil || p.Grant != "" {
		return nil
	}
	var ids []string
	for _, a := range d.gen.Agents {
		ids = append(ids, a.ClientID)
	}
	ids = append(ids, d.gen.Work.Services[:max(p.Chain, 1)-1]...)
	if err := ac.warm(ctx, ids); err != nil {
		return fmt.Errorf("%w (subject.actor)", err)
	}
	return nil
}

// actorsAfter says how many actor tokens the run got, and any failure.
func (d *Driver) actorsAfter(p event.PlannedRun, out runner.Output) {
	ac := d.gen.Work.Actors
	if ac == nil {
		return
	}
	ac.wait()
	got, failed := ac.fetches.Swap(0), ac.failures.Swap(0)
	if got == 0 && failed == 0 {
		return
	}
	msg, level := fmt.Sprintf("run %s: %d actor token(s) got (%s)", p.ID, got, d.Cfg.Subject.Actor.Source), "info"
	if failed > 0 {
		msg, level = msg+fmt.Sprintf(", %d failed: %s", failed, *ac.lastErr.Load()), "warn"
	}
	out.Emit(event.Log{At: time.Now(), Source: "tokex", Level: level, Message: msg})
}
