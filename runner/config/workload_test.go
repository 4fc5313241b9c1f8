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
		{"workload:\n  chain: 2\n  hops: [{resource: a}, {resource: b}]\n", "workload.hops"},
		{"workload:\n  chain: 2\n  hops: [{resource: 'relative/path'}]\n", "workload.hops[0].resource"},
		{"workload:\n  chain: 2\n  hops: [{client_id_prefix: 'a b'}]\n", "workload.hops[0].client_id_prefix"},
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
	body := "workload:\n  chain: 3\n  hops: [{resource: 'https://a.example/api'}]\n  baseline: jwt-bearer\nsubject:\n  actor:\n    source: client_credentials\n"
	c, doc, err := Load(write(t, body), "article")
	if err == nil {
		err = c.Validate(doc)
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.HopClientID(1, 4) != "perf-agent-4" || c.HopClientID(3, 4) != "perf-agent-h3-4" || c.HopResource(2) != "https://a.example/api" ||
		c.HopResource(3) != "https://hop3.example.internal/mcp" || c.Workload.Variants() != 4 || !c.Workload.StepsOn() {
		t.Errorf("hops: %s %s %s %s %d", c.HopClientID(1, 4), c.HopClientID(3, 4), c.HopResource(2), c.HopResource(3), c.Workload.Variants())
	}
	h2 := c.HopTemplate(2)
	if h2.SubjectTokenType != exchange.TokenTypeAccessToken || h2.Resources[0] != "https://a.example/api" || h2.ActorTokenType != exchange.TokenTypeAccessToken {
		t.Errorf("hop 2 %+v", h2)
	}
	if g := c.GrantTemplate(c.Workload.BaselineGrant()); g.Grant != exchange.GrantJWTBearer {
		t.Errorf("baseline %+v", g)
	}
	c.Workload.Mix, c.Workload.Seed = map[string]float64{"client-credentials": 30, "exchange": 70}, 9
	m := c.Workload.MixSpec()
	if m.Seed != 9 || len(m.Weights) != 2 || m.Weights[0].Grant != exchange.GrantExchange || m.Weights[1].Weight != 30 {
		t.Errorf("mix %+v", m)
	}
	if a := (Actor{Source: ActorMinted}); a.Type() != exchange.TokenTypeJWT || a.IssuerOr() != DefaultActorIssuer || a.LifetimeOr() != DefaultActorLifetime {
		t.Errorf("actor %+v", a)
	}
}
