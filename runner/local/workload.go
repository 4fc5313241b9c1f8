package local

import (
	"context"
	"net/url"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
)

// Workload is what the generator's arrivals can do beyond the article's
// single exchange (workload, subject.actor): the requests of each hop of
// a chain of every length, the plain grants', the services each hop after
// the first sends as, a mix's draw and the actor tokens.
type Workload struct {
	// Chains[n][k-1] is hop k's request in a chain of n (Chains[1][0]: the
	// single exchange, the Generator's Body when unset).
	Chains [stats.MaxChain + 1][]exchange.Body
	// Plain are the plain grants' requests.
	Plain map[exchange.Grant]exchange.Body
	// Services are the clients of hops 2…: Services[k-2] is hop k's.
	Services []string
	// Audiences[k-2] names hop k's service in hop k−1's token (for
	// verification: the audience the issued token must hold).
	Audiences []string
	// Mix draws the grant of each arrival of the campaign's own runs.
	Mix *exchange.Mix
	// Actors keeps each client's actor token; nil: none sent.
	Actors *actorCache
}

// runWork is one run's workload: every arrival's grant, or the mix's draw,
// and the length of an exchange's chain.
type runWork struct {
	grant exchange.Grant
	draw  func(agent int, seq int64) exchange.Grant
	chain int
}

// kindOf is the grant of agent's arrival seq.
func (w *runWork) kindOf(agent int, seq int64) exchange.Grant {
	if w.draw != nil {
		return w.draw(agent, seq)
	}
	return w.grant.Or()
}

// workFor is run p's workload.
func (g *Generator) workFor(p event.PlannedRun) *runWork {
	w := &runWork{grant: p.Grant.Or(), chain: min(max(p.Chain, 1), stats.MaxChain)}
	if p.Grant == "" && g.Work.Mix != nil {
		w.draw = g.Work.Mix.Drawer()
	}
	return w
}

// hopClient is a client an agent sends as: its own (hop 1, the plain
// grants), or the service of a later hop.
type hopClient struct {
	id                string
	headPre, headPost []byte // the h1 request's bytes around Content-Length's value
}

// client is agent a's client at hop k (k ≤ 1: its own).
func (a *Agent) clientAt(k int) *hopClient {
	if k <= 1 || k-1 >= len(a.hops) {
		return a.hops[0]
	}
	return a.hops[k-1]
}

// prepareClients builds agent a's clients and their request bytes for its
// current secret.
func (g *Generator) prepareClients(a *Agent) {
	ids := append([]string{a.ClientID}, g.Work.Services...)
	a.hops = make([]*hopClient, len(ids))
	var u *url.URL
	if a.h1 != nil {
		u, _ = url.Parse(g.URL)
	}
	for i, id := range ids {
		c := &hopClient{id: id}
		if u != nil {
			c.headPre, c.headPost = requestHead(u, g.headers(id, a.Secret))
		}
		a.hops[i] = c
	}
}

// request is one request of an arrival: which grant, at which hop of a
// chain of how many, as which client, with which tokens.
type request struct {
	grant  exchange.Grant
	hop    int // 0 outside a chain
	chain  int
	body   exchange.Body
	client *hopClient
	token  string // subject token or assertion, "" none
	cred   string // client secret or client assertion
	actor  string
}

// bodyOf is hop k's request in a chain of n.
func (g *Generator) bodyOf(n, k int) exchange.Body {
	if bs := g.Work.Chains[n]; k-1 < len(bs) && k >= 1 {
		return bs[k-1]
	}
	return g.Body
}

// serve sends one arrival: a plain grant, a single exchange, or a chain
// whose every hop is a row of its own, hop k due when hop k−1's answer
// was read and sent as hop k's client with the token hop k−1 was issued.
// A hop that fails ends the chain.
func (g *Generator) serve(ctx context.Context, a *Agent, j job, w *runWork, pipes *agentPipes, rec func(*stats.Request), buf *[]byte) {
	grant := w.kindOf(a.Index, j.seq)
	r := &stats.Request{Agent: a.Index, Seq: j.seq, Phase: j.phase, ScheduledUS: j.at.UnixMicro()}
	if grant != exchange.GrantExchange {
		r.Kind = grant
	}
	item, ok := pipes.of(grant).take(ctx)
	if !ok {
		r.Outcome, r.SendLagUS = exchange.OutcomeAborted, time.Since(j.at).Microseconds()
		if grant == exchange.GrantExchange && w.chain > 1 {
			r.Hop = 1
		}
		rec(r)
		return
	}
	tok, cred := a.splitCredential(item)
	if grant != exchange.GrantExchange {
		g.sendOne(ctx, a, j.at, r, request{grant: grant, body: g.Work.Plain[grant], client: a.clientAt(1), token: tok, cred: cred}, buf)
		rec(r)
		return
	}
	due := j.at
	for k := 1; k <= w.chain; k++ {
		req := request{grant: grant, chain: w.chain, body: g.bodyOf(w.chain, k), client: a.clientAt(k), token: tok, cred: cred}
		if w.chain > 1 {
			req.hop, r.Hop = k, k
		}
		if g.Work.Actors != nil {
			req.actor = g.Work.Actors.token(ctx, req.client.id)
		}
		issued, done := g.sendOne(ctx, a, due, r, req, buf)
		rec(r)
		if !r.OK() || k == w.chain {
			return
		}
		due, tok = done, issued
		r = &stats.Request{Agent: a.Index, Seq: j.seq, Phase: j.phase, ScheduledUS: due.UnixMicro()}
	}
}

// hopAudience is the audience hop k's token must hold in a chain of n (""
// when it is the campaign's expected one).
func (g *Generator) hopAudience(n, k int) string {
	if k < 1 || k >= n || k-1 >= len(g.Work.Audiences) {
		return ""
	}
	return g.Work.Audiences[k-1]
}

// verify checks a sampled success's issued token: its signature, audience
// and lifetime, and in a chain or with actor tokens its act, every actor
// of the chain so far, the current first (each hop's client: an actor
// token is its client's identity).
func (g *Generator) verify(a *Agent, req request, b []byte) error {
	v := *g.Verifier
	if aud := g.hopAudience(req.chain, req.hop); aud != "" {
		v.Expect.Audience = aud
	}
	switch {
	case req.grant != exchange.GrantExchange:
		return v.VerifyActors(b, req.client.id, nil)
	case req.hop == 0 && g.Work.Actors == nil:
		return v.Verify(b, req.client.id)
	}
	actors := make([]string, 0, max(req.hop, 1))
	for k := max(req.hop, 1); k >= 1; k-- {
		actors = append(actors, a.clientAt(k).id)
	}
	return v.VerifyActors(b, req.client.id, actors)
}
