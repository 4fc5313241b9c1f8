package runner

import (
	"slices"
	"testing"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/runner/config"
)

// TestPlanInterleavesTheWorkloads: a campaign of single exchanges plans
// the runs it always did; chains of 3 with a baseline run, at every stage
// of every round, the chains of 3, their steps 1 and 2 and the baseline,
// each round starting one further along, so that no workload always runs
// first after a pause or last before a drift.
func TestPlanInterleavesTheWorkloads(t *testing.T) {
	c := config.Article()
	c.Stages, c.Rounds = []float64{50, 100}, 2
	var ids []string
	for _, p := range Plan(&c) {
		ids = append(ids, p.ID)
	}
	if want := []string{"00-sanity", "01-r1-50rps", "02-r1-100rps", "03-r2-50rps", "04-r2-100rps"}; !slices.Equal(ids, want) {
		t.Errorf("single exchanges: %v", ids)
	}
	c.Workload.Chain, c.Workload.Baseline = 3, "client_credentials"
	plan := Plan(&c)
	ids = ids[:0]
	for _, p := range plan {
		ids = append(ids, p.ID)
	}
	want := []string{"00-sanity",
		"01-r1-50rps", "02-r1-50rps-chain1", "03-r1-50rps-chain2", "04-r1-50rps-cc",
		"05-r1-100rps", "06-r1-100rps-chain1", "07-r1-100rps-chain2", "08-r1-100rps-cc",
		"09-r2-50rps-chain1", "10-r2-50rps-chain2", "11-r2-50rps-cc", "12-r2-50rps",
		"13-r2-100rps-chain1", "14-r2-100rps-chain2", "15-r2-100rps-cc", "16-r2-100rps"}
	if !slices.Equal(ids, want) {
		t.Errorf("chains and baseline:\n got %v\nwant %v", ids, want)
	}
	for _, p := range plan {
		switch {
		case p.Sanity || p.ID == "01-r1-50rps":
			if p.Chain != 3 || p.Step || p.Grant != "" {
				t.Errorf("%s: %+v", p.ID, p)
			}
		case p.ID == "03-r1-50rps-chain2":
			if p.Chain != 2 || !p.Step {
				t.Errorf("%s: %+v", p.ID, p)
			}
		case p.ID == "04-r1-50rps-cc":
			if p.Grant != exchange.GrantClientCredentials || p.Chain != 0 || p.Step {
				t.Errorf("%s: %+v", p.ID, p)
			}
		}
	}
	c.Workload.Steps = new(bool)
	if n := len(Plan(&c)); n != 1+2*2*2 {
		t.Errorf("chains without steps, with a baseline: %d runs", n)
	}
}
