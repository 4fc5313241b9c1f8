package local

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/subject"
)

type recorder struct {
	mu   sync.Mutex
	rows []stats.Request
}

func (r *recorder) rec(q *stats.Request) {
	r.mu.Lock()
	r.rows = append(r.rows, *q)
	r.mu.Unlock()
}

func newGen(t *testing.T, url string, agents, maxInFlight int) *Generator {
	t.Helper()
	key, err := jose.GenerateKey(jose.ES256)
	if err != nil {
		t.Fatal(err)
	}
	g := &Generator{URL: url, MaxInFlight: maxInFlight, Timeout: 5 * time.Second,
		Body: exchange.Template{Resources: []string{"https://r"}, Scope: "s"}.Compile()}
	for i := 0; i < agents; i++ {
		g.Agents = append(g.Agents, &Agent{Index: i, ClientID: "perf-agent-" + string(rune('0'+i)), Secret: "sec",
			Minter: &subject.Minter{Key: key, Issuer: "iss", Lifetime: time.Minute, Users: subject.Users(3), Prefix: "t-" + string(rune('0'+i)) + "-"}})
	}
	g.Connect(TransportOptions{Conns: maxInFlight})
	t.Cleanup(g.Close)
	return g
}

func okServer(t *testing.T, seen func(r *http.Request, form url.Values)) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if seen != nil {
			seen(r, r.PostForm)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"x","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer"}`))
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestArrivalsAndOffsets(t *testing.T) {
	cases := []struct {
		rate  float64
		total time.Duration
		want  int
	}{
		{100, time.Second, 100},
		{100, 1500 * time.Millisecond, 150},
		{3, time.Second, 3},
		{7.5, 2 * time.Second, 15},
		{500, 330 * time.Second, 165000},
	}
	for _, c := range cases {
		if got := arrivalsIn(c.rate, c.total); got != c.want {
			t.Errorf("arrivalsIn(%v, %v) = %d, want %d", c.rate, c.total, got, c.want)
		}
		if n := arrivalsIn(c.rate, c.total); offset(c.rate, n-1) >= c.total || offset(c.rate, n) < c.total {
			t.Errorf("rate %v: arrival %d at %v is past %v", c.rate, n-1, offset(c.rate, n-1), c.total)
		}
	}
}

func TestGeneratorScheduleAgentsPhasesAndFreshTokens(t *testing.T) {
	var mu sync.Mutex
	jtis := map[string]int{}
	auds := map[string]string{}
	ts := okServer(t, func(r *http.Request, form url.Values) {
		id, _, _, _ := exchange.ParseBasicAuth(r.Header.Get("Authorization"))
		var c jwt.MapClaims
		_, _, _ = jwt.NewParser().ParseUnverified(form.Get("subject_token"), &c)
		mu.Lock()
		jtis[c["jti"].(string)]++
		auds[c["jti"].(string)] = c["aud"].(string) + "|" + id
		mu.Unlock()
	})
	// Each agent's cap (75) holds all its 75 arrivals, so a machine too busy
	// to answer in time cannot turn one into a drop: this test is about the
	// schedule, not the cap (TestGeneratorDropsWhenInFlightCapIsFull).
	g := newGen(t, ts.URL, 4, 75)
	rec := &recorder{}
	p := event.PlannedRun{ID: "r", TargetRPS: 200, Warmup: 500 * time.Millisecond, Duration: time.Second, Agents: 4}
	start := time.Now().Add(50 * time.Millisecond)
	g.Run(context.Background(), p, start, rec.rec)

	if len(rec.rows) != 300 {
		t.Fatalf("%d rows, want 300", len(rec.rows))
	}
	perAgent := map[int]int{}
	var warm, meas int
	sort.Slice(rec.rows, func(i, j int) bool { return rec.rows[i].ScheduledUS < rec.rows[j].ScheduledUS })
	for k, r := range rec.rows {
		perAgent[r.Agent]++
		if r.Outcome != "ok" {
			t.Fatalf("row %d: %+v", k, r)
		}
		// Scheduled exactly k/rate after the start, whatever happened before.
		if want := start.Add(time.Duration(k) * 5 * time.Millisecond).UnixMicro(); r.ScheduledUS-want > 1 || want-r.ScheduledUS > 1 {
			t.Fatalf("arrival %d scheduled at %d, want %d", k, r.ScheduledUS, want)
		}
		if r.Phase == stats.Warmup {
			warm++
		} else {
			meas++
		}
	}
	if warm != 100 || meas != 200 {
		t.Errorf("warmup %d measured %d", warm, meas)
	}
	for a, n := range perAgent {
		if n != 75 {
			t.Errorf("agent %d sent %d", a, n)
		}
	}
	if len(jtis) != 300 {
		t.Errorf("%d distinct subject tokens for 300 requests", len(jtis))
	}
	for jti, v := range auds {
		aud, id, _ := strings.Cut(v, "|")
		if aud != id {
			t.Errorf("token %s: aud %q sent by client %q", jti, aud, id)
		}
	}
}

func TestGeneratorDropsWhenInFlightCapIsFull(t *testing.T) {
	release := make(chan struct{})
	var got atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		<-release // a stalled server
		_, _ = w.Write([]byte(`{"access_token":"x","issued_token_type":"y"}`))
	}))
	defer ts.Close()
	defer close(release)
	g := newGen(t, ts.URL, 1, 3)
	rec := &recorder{}
	p := event.PlannedRun{ID: "r", TargetRPS: 100, Duration: 300 * time.Millisecond, Agents: 1}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { g.Run(ctx, p, time.Now(), rec.rec); close(done) }()
	time.Sleep(600 * time.Millisecond)
	cancel()
	<-done
	var dropped, aborted int
	for _, r := range rec.rows {
		switch r.Outcome {
		case "dropped":
			dropped++
		case "aborted":
			aborted++
		}
	}
	if len(rec.rows) != 30 || dropped != 27 || aborted != 3 {
		t.Errorf("rows %d dropped %d aborted %d (server saw %d)", len(rec.rows), dropped, aborted, got.Load())
	}
}

func TestGeneratorClassifiesErrors(t *testing.T) {
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 3 {
		case 0:
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
		case 1:
			w.WriteHeader(503)
		default:
			_, _ = w.Write([]byte(`{"access_token":""}`))
		}
	}))
	defer ts.Close()
	g := newGen(t, ts.URL, 1, 10)
	rec := &recorder{}
	g.Run(context.Background(), event.PlannedRun{ID: "r", TargetRPS: 100, Duration: 90 * time.Millisecond, Agents: 1}, time.Now(), rec.rec)
	seen := map[string]int{}
	for _, r := range rec.rows {
		seen[string(r.Outcome)+":"+r.Detail]++
	}
	for _, k := range []string{"oauth_error:invalid_grant", "http_error:503", "bad_response:200"} {
		if seen[k] != 3 {
			t.Errorf("%s: %d (all: %v)", k, seen[k], seen)
		}
	}
}
