package local_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/runner/local"
	"github.com/tokex-dev/tokex/runner/local/localtest"
	"github.com/tokex-dev/tokex/subject"
)

const embeddedPrefix = "tokex-embedded-"

// embeddedUntilKilled is a tokex that starts its embedded server (with TLS:
// a private key in its temporary folder) and waits to be killed.
func embeddedUntilKilled() {
	key, err := jose.GenerateKey(jose.ES256)
	if err == nil {
		_, err = local.StartEmbedded(context.Background(), local.EmbeddedOptions{Program: localtest.Program(), Clients: 1, ClientPrefix: "perf-agent-", Secret: "s-Zq9", SubjectIssuer: "https://issuer.test",
			SubjectKey: key, SigningAlg: jose.ES256, TLS: true})
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
	os.Exit(0)
}

func embeddedFolders(t *testing.T, tmp string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(tmp, embeddedPrefix+"*"))
	return m
}

// TestStaleEmbeddedFoldersAreRemoved is issue 9 item 21: SIGKILL of `tokex
// run` left the embedded server's temporary folder, TLS private key
// included; they accumulated. The next start removes the folders whose
// owner is gone, and only tokex's own.
func TestStaleEmbeddedFoldersAreRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	exe, _ := os.Executable()
	// Someone else's folder with the same prefix and no marker stays.
	foreign := filepath.Join(tmp, embeddedPrefix+"not-ours")
	_ = os.Mkdir(foreign, 0o700)

	cmd := exec.Command(exe, "embedded-until-killed")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		_ = cmd.Process.Kill()
		t.Fatalf("child: %q", line)
	}
	_ = cmd.Process.Kill() // SIGKILL: no cleanup runs
	_ = cmd.Wait()
	var stale string
	for _, d := range embeddedFolders(t, tmp) {
		if d != foreign {
			stale = d
		}
	}
	if stale == "" {
		t.Fatal("the killed tokex left no folder (nothing to test)")
	}
	if _, err := os.Stat(filepath.Join(stale, "server-key.pem")); err != nil {
		t.Fatalf("the stale folder holds no key: %v", err)
	}

	key, _ := jose.GenerateKey(jose.ES256)
	var logs []string
	e, err := local.StartEmbedded(context.Background(), local.EmbeddedOptions{Program: localtest.Program(), Clients: 1, ClientPrefix: "perf-agent-", Secret: "s-Zq9", SubjectIssuer: "https://issuer.test",
		SubjectKey: key, SigningAlg: jose.ES256, TLS: true, Log: func(_, m string) { logs = append(logs, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the killed run's folder is still there: %v", err)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("a folder without tokex's marker was removed: %v", err)
	}
	if got := embeddedFolders(t, tmp); len(got) != 2 {
		t.Errorf("while running: %v (want the server's own and the foreign one)", got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := embeddedFolders(t, tmp); len(got) != 1 || got[0] != foreign {
		t.Errorf("left behind: %v", got)
	}
	if !strings.Contains(strings.Join(logs, "\n"), "removed 1 temporary folder(s) of killed tokex runs") {
		t.Errorf("logs: %v", logs)
	}
}

// TestInflatedServerIsFlagged: an embedded server that is tokex itself (FindServerProgram's
// last resort) serves, and every run carries engine_memory_inflated in its
// warnings (kept in the evidence) without failing the verdict; the log says
// which engine ran and how it was found.
func TestInflatedServerIsFlagged(t *testing.T) {
	t.Parallel()
	c := localtest.Tiny()
	c.Stages, c.Rounds, c.Sanity.Enabled = []float64{20}, 1, false
	c.Warmup, c.Duration = 0, time.Second
	eng := localtest.Program()
	eng.Inflated, eng.How = true, "tokex itself: test"
	dir := filepath.Join(t.TempDir(), "inflated")
	r := localtest.Run(t, context.Background(), c, dir, localtest.Options{Program: eng})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	run := r.Summary.Stages[0].Runs[0]
	var found bool
	for _, w := range run.Warnings {
		found = found || w.Code == stats.WarnEngineMemoryInflated && strings.Contains(w.Detail, "tokex-engine")
	}
	if !found || !run.ThresholdsPassed {
		t.Errorf("warnings %v, passed %v", run.Warnings, run.ThresholdsPassed)
	}
	var logged bool
	for _, e := range r.Events {
		if l, ok := e.(event.Log); ok && l.Level == "warn" && strings.Contains(l.Message, "embedded server "+eng.Path+" (tokex itself: test;") {
			logged = true
		}
	}
	if !logged {
		t.Error("no log line names the inflated engine")
	}
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.Recompute(c.Thresholds)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := localtest.MustJSON(t, again.Stages[0].Runs[0].Warnings), localtest.MustJSON(t, run.Warnings); a != b {
		t.Errorf("recomputed warnings differ:\n%s\n%s", a, b)
	}
}

// TestEmbeddedEngineServesAgents: the embedded engine, given an actor key,
// the agents' grants and peer audiences, serves issue 30's requests — a
// client_credentials and a jwt-bearer token, and a two-hop chain with
// actor tokens whose last token carries both agents in act, as sampled
// verification reads it from the engine's own metadata and JWKS.
func TestEmbeddedEngineServesAgents(t *testing.T) {
	subjectKey, _ := jose.GenerateKey(jose.ES256)
	actorKey, _ := jose.GenerateKey(jose.EdDSA)
	const iss = "https://issuer.test"
	e, err := local.StartEmbedded(context.Background(), local.EmbeddedOptions{Program: localtest.Program(), Clients: 2, ClientPrefix: "perf-agent-",
		Secret: "s-Zq9", SubjectIssuer: iss, SubjectKey: subjectKey, SubjectLifetime: time.Minute, SigningAlg: jose.ES256,
		Resources: []string{"https://mcp.example.internal/mcp"}, ActorKey: actorKey, GrantTypes: exchange.GrantTypes, PeerAudiences: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	post := func(id string, v url.Values) []byte {
		t.Helper()
		req, _ := http.NewRequest("POST", e.URL, strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", exchange.BasicAuth(id, "s-Zq9"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", id, v.Get("grant_type"), resp.StatusCode, b)
		}
		return b
	}
	users := &subject.Minter{Key: subjectKey, Issuer: iss, Lifetime: time.Minute, Users: subject.Users(3), Prefix: "u-"}
	bearer := &subject.Minter{Key: subjectKey, Issuer: iss, Lifetime: time.Minute, Users: subject.Users(3), Prefix: "b-",
		Shape: subject.Shape{Audience: e.URL}}
	actors := &subject.ActorMinter{Key: actorKey, Issuer: subject.ActorIssuer(iss), Lifetime: time.Minute, Prefix: "a-"}
	mint := func(m interface{ Mint(string) (string, error) }, id string) string {
		s, err := m.Mint(id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	resource := url.Values{"resource": {"https://mcp.example.internal/mcp"}}
	post("perf-agent-0", url.Values{"grant_type": {exchange.GrantTypeClientCredentials}, "resource": resource["resource"]})
	post("perf-agent-0", url.Values{"grant_type": {exchange.GrantTypeJWTBearer}, "assertion": {mint(bearer, "")}, "resource": resource["resource"]})
	tok := mint(users, "perf-agent-0")
	var body []byte
	for i, id := range []string{"perf-agent-0", "perf-agent-1"} {
		v := url.Values{"grant_type": {exchange.GrantTypeTokenExchange}, "subject_token": {tok}, "subject_token_type": {exchange.TokenTypeAccessToken},
			"actor_token": {mint(actors, id)}, "actor_token_type": {exchange.TokenTypeJWT}}
		if i == 0 {
			v.Set("audience", "perf-agent-1")
		} else {
			v["resource"] = resource["resource"]
		}
		body = post(id, v)
		tok, _ = exchange.StringMember(body, "access_token")
	}
	iv, _, err := exchange.Discover(context.Background(), http.DefaultClient, e.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := iv.VerifyActors(body, "perf-agent-1", []string{"perf-agent-1", "perf-agent-0"}); err != nil {
		t.Fatal(err)
	}
}
