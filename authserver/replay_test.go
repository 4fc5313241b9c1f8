package authserver

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/subject"
)

// TestReplayCacheSharesFairly: one client that fills the replay cache is
// refused alone; every other client keeps its reserved share, and the
// pool comes back as entries expire (issue 25 item 10).
func TestReplayCacheSharesFairly(t *testing.T) {
	const now = int64(1_000_000)
	c := newReplayCache(1000, 10, 0, 10) // a share of 50 each, a pool of 500
	add := func(client string, from, n int, exp int64) (ok int) {
		for i := from; i < from+n; i++ {
			if c.add(client, fmt.Sprint(i), exp, now) == replayNew {
				ok++
			}
		}
		return ok
	}
	if got := add("greedy", 0, 2000, now+5); got != 550 {
		t.Fatalf("the greedy client got %d entries, want its 50 and the pool of 500", got)
	}
	for i := range 9 {
		if got := add(fmt.Sprint("c", i), 0, 60, now+50); got != 50 {
			t.Errorf("client %d got %d, want its share of 50", i, got)
		}
	}
	if c.n != 1000 || c.pooled != 500 {
		t.Errorf("%d held, %d pooled", c.n, c.pooled)
	}
	// The greedy client's entries expire: the pool is free again.
	if got := c.add("c0", "late", now+50, now+20); got != replayNew || c.pooled != 1 || c.held["greedy"] != 0 {
		t.Errorf("after expiry: %v, pooled %d, greedy holds %d", got, c.pooled, c.held["greedy"])
	}
}

// TestFullReplayCacheRefusesOnlyItsClient: through the token endpoint, a
// client that fills the cache gets 503, another still authenticates, and
// the refusals are logged once per interval.
func TestFullReplayCacheRefusesOnlyItsClient(t *testing.T) {
	f, keys := assertionFixture(t, func(c *Config) { c.ClientAuth.ReplayCache = 1000 })
	var logged syncBuffer
	f.srv.log = slog.New(slog.NewTextHandler(&logged, nil))
	asr := func(id string) *subject.Asserter {
		return &subject.Asserter{Key: keys[id], ClientID: id, Audience: tokenURL, Lifetime: time.Minute, Prefix: "t-"}
	}
	a0, a1 := asr("perf-agent-0"), asr("perf-agent-1")
	send := func(t *testing.T, a *subject.Asserter) int {
		s, err := a.Assert()
		if err != nil {
			t.Fatal(err)
		}
		return f.do("POST", f.assertionForm(t, a.ClientID, s), nil).Code
	}
	accepted, refused := 0, 0
	for i := 0; i < 1100 && refused < 20; i++ { // past the whole cache, unless refused first
		switch code := send(t, a0); code {
		case 200:
			accepted++
		case 503:
			refused++
		default:
			t.Fatalf("perf-agent-0: %d", code)
		}
	}
	if accepted != 750 { // two clients: a share of 250 each and a pool of 500
		t.Errorf("perf-agent-0: %d accepted, want 750", accepted)
	}
	if code := send(t, a1); code != 200 {
		t.Errorf("perf-agent-1 after perf-agent-0 filled the cache: %d", code)
	}
	out := logged.String()
	if n := strings.Count(out, "replay cache: client assertions refused (503)"); n != 1 || !strings.Contains(out, "perf-agent-0") {
		t.Errorf("%d log lines: %s", n, out)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRestartedServerRefusesUsedAssertions: the replay cache is in memory,
// so a restarted server refuses every assertion issued before it started
// (iat), the used ones among them, and accepts the ones issued after
// (issue 25 item 9: a used assertion was accepted again after a restart).
func TestRestartedServerRefusesUsedAssertions(t *testing.T) {
	f, keys := assertionFixture(t, nil)
	a := &subject.Asserter{Key: keys["perf-agent-0"], ClientID: "perf-agent-0", Audience: tokenURL, Lifetime: time.Minute, Prefix: "t-"}
	used, err := a.Assert()
	if err != nil {
		t.Fatal(err)
	}
	if rec := f.do("POST", f.assertionForm(t, "perf-agent-0", used), nil); rec.Code != 200 {
		t.Fatalf("first use: %d %s", rec.Code, rec.Body)
	}
	jwks, _ := jose.JWKS(f.key)
	restarted, err := New(context.Background(), f.srv.cfg, Options{ClientSecret: testSecret, SubjectJWKS: jwks})
	if err != nil {
		t.Fatal(err)
	}
	restarted.SetBaseURL("https://tokex.test")
	g := &fixture{srv: restarted, key: f.key, minter: f.minter}
	if rec := g.do("POST", g.assertionForm(t, "perf-agent-0", used), nil); rec.Code != 401 || !strings.Contains(rec.Body.String(), "before this server started") {
		t.Errorf("the used assertion after a restart: %d %s", rec.Code, rec.Body)
	}
	fresh, _ := a.Assert()
	for i, want := range []int{200, 401} { // then a replay
		if rec := g.do("POST", g.assertionForm(t, "perf-agent-0", fresh), nil); rec.Code != want {
			t.Errorf("a fresh assertion, use %d: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	noIAT := signAssertion(t, jwt.SigningMethodES256, keys["perf-agent-0"].Signer, keys["perf-agent-0"].Kid, "perf-agent-0",
		func(c jwt.MapClaims) { delete(c, "iat") })
	if rec := g.do("POST", g.assertionForm(t, "perf-agent-0", noIAT), nil); rec.Code != 401 || !strings.Contains(rec.Body.String(), "without iat") {
		t.Errorf("no iat, shortly after the start: %d %s", rec.Code, rec.Body)
	}
}
