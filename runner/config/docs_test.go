package config

import (
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// fences are a guide's code blocks by language.
func fences(t *testing.T, guide string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "targets", guide))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, m := range regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = append(out[m[1]], m[2])
	}
	return out
}

// guideCampaign is the guide's campaign.yaml block, loaded and validated
// as tokex run loads it.
func guideCampaign(t *testing.T, guide string) Campaign {
	t.Helper()
	for _, y := range fences(t, guide)["yaml"] {
		if !strings.HasPrefix(y, "name: ") {
			continue
		}
		c, doc, err := Load(write(t, y), "article")
		if err == nil {
			err = c.Validate(doc)
		}
		if err != nil {
			t.Fatalf("%s: campaign.yaml: %v", guide, err)
		}
		return c
	}
	t.Fatalf("%s: no campaign.yaml block", guide)
	return Campaign{}
}

// TestTargetGuidesRegisterEveryAgent (issue 23): dex.md registered 2
// clients while `tokex init` plans 10 agents, and a campaign from it
// failed at 20 %. Each guide's campaign validates, and the server it sets
// up has a client for every agent its campaign or tokex init's sends as.
func TestTargetGuidesRegisterEveryAgent(t *testing.T) {
	initAgents := Article().Agents.Count
	c := guideCampaign(t, "dex.md")
	var dex struct {
		StaticClients []struct{ ID string } `yaml:"staticClients"`
	}
	for _, y := range fences(t, "dex.md")["yaml"] {
		if strings.Contains(y, "staticClients:") {
			if err := yaml.Unmarshal([]byte(y), &dex); err != nil {
				t.Fatal(err)
			}
		}
	}
	ids := map[string]bool{}
	for _, s := range dex.StaticClients {
		ids[s.ID] = true
	}
	for i := range max(c.Agents.Count, initAgents) {
		if !ids[c.ClientID(i)] {
			t.Errorf("dex.md: a campaign sends as %s, dex.yaml has no such static client", c.ClientID(i))
		}
	}
	agentsEnv := regexp.MustCompile(`\bAGENTS=(\d+)`)
	for _, guide := range []string{"oidc-provider.md", "zitadel.md"} {
		c := guideCampaign(t, guide)
		m := agentsEnv.FindStringSubmatch(strings.Join(fences(t, guide)["sh"], "\n"))
		if m == nil {
			t.Errorf("%s: the server's start sets no AGENTS", guide)
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n < max(c.Agents.Count, initAgents) {
			t.Errorf("%s: the server registers %d clients, a campaign sends as %d", guide, n, max(c.Agents.Count, initAgents))
		}
	}
}

// TestTargetGuidesCode: the code the guides give compiles as far as this
// repository can tell: zitadel.md's wrapper is gofmt'd Go, oidc-provider.md's
// server passes node --check and states its keep-alive timeout.
func TestTargetGuidesCode(t *testing.T) {
	gos := fences(t, "zitadel.md")["go"]
	if len(gos) != 1 || !strings.Contains(gos[0], "VerifyExchangeSubjectToken") || !strings.Contains(gos[0], "VerifyExchangeActorToken") {
		t.Fatalf("zitadel.md: the wrapper with both verifier methods: %d Go blocks", len(gos))
	}
	if f, err := format.Source([]byte(gos[0])); err != nil || string(f) != gos[0] {
		t.Errorf("zitadel.md: the wrapper is not gofmt'd Go: %v", err)
	}
	js := fences(t, "oidc-provider.md")["js"]
	if len(js) != 1 || !strings.Contains(js[0], "registerGrantType(") || !strings.Contains(js[0], "keepAliveTimeout") {
		t.Fatalf("oidc-provider.md: the grant handler and the keep-alive timeout: %d JS blocks", len(js))
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the grant handler's syntax is checked with node --check")
	}
	p := filepath.Join(t.TempDir(), "server.mjs")
	if err := os.WriteFile(p, []byte(js[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--check", p).CombinedOutput(); err != nil {
		t.Errorf("oidc-provider.md: node --check: %v\n%s", err, out)
	}
}

// docs/examples/chain3.yaml, the campaign docs/agentic.md measures with
// `tokex run --config docs/examples/chain3.yaml`, loads and validates as
// tokex run loads it, and is the campaign that page describes.
func TestAgenticExampleCampaign(t *testing.T) {
	c, doc, err := Load(filepath.Join("..", "..", "docs", "examples", "chain3.yaml"), "article")
	if err == nil {
		err = c.Validate(doc)
	}
	if err != nil {
		t.Fatal(err)
	}
	w := c.Workload
	if w.Chain != 3 || w.BaselineGrant() != "client_credentials" || !w.StepsOn() || c.Subject.Actor.Source != ActorMinted ||
		c.Rounds != 3 || len(c.Stages) != 2 || c.Check.Verify.Sample != 0.05 || c.Subject.Alg != "ES256" || c.Target.URL != "" {
		t.Errorf("docs/examples/chain3.yaml is not docs/agentic.md's campaign: %+v", c)
	}
}
