package runner

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/internal/confload"
	"github.com/tokex-dev/tokex/internal/owner"
	"github.com/tokex-dev/tokex/runner/config"
)

// Resumed is an interrupted campaign read back from its evidence folder:
// its configuration as it ran (the plan does not change) and the
// statistics of its finished runs, which a resumed Campaign skips.
type Resumed struct {
	Cfg  config.Campaign
	Doc  *confload.Doc
	ID   string
	Done map[string]*stats.Run
	// Search: the campaign is a capacity search; Stages: it planned
	// stages. Neither, for a folder from before tokex recorded the search
	// whose plan holds only the sanity run: the command decides.
	Search, Stages bool
	// Manifest is what the folder recorded: what a resume runs
	// (Disagreements).
	Manifest evidence.Manifest
	// Sealed: the folder's config.yaml is the one this user's tokex
	// wrote, unedited (manifest.json's owner seal, internal/owner).
	// Otherwise nothing it says is trusted before the user says so.
	Sealed bool
	// Engine is the engine process the campaign sampled last (nil: none).
	Engine *evidence.EngineProcess
}

// LoadResume reads the campaign in dir for `tokex run --resume`. A
// finished campaign is refused. The folder's client secret is redacted, so
// Cfg has none.
func LoadResume(dir string) (*Resumed, error) {
	f, err := evidence.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Manifest.Status == summary.CampaignDone {
		return nil, fmt.Errorf("%s: the campaign already finished", dir)
	}
	r := &Resumed{ID: f.Manifest.CampaignID, Done: map[string]*stats.Run{}, Manifest: *f.Manifest}
	y, err := f.ConfigYAML()
	if err != nil {
		return nil, err
	}
	if r.Cfg, r.Doc, err = config.LoadData(filepath.Join(dir, evidence.ConfigFile), y, "article"); err != nil {
		return nil, err
	}
	r.Sealed = owner.Sealed(y, f.Manifest.Owner)
	r.Cfg.Agents.ClientSecret = "" // redacted in the folder
	r.Engine = f.Manifest.LastEngineProcess()
	r.Search = f.Manifest.Search != nil
	for _, run := range f.Manifest.Runs {
		switch {
		case probeID.MatchString(run.ID):
			r.Search = true
		case !strings.HasSuffix(run.ID, "-sanity"):
			r.Stages = true
		}
		if run.Status == stats.StatusDone {
			st, err := f.RunStats(run.ID)
			if err != nil {
				return nil, fmt.Errorf("resume: run %s: %w", run.ID, err)
			}
			r.Done[run.ID] = st
		}
	}
	if r.Search && r.Stages {
		return nil, fmt.Errorf("%s: the plan mixes stages and capacity probes", dir)
	}
	return r, nil
}

// probeID is a capacity probe's run id (probeRun): "03-p2-r1-200rps", or
// with an engine count "05-n2-p1-r1-200rps".
var probeID = regexp.MustCompile(`^[0-9]+-(n[0-9]+-)?p[0-9]+-r[0-9]+-`)
