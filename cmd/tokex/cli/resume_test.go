package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/internal/owner"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
)

// unfinished writes the evidence folder of a campaign interrupted after
// its plan was recorded: a capacity search (search) or its stages.
func unfinished(t *testing.T, search bool) string {
	t.Helper()
	c := config.Article()
	y, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "c")
	w, err := evidence.Create(dir, y, evidence.Manifest{CampaignID: "c", Name: c.Name})
	if err != nil {
		t.Fatal(err)
	}
	plan := runner.Plan(&c)
	if search {
		plan = []event.PlannedRun{{ID: "01-p1-r1-100rps", Index: 1, Round: 1, TargetRPS: 100, Duration: c.Duration}}
		if err := w.SetSearch(runner.SearchSpec(&c)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SetPlan(plan); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestResumeFollowsTheFolder: `tokex run --resume` of a capacity campaign
// resumes its search (issue 13: it reran it as stages), and `tokex
// capacity --resume` of a staged campaign is refused rather than turned
// into a search.
func TestResumeFollowsTheFolder(t *testing.T) {
	o := &runOptions{resume: unfinished(t, true)}
	if err := o.load(); err != nil || !o.cost.search {
		t.Errorf("tokex run --resume of a capacity search: search %v, %v", o.cost.search, err)
	}
	o = &runOptions{resume: unfinished(t, false)}
	if err := o.load(); err != nil || o.cost.search {
		t.Errorf("tokex run --resume of stages: search %v, %v", o.cost.search, err)
	}
	o.cost.search = true // tokex capacity
	if err := o.load(); err == nil || !strings.Contains(err.Error(), "tokex run --resume") {
		t.Errorf("tokex capacity --resume of stages: %v", err)
	}
}

// countingTarget answers every token request with invalid_client and
// counts them.
func countingTarget(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
	}))
	t.Cleanup(ts.Close)
	return ts, &n
}

// interrupted writes the folder of a campaign against target interrupted
// after its plan was recorded, sealed by this user's tokex (TOKEX_HOME)
// when sealed; edit changes its config.yaml afterwards.
func interrupted(t *testing.T, target string, search, sealed bool, edit func(*config.Campaign)) string {
	t.Helper()
	c := config.Article()
	c.Target.URL = target
	c.Stages, c.Rounds, c.Duration, c.Warmup, c.Idle = []float64{5}, 1, time.Second, 0, 0
	c.Sanity.Duration, c.Agents.Count, c.Sampling = time.Second, 1, 100*time.Millisecond
	c.Capacity.Max = 400
	y, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	m := evidence.Manifest{CampaignID: "c", Name: c.Name, Driver: c.Driver}
	if sealed {
		if m.Owner, err = owner.Seal(y); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "c")
	w, err := evidence.Create(dir, y, m)
	if err != nil {
		t.Fatal(err)
	}
	plan := runner.Plan(&c)
	if search {
		plan = append(plan[:1], event.PlannedRun{ID: "01-p1-r1-5rps", Index: 1, Round: 1, TargetRPS: 5, Duration: c.Duration, Agents: 1})
		if err := w.SetSearch(runner.SearchSpec(&c)); err != nil {
			t.Fatal(err)
		}
	}
	w.Consume(event.CampaignStarted{ID: "c", Target: target})
	if err := w.SetPlan(plan); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&c)
		y, _ := c.Redacted()
		if err := os.WriteFile(filepath.Join(dir, evidence.ConfigFile), y, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mainIn(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestResumeRunsWhatTheManifestRecorded: a config.yaml that disagrees
// with the manifest is refused with the difference, before any request
// (issue 25 item 4: an edited target.url got the Basic secret, a bigger
// capacity block replaced the recorded search).
func TestResumeRunsWhatTheManifestRecorded(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	good, toGood := countingTarget(t)
	evil, toEvil := countingTarget(t)
	for _, tc := range []struct {
		name   string
		search bool
		edit   func(*config.Campaign)
		want   string
	}{
		{"target", false, func(c *config.Campaign) { c.Target.URL = evil.URL + "/token" },
			"target: manifest.json has " + good.URL + "/token, the config " + evil.URL + "/token"},
		{"stages", false, func(c *config.Campaign) { c.Stages = []float64{5, 10} },
			"plan: manifest.json has 2 runs, the config plans 1 more from 02-r1-10rps"},
		{"capacity", true, func(c *config.Campaign) { c.Capacity.Max = 4000 },
			"capacity search policy.max: manifest.json has 400, the config 4000"},
		{"driver", false, func(c *config.Campaign) { c.Driver = "kube" }, `driver: manifest.json has "local", the config "kube"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := interrupted(t, good.URL+"/token", tc.search, true, tc.edit)
			code, _, errs := mainIn("run", "--resume", dir, "--no-tui")
			if code != ExitCannotRun || !strings.Contains(errs, "disagrees with its manifest.json") || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant …%s…", code, errs, tc.want)
			}
		})
	}
	if toGood.Load() != 0 || toEvil.Load() != 0 {
		t.Errorf("requests sent: %d to the recorded target, %d to the edited one", toGood.Load(), toEvil.Load())
	}
}

// TestResumeOfAFolderWrittenElsewhere: a folder this user's tokex did not
// seal is resumed only with --trust-folder, and tokex says where the
// credentials go before it sends any.
func TestResumeOfAFolderWrittenElsewhere(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	target, sent := countingTarget(t)
	url := target.URL + "/token"
	dir := interrupted(t, url, false, false, nil)
	code, _, errs := mainIn("run", "--resume", dir, "--no-tui")
	if code != ExitCannotRun || !strings.Contains(errs, "not written by this user's tokex") || !strings.Contains(errs, "go to "+url) ||
		!strings.Contains(errs, "--trust-folder") || sent.Load() != 0 {
		t.Fatalf("without --trust-folder: exit %d, %d requests, stderr:\n%s", code, sent.Load(), errs)
	}
	// Sealed under another user's key: the same.
	other := interrupted(t, url, false, true, nil)
	t.Setenv("TOKEX_HOME", t.TempDir())
	if code, _, errs := mainIn("run", "--resume", other, "--no-tui"); code != ExitCannotRun || !strings.Contains(errs, "not written by this user's tokex") {
		t.Errorf("another user's folder: exit %d, %s", code, errs)
	}
	code, _, errs = mainIn("run", "--resume", dir, "--no-tui", "--trust-folder")
	said := strings.Index(errs, "tokex: resume: the agents' credentials (client_secret_basic, ")
	if said < 0 || !strings.Contains(errs[said:], "go to "+url+"\n") || !strings.Contains(errs, "(--trust-folder)") {
		t.Errorf("with --trust-folder: exit %d, stderr:\n%s", code, errs)
	}
	if sent.Load() == 0 {
		t.Errorf("with --trust-folder nothing was sent (exit %d):\n%s", code, errs)
	}
}

// A folder this user's tokex wrote resumes as before, and says where the
// credentials go.
func TestResumeOfOwnFolderSaysWhereCredentialsGo(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	target, sent := countingTarget(t)
	dir := interrupted(t, target.URL+"/token", false, true, nil)
	code, _, errs := mainIn("run", "--resume", dir, "--no-tui")
	if !strings.Contains(errs, "go to "+target.URL+"/token\n") || strings.Contains(errs, "--trust-folder") || sent.Load() == 0 {
		t.Errorf("exit %d, %d requests, stderr:\n%s", code, sent.Load(), errs)
	}
}
