package local_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/units"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/truth"
	"github.com/tokex-dev/tokex/runner/config"
)

// agenticCampaign is one stage of one short round against the reference
// server, every success verified.
func agenticCampaign() config.Campaign {
	c := tinyCampaign()
	c.Stages, c.Rounds, c.Duration, c.Warmup = []float64{10}, 1, time.Second, 0
	c.Sanity.Enabled = false
	c.Agents.Count = 2
	c.Check.Verify = config.Verify{Sample: 1}
	return c
}

// rowsOf reads a run's requests.csv.gz.
func rowsOf(t *testing.T, dir, id string) []stats.Request {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, evidence.RunsDir, id, evidence.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(zr)
	var out []stats.Request
	for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n")[1:] {
		q, err := evidence.ParseRequest(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		out = append(out, q)
	}
	return out
}

// TestChainsWithActorTokensAgainstTheReferenceServer (issue 30 items 1
// and 2): chains of 3 whose every exchange carries the agent's or the
// service's actor token, minted or got by client_credentials, against the
// reference server: every hop succeeds, is a row of its own with the
// issued token's size (growing as act nests one actor more), and the
// sampled verification checks each hop's nested act, the last hop's three
// actors included.
func TestChainsWithActorTokensAgainstTheReferenceServer(t *testing.T) {
	for _, source := range []string{config.ActorMinted, config.ActorClientCredentials} {
		t.Run(source, func(t *testing.T) {
			c := agenticCampaign()
			c.Workload.Chain, c.Workload.Steps = 3, new(bool)
			c.Subject.Actor.Source = source
			r := runCampaign(t, context.Background(), c, filepath.Join(t.TempDir(), "chain"), nil, nil, nil)
			if r.err != nil {
				t.Fatal(r.err)
			}
			run := r.summary.Stages[0].Runs[0]
			v := run.Verification
			if run.SuccessRatio != 1 || v == nil || v.Checked < 3 || v.Failed != 0 || run.Chains == nil || run.Chains.Completed != run.Chains.Started ||
				run.Chains.Started == 0 || len(run.Hops) != 3 {
				t.Fatalf("run %s: success %.4f, errors %v, verification %+v, chains %+v", run.ID, run.SuccessRatio, run.Errors, v, run.Chains)
			}
			sizes := map[int]int{}
			for _, q := range rowsOf(t, r.dir, run.ID) {
				if q.Hop < 1 || q.Hop > 3 || q.Kind != "" || !q.OK() || q.TokenBytes == 0 {
					t.Fatalf("row %+v", q)
				}
				sizes[q.Hop] = q.TokenBytes
			}
			if !(sizes[1] < sizes[2] && sizes[2] < sizes[3]) {
				t.Errorf("token sizes by hop %v: act nests one actor more at each hop", sizes)
			}
			said := false
			for _, e := range r.events {
				if l, ok := e.(event.Log); ok && strings.Contains(l.Message, "actor token(s) got ("+source+")") {
					said = true
				}
			}
			if !said {
				t.Error("the actor tokens got are not said")
			}
			for _, e := range r.events {
				// The pre-flight's exchanges carry the actor token too.
				if c, ok := e.(event.Forecast); ok && (c.Estimate.ServerCPUMs == 0 || strings.Contains(c.Estimate.Method, "failed")) {
					t.Errorf("pre-flight: %+v", c.Estimate)
				}
			}
		})
	}
}

// TestMixDrawsEachArrivalsGrant (issue 30 item 4): one arrival stream of
// exchanges (chains of 2) and client-credentials grants; each row's grant
// is the mix's draw for its arrival, the config records the seed, and the
// run gives each grant's figures.
// TestMayActAgainstTheReferenceServer: subject tokens whose may_act
// (RFC 8693 §4.4, templated by subject.claims) names the presenting agent
// are exchanged with its actor token; naming another party, every
// exchange is refused with invalid_grant.
func TestMayActAgainstTheReferenceServer(t *testing.T) {
	for _, tc := range []struct {
		mayAct  string
		success float64
	}{{"{{client_id}}", 1}, {"perf-agent-9", 0}} {
		t.Run(tc.mayAct, func(t *testing.T) {
			c := agenticCampaign()
			c.Subject.Actor.Source = config.ActorMinted
			c.Subject.Claims = map[string]any{"may_act": map[string]any{"sub": tc.mayAct}}
			r := runCampaign(t, context.Background(), c, filepath.Join(t.TempDir(), "may-act"), nil, nil, nil)
			if r.err != nil && tc.success == 1 {
				t.Fatal(r.err)
			}
			run := r.summary.Stages[0].Runs[0]
			if run.Requests == 0 || run.SuccessRatio != tc.success {
				t.Fatalf("run %s: %d requests, success %.4f, errors %v", run.ID, run.Requests, run.SuccessRatio, run.Errors)
			}
			if tc.success == 0 {
				said := len(run.TopErrors) > 0 && len(run.TopErrors[0].Descriptions) > 0 && strings.Contains(run.TopErrors[0].Descriptions[0].Text, "may_act")
				if run.Errors["oauth_error:"+exchange.ErrInvalidGrant] != run.Requests || !said {
					t.Fatalf("run %s: errors %v, top %+v", run.ID, run.Errors, run.TopErrors)
				}
			}
		})
	}
}

func TestMixDrawsEachArrivalsGrant(t *testing.T) {
	c := agenticCampaign()
	c.Check.Verify.Sample = 0.5
	c.Workload.Chain, c.Workload.Steps = 2, new(bool)
	c.Workload.Mix = map[string]float64{"exchange": 50, "client_credentials": 50}
	r := runCampaign(t, context.Background(), c, filepath.Join(t.TempDir(), "mix"), nil, nil, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	f, err := evidence.Open(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	y, _ := f.ConfigYAML()
	saved, _, err := config.LoadData("config.yaml", y, "")
	if err != nil || saved.Workload.Seed == 0 {
		t.Fatalf("config.yaml records no seed: %v\n%s", err, y)
	}
	mix := saved.Workload.MixSpec()
	run := r.summary.Stages[0].Runs[0]
	kinds := map[exchange.Grant]int{}
	for _, q := range rowsOf(t, r.dir, run.ID) {
		if want := mix.Draw(q.Agent, q.Seq); q.Grant() != want {
			t.Fatalf("row %+v: the mix draws %s", q, want)
		}
		if q.Grant() == exchange.GrantExchange && (q.Hop < 1 || q.Hop > 2) || q.Grant() != exchange.GrantExchange && q.Hop != 0 || !q.OK() {
			t.Fatalf("row %+v", q)
		}
		kinds[q.Grant()]++
	}
	if kinds[exchange.GrantExchange] == 0 || kinds[exchange.GrantClientCredentials] == 0 {
		t.Errorf("rows by grant %v", kinds)
	}
	if len(run.Kinds) != 2 || run.Mix == nil || run.Mix.Seed != saved.Workload.Seed || run.Verification.Failed != 0 {
		t.Errorf("kinds %+v mix %+v verification %+v", run.Kinds, run.Mix, run.Verification)
	}
}

// TestTruthChainPremium (issue 30's done criteria): chains of 3 with
// minted actor tokens and a client_credentials baseline against the
// reference server, 2 stages × 3 rounds: every hop's p95, token size and
// CPU-ms with its interval, the chain's latency in its two parts, the
// exchange premium with its interval, and every sampled hop's nested act
// verified. It prints the figures.
func TestTruthChainPremium(t *testing.T) {
	truth.Require(t)
	c := tinyCampaign()
	c.Stages, c.Rounds, c.Duration, c.Warmup = []float64{25, 50}, 3, 8*time.Second, 2*time.Second
	c.Sanity.Enabled, c.Agents.Count = false, 4
	c.Workload.Chain, c.Workload.Baseline = 3, "client_credentials"
	c.Subject.Actor.Source = config.ActorMinted
	c.Check.Verify = config.Verify{Sample: 0.05}
	r := runCampaign(t, context.Background(), c, filepath.Join(t.TempDir(), "chain3"), nil, nil, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	a := r.summary.Agentic
	if a == nil || a.Premium == nil || len(a.Stages) != 2 || len(r.summary.Variants) != 6 {
		t.Fatalf("agentic %+v, %d variant stages", a, len(r.summary.Variants))
	}
	if v := r.summary.Totals.Verified; v == nil || v.Checked == 0 || v.Failed != 0 {
		t.Errorf("verification %+v", v)
	}
	for _, st := range a.Stages {
		if len(st.Hops) != 3 || st.Chain == nil || st.Chain.Completed == 0 {
			t.Fatalf("stage %+v", st)
		}
		for _, h := range st.Hops {
			if h.P95Ms <= 0 || h.TokenBytes <= 0 || h.CPUMs == nil || h.CPUMs.N != 3 {
				t.Errorf("%s hop %d: %+v", units.StageLabel(st.TargetRPS), h.Hop, h)
			}
		}
		if st.Hops[2].TokenBytes <= st.Hops[0].TokenBytes {
			t.Errorf("token sizes %v %v", st.Hops[0].TokenBytes, st.Hops[2].TokenBytes)
		}
	}
	if p := a.Premium.Overall; p.CPUMs.N != 6 || !p.CPUMs.Shown() {
		t.Errorf("premium %+v", p)
	}
	t.Log("\n" + doc.Campaign(r.summary, nil).Text())
}
