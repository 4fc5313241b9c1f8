package local_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner"
)

// tokenServer answers every exchange like a healthy server, on addr
// ("127.0.0.1:0" for a fresh port).
func tokenServer(t *testing.T, addr string) (*http.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"at","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer"}`))
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return srv, ln.Addr().String()
}

// A remote target that dies mid-campaign stops the run and the campaign
// (it used to be loaded for every remaining run, then "campaign done"),
// with the reason in the manifest, the summary and a coded warning; the
// evidence is kept, and --resume continues once the target is back.
func TestCampaignStopsWhenTheTargetDiesAndResumes(t *testing.T) {
	t.Parallel()
	srv, addr := tokenServer(t, "127.0.0.1:0")
	c := tinyCampaign()
	c.Target.URL = "http://" + addr + "/as/token.oauth2"
	c.Stages, c.Rounds = []float64{20}, 3
	c.Duration, c.Warmup = 2*time.Second, 0 // the dead run stops after 1 s
	c.Sanity.Enabled = false                // TestCampaignInterruptKeepsEvidenceAndResumes resumes past one
	c.Target.UnreachableAfter = time.Second
	dir := filepath.Join(t.TempDir(), "dies")
	// The server dies as soon as the first counted run has finished.
	r := runCampaign(t, context.Background(), c, dir, nil, func(e event.Event) bool {
		if f, ok := e.(event.RunFinished); ok && f.RunID == "00-r1-20rps" {
			_ = srv.Close()
		}
		return false
	}, nil)
	if !errors.Is(r.err, runner.ErrUnreachable) {
		t.Fatalf("err = %v", r.err)
	}
	s := r.summary
	if s.Status != "failed" || !strings.Contains(s.Reason, "target unreachable: no HTTP response for 1s") || !strings.Contains(s.Reason, "conn_error") {
		t.Fatalf("summary status %q reason %q", s.Status, s.Reason)
	}
	var warned bool
	for _, w := range s.Warnings {
		warned = warned || (w.Code == stats.WarnTargetUnreachable && w.Run == "01-r2-20rps")
	}
	if !warned {
		t.Errorf("no target_unreachable warning: %v", s.Warnings)
	}
	for _, e := range r.events {
		if rs, ok := e.(event.RunStarted); ok && rs.Run.ID == "02-r3-20rps" {
			t.Error("the campaign went on loading a dead target")
		}
	}
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.Manifest.Status != "failed" || !strings.Contains(f.Manifest.Reason, "target unreachable: no HTTP response for 1s") {
		t.Errorf("manifest status %q reason %q", f.Manifest.Status, f.Manifest.Reason)
	}
	statuses := map[string]stats.RunStatus{}
	for _, e := range f.Manifest.Runs {
		statuses[e.ID] = e.Status
		if e.ID == "01-r2-20rps" && !strings.Contains(e.Reason, "target unreachable: no HTTP response for 1s") {
			t.Errorf("manifest entry of the dead run: reason %q", e.Reason)
		}
	}
	if statuses["00-r1-20rps"] != "done" || statuses["01-r2-20rps"] != "failed" || statuses["02-r3-20rps"] != "pending" {
		t.Fatalf("statuses %v", statuses)
	}
	onDisk, err := f.Summary()
	if err != nil || onDisk.Reason != s.Reason {
		t.Errorf("summary.json reason %q (%v)", onDisk.Reason, err)
	}
	failed, err := f.RunStats("01-r2-20rps")
	if err != nil || failed.Status != stats.StatusFailed || failed.Responses != 0 || failed.MeasuredSeconds >= c.Duration.Seconds() {
		t.Errorf("the dead run: %+v (%v)", failed, err)
	}
	first, _ := f.RunStats("00-r1-20rps")
	if first == nil || first.OK != 40 {
		t.Fatalf("the run before the failure: %+v", first)
	}
	if _, err := os.Stat(filepath.Join(dir, evidence.RunsDir, "01-r2-20rps", evidence.RequestsFile)); err != nil {
		t.Errorf("the dead run's rows are gone: %v", err)
	}

	// The target is back on the same address: resume finishes the campaign.
	tokenServer(t, addr)
	done := map[string]*stats.Run{}
	for _, e := range f.Manifest.Runs {
		if e.Status == "done" {
			done[e.ID], _ = f.RunStats(e.ID)
		}
	}
	r2 := runCampaign(t, context.Background(), c, dir, done, nil, nil)
	// (Whether the thresholds pass depends on how busy this machine is.)
	if r2.err != nil || r2.summary.Status != "done" || r2.summary.Reason != "" || len(r2.summary.Stages[0].Runs) != 3 {
		t.Fatalf("resume: %+v %v", r2.summary, r2.err)
	}
	for _, run := range r2.summary.Stages[0].Runs {
		if run.Status != stats.StatusDone || run.OK != 40 {
			t.Errorf("after resume %s: %s, %d ok", run.ID, run.Status, run.OK)
		}
	}
	for _, e := range r2.events {
		if rs, ok := e.(event.RunStarted); ok && rs.Run.ID == "00-r1-20rps" {
			t.Errorf("resume re-ran %s", rs.Run.ID)
		}
	}
	f2, _ := evidence.Open(dir)
	if kept, _ := f2.RunStats("00-r1-20rps"); mustJSON(t, kept) != mustJSON(t, first) {
		t.Error("a finished run's evidence changed on resume")
	}
	if f2.Manifest.Status != "done" || f2.Manifest.Reason != "" {
		t.Errorf("after resume: manifest %q %q", f2.Manifest.Status, f2.Manifest.Reason)
	}
}

// With subject.premint, every run's RS256 tokens are signed before it
// starts, which the log says with the CPU it took, and the run's exchanges
// all succeed with them.
func TestCampaignWithPremintedTokens(t *testing.T) {
	t.Parallel()
	_, addr := tokenServer(t, "127.0.0.1:0")
	c := tinyCampaign()
	c.Target.URL = "http://" + addr + "/as/token.oauth2"
	c.Stages, c.Rounds = []float64{20}, 1
	c.Duration, c.Warmup = time.Second, 0
	c.Subject.Alg, c.Subject.Premint = "RS256", true
	r := runCampaign(t, context.Background(), c, filepath.Join(t.TempDir(), "premint"), nil, nil, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	var minted []string
	for _, e := range r.events {
		if l, ok := e.(event.Log); ok && strings.HasPrefix(l.Message, "pre-minted ") {
			minted = append(minted, l.Message)
		}
	}
	if len(minted) != 2 || !strings.Contains(minted[1], "pre-minted 20 RS256 subject tokens for run 01-r1-20rps") {
		t.Errorf("pre-minting lines %q", minted)
	}
	for _, e := range r.events {
		if f, ok := e.(event.RunFinished); ok && (f.Stats == nil || f.Stats.OK != f.Stats.Requests || f.Stats.Requests == 0) {
			t.Errorf("run %s: %+v", f.RunID, f.Stats)
		}
	}
}
