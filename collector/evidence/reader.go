package evidence

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// Folder is an evidence folder opened for reading.
type Folder struct {
	Dir      string
	Manifest *Manifest
}

// Open checks that dir is an evidence folder and reads its manifest.
func Open(dir string) (*Folder, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: %w (not a directory)", dir, errNotEvidence)
	}
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w (no %s)", dir, errNotEvidence, ManifestFile)
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil || m.CampaignID == "" {
		return nil, fmt.Errorf("%s: %w (%s is unreadable)", dir, errNotEvidence, ManifestFile)
	}
	if m.SchemaVersion > stats.SchemaVersion {
		return nil, fmt.Errorf("%s: written by a newer tokex (schema %d > %d)", dir, m.SchemaVersion, stats.SchemaVersion)
	}
	return &Folder{Dir: dir, Manifest: &m}, nil
}

// Sequenced is an event with its position in the stream.
type Sequenced struct {
	Seq   uint64
	Event event.Event
}

// Events reads the whole event stream in emission order. Problems that do
// not stop a replay (a missing run log, a torn last line after a crash) are
// returned as notes.
func (f *Folder) Events() ([]Sequenced, []string, error) {
	var out []Sequenced
	var notes []string
	files := []string{filepath.Join(f.Dir, EventsFile)}
	for _, r := range f.Manifest.Runs {
		if r.Status == "pending" {
			continue
		}
		p := filepath.Join(f.Dir, RunsDir, r.ID, EventsFile)
		if _, err := os.Stat(p); err != nil {
			notes = append(notes, fmt.Sprintf("run %s: no event log (%s)", r.ID, r.Status))
			continue
		}
		files = append(files, p)
	}
	for _, p := range files {
		evs, n, err := readEvents(p)
		if err != nil {
			return nil, notes, err
		}
		if n > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d unreadable line(s) skipped", p, n))
		}
		out = append(out, evs...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, notes, nil
}

func readEvents(path string) ([]Sequenced, int, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	var out []Sequenced
	bad := 0
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		seq, e, err := event.Unmarshal(sc.Bytes())
		if err != nil {
			bad++
			continue
		}
		out = append(out, Sequenced{Seq: seq, Event: e})
	}
	return out, bad, sc.Err()
}

// RunStats reads a run's stats.json.
func (f *Folder) RunStats(id string) (*stats.Run, error) {
	b, err := os.ReadFile(filepath.Join(f.Dir, RunsDir, id, StatsFile))
	if err != nil {
		return nil, err
	}
	var r stats.Run
	return &r, json.Unmarshal(b, &r)
}

// Summary reads summary.json.
func (f *Folder) Summary() (*stats.Summary, error) {
	b, err := os.ReadFile(filepath.Join(f.Dir, SummaryJSON))
	if err != nil {
		return nil, err
	}
	var s stats.Summary
	return &s, json.Unmarshal(b, &s)
}

// Recompute derives every run's statistics and the summary again from the
// raw rows and samples, to check that the folder reproduces its figures.
func (f *Folder) Recompute(th stats.Thresholds) (*stats.Summary, error) {
	var runs []*stats.Run
	complete := true
	for _, e := range f.Manifest.Runs {
		if e.Meta == nil {
			complete = false
			continue
		}
		r, err := ComputeRunFromDir(filepath.Join(f.Dir, RunsDir, e.ID), *e.Meta, th)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
		complete = complete && e.Status == string(stats.StatusDone)
	}
	s := &stats.Summary{
		CampaignID: f.Manifest.CampaignID, Name: f.Manifest.Name, Driver: f.Manifest.Driver, Target: f.Manifest.Target,
		Tool: f.Manifest.Tool + " " + f.Manifest.Version, Status: f.Manifest.Status, Reason: f.Manifest.Reason,
		Started: f.Manifest.Started, Finished: f.Manifest.Finished, Thresholds: th,
	}
	stats.BuildSummary(s, runs, complete)
	return s, nil
}
