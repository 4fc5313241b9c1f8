package smoke

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/subject"
)

// Bounds of the every-agent check.
const (
	agentWorkers = 8  // exchanges at once
	maxNamed     = 12 // failed clients named; the rest counted
)

// agentResult is one agent's exchange, as the campaign classifies it.
type agentResult struct {
	i       int
	failure string // "" when it succeeded: outcome, detail and what the server said
}

// everyAgent performs one exchange as each of agents 1..N-1 (agent 0's
// was the first; firstOK: it succeeded) and says which clients failed,
// grouped by what the server said; true when every one succeeded.
func everyAgent(ctx context.Context, out io.Writer, o Options, m *subject.Minter, body exchange.Body, firstOK bool) bool {
	c := o.Cfg
	n := c.Agents.Count
	if n <= 1 {
		return true
	}
	results := make([]agentResult, n-1)
	var wg sync.WaitGroup
	work := make(chan int)
	for range min(agentWorkers, n-1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				results[i-1] = oneAgent(ctx, o, m, body, i)
			}
		}()
	}
	for i := 1; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	byFailure := map[string][]string{}
	var failed int
	for _, r := range results {
		if r.failure != "" {
			byFailure[r.failure] = append(byFailure[r.failure], c.ClientID(r.i))
			failed++
		}
	}
	if failed == 0 {
		fmt.Fprintf(out, "✓ every agent's client exchanged: %s…%s (one exchange each)\n", c.ClientID(0), c.ClientID(n-1))
		return true
	}
	fmt.Fprintf(out, "✗ %d of the other %d agents' clients failed (the campaign sends as all %d):\n", failed, n-1, n)
	for _, f := range slices.Sorted(maps.Keys(byFailure)) {
		fmt.Fprintf(out, "  %s: %s\n", f, names(byFailure[f]))
	}
	if firstOK { // agent 0's worked: the others are set up differently
		fmt.Fprintf(out, "  register them with the server as %s was, or lower agents.count\n", c.ClientID(0))
	}
	return false
}

// oneAgent is agent i's exchange, classified by the campaign's check.
func oneAgent(ctx context.Context, o Options, m *subject.Minter, body exchange.Body, i int) agentResult {
	a, err := exchangeAs(ctx, o, m, body, i)
	if err != nil {
		return agentResult{i: i, failure: printable(exchange.TransportDescription(err), 200)}
	}
	outcome, detail, why := o.Cfg.Check.Exchange().Classify(a.status, a.raw)
	if outcome == exchange.OutcomeOK {
		return agentResult{i: i}
	}
	f := strings.TrimSpace(fmt.Sprintf("%s %s", outcome, detail))
	if why = failure(outcome, why, a.raw); why != "" {
		f += fmt.Sprintf(" %q", printable(why, 200))
	}
	return agentResult{i: i, failure: f}
}

// names lists clients, the first maxNamed of them.
func names(ids []string) string {
	if len(ids) <= maxNamed {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:maxNamed], ", "), len(ids)-maxNamed)
}
