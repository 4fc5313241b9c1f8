package config

import (
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/exchange"
)

// TestWorkloadErrorsNameTheField: every workload and actor mistake names
// its line and field.
func TestWorkloadErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"workload:\n  chain: 6\n", "campaign.yaml:2: workload.chain: 6: a chain has 1 to 5 hops"},
		{"workload:\n  chain: -1\n", "workload.chain"},
		{"workload:\n  chain: 2\n  hops: [{client_id: a}, {client_id: b}]\n", "workload.hops"},
		{"workload:\n  chain: 2\n  hops: [{audience: 'a b'}]\n", "workload.hops[0].audience"},
		{"workload:\n  chain: 2\n  hops: [{client_id: 'perf-agent-3'}]\n", "hop 2's client \"perf-agent-3\" is another hop's or an agent's"},
		{"workload:\n  chain: 3\n  hops: [{client_id: x}, {client_id: x}]\n", "hop 3's client"},
		{"request:\n  auth_method: private_key_jwt\nworkload:\n  chain: 2\n", "workload.chain: the hops' services authenticate"},
		{"workload:\n  baseline: password\n", "workload.baseline"},
		{"workload:\n  baseline: exchange\n", "workload.baseline"},
		{"workload:\n  mix: {exchange: 1, refresh_token: 1}\n", "workload.mix.refresh_token"},
		{"workload:\n  mix: {exchange: 0}\n", "workload.mix: the weights must not all be 0"},
		{"workload:\n  mix: {exchange: -1, client_credentials: 2}\n", "workload.mix.exchange"},
		{"workload:\n  mix: {exchange: .nan}\n", "workload.mix.exchange"},
		{"workload:\n  mix: {exchange: 1}\n  baseline: client_credentials\n", "give a baseline or a mix"},
		{"stages: [100, 200]\nrounds: 100\nworkload:\n  chain: 5\n  baseline: jwt_bearer\n", "runs; at most 1000"},
		{"stages: [20000]\nworkload:\n  chain: 5\n", "stages[0]: rate 20000 in chains of 5"},
		{"subject:\n  actor:\n    source: spiffe\n", "subject.actor.source"},
		{"subject:\n  actor:\n    source: minted\n    alg: HS256\n", "subject.actor.alg"},
		{"subject:\n  actor:\n    source: minted\n    lifetime: 20s\n", "subject.actor.refresh_before"},
		{"subject:\n  actor:\n    source: minted\n    lifetime: 1s\n", "subject.actor.lifetime"},
		{"subject:\n  actor:\n    source: client_credentials\n    token_type: bogus\n", "subject.actor.token_type"},
	} {
		c, doc, err := Load(write(t, tc.body), "article")
		if err == nil {
			err = c.Validate(doc)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.body, err, tc.want)
		}
	}
}

// TestWorkloadDefaults: a chain's hops, their clients and requests, a
// baseline's form, the mix in grant order and the actor's defaults.
func TestWorkloadDefaults(t *testing.T) {
	body := "workload:\n  chain: 3\n  hops: [{client_id: svc-a, audience: 'https://a.example/api'}]\n  baseline: jwt-bearer\nsubject:\n  actor:\n    source: client_credentials\n"
	c, doc, err := Load(write(t, body), "article")
	if err == nil {
		err = c.Validate(doc)
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.HopClientID(1, 4) != "perf-agent-4" || c.HopClientID(2, 4) != "svc-a" || c.HopClientID(3, 4) != "perf-agent-hop3" || c.HopAudience(2) != "https://a.example/api" ||
		c.HopAudience(3) != "perf-agent-hop3" || c.Workload.Variants() != 4 || !c.Workload.StepsOn() {
		t.Errorf("hops: %s %s %s %s %d", c.HopClientID(1, 4), c.HopClientID(3, 4), c.HopAudience(2), c.HopAudience(3), c.Workload.Variants())
	}
	h1, h2, h3 := c.HopTemplate(1, 3), c.HopTemplate(2, 3), c.HopTemplate(3, 3)
	if h1.SubjectTokenType != exchange.TokenTypeAccessToken || len(h1.Resources) != 0 || h1.Audiences[0] != "https://a.example/api" ||
		h2.Audiences[0] != "perf-agent-hop3" || h2.ActorTokenType != exchange.TokenTypeAccessToken ||
		h3.Resources[0] != "https://mcp.example.internal/mcp" || len(h3.Audiences) != 0 {
		t.Errorf("hops %+v %+v %+v", h1, h2, h3)
	}
	if g := c.GrantTemplate(c.Workload.BaselineGrant()); g.Grant != exchange.GrantJWTBearer {
		t.Errorf("baseline %+v", g)
	}
	c.Workload.Mix, c.Workload.Seed = map[string]float64{"client-credentials": 30, "exchange": 70}, 9
	m := c.Workload.MixSpec()
	if m.Seed != 9 || len(m.Weights) != 2 || m.Weights[0].Grant != exchange.GrantExchange || m.Weights[1].Weight != 30 {
		t.Errorf("mix %+v", m)
	}
	c.Subject.Actor = Actor{Source: ActorMinted}
	if a := c.Subject.Actor; a.Type() != exchange.TokenTypeJWT || c.ActorIssuer() != "https://pf-perf-subject/actors" || a.LifetimeOr() != DefaultActorLifetime {
		t.Errorf("actor %+v %s", a, c.ActorIssuer())
	}
}
