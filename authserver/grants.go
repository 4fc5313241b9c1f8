package authserver

import (
	"context"
	"net/url"
	"slices"
	"time"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
)

// The grants (docs/agentic.md): token exchange (RFC 8693) issues a token
// for the subject token's sub with the act chain of the exchange;
// client_credentials (RFC 6749 §4.4) one for the client itself; jwt-bearer
// (RFC 7523 §2.1) one for the sub of an assertion of the subject issuer.
// All three authenticate the client the same ways and issue the same RFC
// 9068 access tokens, checked against the client's grants, targets and
// scopes.

// checkGrant returns the request's grant when the server knows it and the
// client may use it.
func checkGrant(gt string, cl *client) *oauthError {
	switch {
	case gt == "":
		return fail(400, exchange.ErrInvalidRequest, "grant_type is required")
	case !slices.Contains(exchange.GrantTypes, gt):
		return fail(400, exchange.ErrUnsupportedGrantType, "the grant type is not supported (token exchange, client_credentials, jwt-bearer)")
	case !cl.grants[gt]:
		return fail(400, exchange.ErrUnauthorizedClient, "the client may not use this grant type")
	}
	return nil
}

// own is the server as the issuer of its own tokens presented back to it.
func (s *Server) own() ownIssuer {
	return ownIssuer{issuer: s.cfg.Issuer, key: s.key, lifetime: s.cfg.Signing.Lifetime}
}

// validateTokens verifies the subject token and the optional actor token,
// and returns the subject with the act chain of the token to issue: the
// actor (the actor token's sub, else the client) on top of the subject
// token's chain.
func (s *Server) validateTokens(ctx context.Context, form url.Values, req *tokenRequest) (string, *jose.Actor, *oauthError) {
	cl := req.client
	sub, oe := s.subjectToken(ctx, req.subjectToken, cl.id)
	if oe != nil {
		return "", nil, oe
	}
	actor, actorIssuer := cl.id, s.cfg.Issuer
	at, att := form.Get("actor_token"), form.Get("actor_token_type")
	switch {
	case at == "" && att != "":
		return "", nil, fail(400, exchange.ErrInvalidRequest, "actor_token_type without actor_token")
	case at != "" && att != exchange.TokenTypeAccessToken && att != exchange.TokenTypeJWT:
		return "", nil, fail(400, exchange.ErrInvalidRequest, "actor_token_type is missing or unsupported")
	case at != "":
		if actor, actorIssuer, oe = s.actorToken(ctx, at, cl.id); oe != nil {
			return "", nil, oe
		}
	}
	// RFC 8693 §4.4: a subject token's may_act names who may act for
	// its subject; any other actor is refused.
	if m := sub.MayAct; m != nil && (m.Sub != actor || (m.Iss != "" && m.Iss != actorIssuer)) {
		return "", nil, fail(400, exchange.ErrInvalidGrant, "the actor is not the party the subject token's may_act names")
	}
	act, desc := s.cfg.Delegation.chain(actor, sub.Act)
	if desc != "" {
		return "", nil, fail(400, exchange.ErrInvalidGrant, desc)
	}
	return sub.Subject, act, nil
}

// subjectToken verifies a subject token: one of the subject issuer (its
// keys, subject.audience), or one this server issued (its key), whose
// audience must then hold the client: the agent it was issued for
// exchanges it, the next hop of a chain.
func (s *Server) subjectToken(ctx context.Context, raw, clientID string) (*jose.Claims, *oauthError) {
	const what = "subject token"
	if len(raw) > s.cfg.Subject.MaxTokenBytes {
		return nil, fail(400, exchange.ErrInvalidGrant, what+" is longer than subject.max_token_bytes")
	}
	c, own, err := s.verify.read(ctx, raw, s.own())
	if err != nil {
		return nil, fail(400, exchange.ErrInvalidGrant, what+" "+err.Error())
	}
	var desc string
	switch {
	case !own:
		desc = s.verify.policy(c, clientID)
	case c.Subject == "":
		desc = "has no sub"
	case !slices.Contains(c.Audience, clientID):
		desc = "audience does not match the client"
	default:
		desc = lifetime(c, s.cfg.Signing.Lifetime, s.verify.leeway)
	}
	if desc != "" {
		return nil, fail(400, exchange.ErrInvalidGrant, what+" "+desc)
	}
	return c, nil
}

// actorToken verifies an actor token and returns its sub (the actor) and
// its iss: a token of the actor issuer (subject.actor; without one, of the
// subject issuer), or the client's own client_credentials token from this
// server.
// An actor token is an identity, never a delegated token: one with act is
// refused.
func (s *Server) actorToken(ctx context.Context, raw, clientID string) (sub, iss string, oe *oauthError) {
	const what = "actor token"
	if len(raw) > s.cfg.Subject.MaxTokenBytes {
		return "", "", fail(400, exchange.ErrInvalidGrant, what+" is longer than subject.max_token_bytes")
	}
	c, own, err := s.actors.read(ctx, raw, s.own())
	if err != nil {
		return "", "", fail(400, exchange.ErrInvalidGrant, what+" "+err.Error())
	}
	var desc string
	switch {
	case c.Act != nil:
		desc = "carries act: an actor token is the actor's own identity, not a delegated token"
	case own && (c.Subject != clientID || c.ClientID != clientID):
		desc = "of this server must be the client's own client_credentials token"
	case own:
		desc = lifetime(c, s.cfg.Signing.Lifetime, s.actors.leeway)
	default:
		desc = s.actors.policy(c, clientID)
	}
	if desc != "" {
		return "", "", fail(400, exchange.ErrInvalidGrant, what+" "+desc)
	}
	return c.Subject, c.Issuer, nil
}

// chain is the act of a token issued to actor after the prior chain
// (RFC 8693 §4.1): actor on top, prior nested below; an actor that is
// already prior's current actor is not nested again (an agent exchanging
// its own token once more is no new hop). It refuses a chain deeper than
// max_depth, whose subs exceed max_act_bytes together, or that names an
// actor twice (a loop: A → B → A).
func (d DelegationConfig) chain(actor string, prior *jose.Actor) (*jose.Actor, string) {
	act := prior
	if prior == nil || prior.Sub != actor {
		act = &jose.Actor{Sub: actor, Act: prior}
	}
	var seen [MaxMaxActDepth]string
	n, size := 0, 0
	for a := act; a != nil; a = a.Act {
		if n == d.MaxDepth {
			return nil, "delegation chain is deeper than delegation.max_depth"
		}
		if size += len(a.Sub); size > d.MaxActBytes {
			return nil, "delegation chain's actors are longer than delegation.max_act_bytes"
		}
		if slices.Contains(seen[:n], a.Sub) {
			return nil, "delegation chain names an actor twice (a loop)"
		}
		seen[n] = a.Sub
		n++
	}
	return act, ""
}

// bearerAssertion verifies the assertion of a jwt-bearer grant (RFC 7523
// §3) and returns its sub: signed by the subject issuer (its keys,
// algorithms and leeway), for this server (aud its token endpoint, issuer
// or a client_auth.audiences value), living at most client_auth.max_lifetime,
// issued after the server started, and with a jti never accepted before
// from anyone while it lives.
func (s *Server) bearerAssertion(ctx context.Context, raw string, cl *client) (string, *oauthError) {
	const what = "assertion"
	bad := func(desc string) (string, *oauthError) { return "", fail(400, exchange.ErrInvalidGrant, desc) }
	if len(raw) > s.cfg.Subject.MaxTokenBytes {
		return bad(what + " is longer than subject.max_token_bytes")
	}
	c, _, err := s.verify.read(ctx, raw, ownIssuer{})
	if err != nil {
		return bad(what + " " + err.Error())
	}
	v := s.assert
	switch {
	case c.Subject == "":
		return bad(what + " has no sub")
	case !slices.ContainsFunc(c.Audience, func(a string) bool { return slices.Contains(v.audiences, a) }):
		return bad(what + " audience is not this server's token endpoint or issuer")
	}
	if desc := v.checkJTIAndLifetime(c, what); desc != "" {
		return bad(desc)
	}
	if desc := v.freshSince(c, what); desc != "" {
		return bad(desc)
	}
	switch v.bearer.addKey(cl.id, replayKey(c.Issuer, c.ID), c.Expiry.Unix(), time.Now().Unix()) {
	case replaySeen:
		return bad(what + " was already used (its jti is replayed)")
	case replayFull:
		v.bearerFull.refused(s.log, cl.id, v.bearer)
		return "", fail(503, exchange.ErrTemporarilyUnavail, "too many jwt-bearer assertions of this client within their lifetime (client_auth.replay_cache)")
	}
	return c.Subject, nil
}
