package local

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/subject"
)

func testPreminter(t *testing.T, avail int64, lines *[]string) *preminter {
	t.Helper()
	key, err := jose.GenerateKey(jose.ES256)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	return &preminter{key: key, issuer: "https://pf-perf-subject", lifetime: time.Minute, users: subject.Users(5), prefix: "camp",
		memory:   func() (int64, string, error) { return avail, "test", nil },
		progress: func(m string) { mu.Lock(); *lines = append(*lines, m); mu.Unlock() }}
}

// TestPremintedTokensAreFreshUniqueAndLastTheRun: one token per arrival,
// split over the agents as the arrivals are, each with its agent's aud and
// a jti of its own, issued before the run and valid until its lifetime
// after the run's end; the generator sends each exactly once and signs
// nothing during the run (the agents have no minter).
func TestPremintedTokensAreFreshUniqueAndLastTheRun(t *testing.T) {
	var lines []string
	pm := testPreminter(t, 1<<40, &lines)
	p := event.PlannedRun{ID: "00-r1-200rps", TargetRPS: 200, Warmup: 300 * time.Millisecond, Duration: time.Second, Agents: 3}
	pl, err := pm.plan(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	if pl.total != 260 || pl.counts[0]+pl.counts[1]+pl.counts[2] != 260 || pl.counts[0] != 87 || pl.counts[2] != 86 {
		t.Fatalf("plan %+v", pl)
	}
	before := time.Now().Add(-time.Second)
	toks, err := pm.mint(context.Background(), p, pl, []string{"perf-agent-0", "perf-agent-1", "perf-agent-2"})
	if err != nil {
		t.Fatal(err)
	}
	runEnd := time.Now().Add(100*time.Millisecond + p.Total())
	jtis := map[string]bool{}
	for a, list := range toks {
		for _, tok := range list {
			var c subject.Claims
			if _, err := jwt.ParseWithClaims(tok, &c, func(*jwt.Token) (any, error) { return pm.key.Signer.Public(), nil }); err != nil {
				t.Fatal(err)
			}
			if c.Audience != "perf-agent-"+string(rune('0'+a)) || jtis[c.ID] || !strings.HasPrefix(c.ID, "camp-a") {
				t.Fatalf("agent %d token %+v (seen %v)", a, c, jtis[c.ID])
			}
			jtis[c.ID] = true
			if iat := time.Unix(c.IssuedAt, 0); iat.Before(before.Truncate(time.Second)) || iat.After(time.Now()) {
				t.Errorf("iat %v not the signing time", iat)
			}
			if exp := time.Unix(c.Expiry, 0); exp.Before(runEnd.Add(pm.lifetime - time.Second)) {
				t.Errorf("exp %v: less than the lifetime left at the run's end %v", exp, runEnd)
			}
		}
	}
	if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], "pre-minted 260 ES256 subject tokens for run 00-r1-200rps") ||
		!strings.Contains(lines[len(lines)-1], "CPU") {
		t.Errorf("progress %q", lines)
	}

	var mu sync.Mutex
	sent := map[string]int{}
	ts := okServer(t, func(_ *http.Request, form url.Values) { mu.Lock(); sent[form.Get("subject_token")]++; mu.Unlock() })
	g := newGen(t, ts.URL, 3, 50)
	for i, a := range g.Agents {
		a.Minter, a.pre = nil, toks[i]
	}
	want := map[string]bool{}
	for _, list := range toks {
		for _, tok := range list {
			want[tok] = true
		}
	}
	rec := &recorder{}
	g.Run(context.Background(), p, time.Now().Add(20*time.Millisecond), rec.rec)
	for _, r := range rec.rows {
		if r.Outcome != "ok" && r.Outcome != "dropped" {
			t.Fatalf("row %+v", r)
		}
	}
	for tok, n := range sent {
		if n != 1 || !want[tok] {
			t.Fatalf("token sent %d times, pre-minted %v", n, want[tok])
		}
	}
	if len(sent) == 0 || len(sent) > 260 {
		t.Errorf("%d tokens sent", len(sent))
	}
	for _, list := range toks {
		for _, tok := range list {
			if tok != "" && sent[tok] > 0 {
				t.Fatal("a sent token is still held in memory")
			}
		}
	}
}

func TestPremintRefusedWhenItWouldNotFit(t *testing.T) {
	var lines []string
	pm := testPreminter(t, 8<<20, &lines) // 8 MiB available
	p := event.PlannedRun{ID: "00-r1-5000rps", TargetRPS: 5000, Duration: 10 * time.Second}
	_, err := pm.plan(p, 10) // 50,000 tokens of ~300 bytes: ~17 MiB
	if err == nil || !strings.Contains(err.Error(), "pre-minting run 00-r1-5000rps: 50,000 ES256 tokens") ||
		!strings.Contains(err.Error(), "more than half of the 8.0 MiB available (test)") {
		t.Fatalf("err %v", err)
	}
	if _, err := pm.plan(event.PlannedRun{ID: "small", TargetRPS: 100, Duration: time.Second}, 10); err != nil {
		t.Errorf("a small run refused: %v", err)
	}
}

func TestPremintCancelled(t *testing.T) {
	var lines []string
	pm := testPreminter(t, 1<<40, &lines)
	p := event.PlannedRun{ID: "r", TargetRPS: 1000, Duration: 100 * time.Second}
	pl, err := pm.plan(p, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pm.mint(ctx, p, pl, []string{"a", "b"}); err != context.Canceled {
		t.Errorf("err %v", err)
	}
}

func TestProgressLine(t *testing.T) {
	got := progressLine("00-r1-500rps", "RS256", 75_000, 150_000, 41*time.Second, 80500*time.Millisecond)
	want := "pre-minting run 00-r1-500rps: [##########..........]  50% 75,000/150,000 RS256 tokens, 41s, CPU 80.5 s"
	if got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}
