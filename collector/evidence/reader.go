package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/search"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/internal/lines"
	"github.com/tokex-dev/tokex/internal/safefs"
)

// Folder is an evidence folder opened for reading. Every file is read
// through safefs (no link followed, only regular files, sizes bounded) and
// every id is checked by CheckID before it becomes part of a path.
type Folder struct {
	Dir      string
	Manifest *Manifest
	d        *safefs.Dir
}

// Open checks that dir is an evidence folder and reads its manifest.
func Open(dir string) (*Folder, error) {
	d, err := safefs.Open(dir)
	if errors.Is(err, safefs.ErrRefused) {
		return nil, fmt.Errorf("%s: %w (not a directory)", dir, errNotEvidence)
	}
	if err != nil {
		return nil, err
	}
	f, err := openFolder(d)
	if err != nil {
		d.Close()
		return nil, err
	}
	return f, nil
}

func openFolder(d *safefs.Dir) (*Folder, error) {
	dir := d.Path()
	b, err := d.ReadFile(ManifestFile, maxManifestBytes)
	if errors.Is(err, fs.ErrNotExist) {
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
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", dir, ManifestFile, err)
	}
	return &Folder{Dir: dir, Manifest: &m, d: d}, nil
}

// check refuses a manifest whose ids could leave the folder, or too many runs.
func (m *Manifest) check() error {
	if err := CheckID(m.CampaignID); err != nil {
		return fmt.Errorf("campaign_id: %w", err)
	}
	if len(m.Runs) > stats.MaxRuns {
		return fmt.Errorf("refused: %d runs, at most %d are read", len(m.Runs), stats.MaxRuns)
	}
	seen := map[string]bool{}
	for _, r := range m.Runs {
		if err := CheckID(r.ID); err != nil {
			return fmt.Errorf("runs: %w", err)
		}
		if seen[r.ID] {
			return fmt.Errorf("runs: run %q listed twice", r.ID)
		}
		seen[r.ID] = true
	}
	return nil
}

// Close releases the folder.
func (f *Folder) Close() error { return f.d.Close() }

// maxConfigBytes bounds config.yaml as the config loader bounds a file.
const maxConfigBytes = 1 << 20

// ConfigYAML is the folder's config.yaml, read through the folder (no
// link followed) and bounded.
func (f *Folder) ConfigYAML() ([]byte, error) { return f.d.ReadFile(ConfigFile, maxConfigBytes) }

func runFile(id, name string) string { return path.Join(RunsDir, id, name) }

// Sequenced is an event with its position in the stream.
type Sequenced struct {
	Seq   uint64
	Event event.Event
}

// EventInfo says what reading the event stream met.
type EventInfo struct {
	Count  int
	Last   Sequenced // the last event read (zero when none)
	MaxSeq uint64    // the highest sequence number read
	// Notes say what does not stop a replay: a missing run log, lines that
	// could not be read (a torn last line after a crash, a damaged or
	// over-long line), each file's count.
	Notes []string
}

// EachEvent streams the event stream to fn in emission order, holding one
// event per file in memory: the campaign's events.jsonl merged by seq with
// the runs' logs, which follow each other in plan order. Lines that cannot
// be read are skipped and counted. fn's error stops the stream.
func (f *Folder) EachEvent(fn func(Sequenced) error) (info EventInfo, err error) {
	top, err := f.openEvents(EventsFile)
	if errors.Is(err, fs.ErrNotExist) {
		info.Notes = append(info.Notes, EventsFile+": missing")
		top = &eventSource{}
	} else if err != nil {
		return info, err
	}
	defer top.close(&info)
	runs := f.Manifest.Runs
	var cur *eventSource
	defer func() {
		if cur != nil {
			cur.close(&info)
		}
	}()
	for {
		if err := top.fill(); err != nil {
			return info, err
		}
		for cur == nil || cur.done {
			if cur != nil {
				cur.close(&info)
				cur = nil
			}
			if len(runs) == 0 {
				break
			}
			r := runs[0]
			runs = runs[1:]
			if r.Status == stats.StatusPending {
				continue
			}
			cur, err = f.openEvents(runFile(r.ID, EventsFile))
			if errors.Is(err, fs.ErrNotExist) {
				info.Notes = append(info.Notes, fmt.Sprintf("run %s: no event log (%s)", r.ID, r.Status))
				cur = nil
				continue
			}
			if err != nil {
				return info, err
			}
			if err := cur.fill(); err != nil {
				return info, err
			}
		}
		var next *eventSource
		switch {
		case !top.done && (cur == nil || top.next.Seq <= cur.next.Seq):
			next = top
		case cur != nil:
			next = cur
		default:
			return info, nil
		}
		e := next.next
		next.next, next.have = Sequenced{}, false
		if next != top {
			if err := next.fill(); err != nil {
				return info, err
			}
		}
		info.Count++
		info.Last = e
		info.MaxSeq = max(info.MaxSeq, e.Seq)
		if err := fn(e); err != nil {
			return info, err
		}
	}
}

// eventSource is one events.jsonl being read.
type eventSource struct {
	name string
	c    io.Closer
	lr   *lines.Reader
	next Sequenced
	have bool
	done bool
	bad  int
}

func (f *Folder) openEvents(name string) (*eventSource, error) {
	fh, err := f.d.Open(name)
	if err != nil {
		return nil, err
	}
	return &eventSource{name: name, c: fh, lr: lines.NewReader(fh, MaxEventLine)}, nil
}

// fill reads up to the next decodable event.
func (s *eventSource) fill() error {
	for !s.have && !s.done {
		if s.lr == nil {
			s.done = true
			return nil
		}
		b, err := s.lr.Next()
		if err == io.EOF {
			s.done = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if len(b) == 0 {
			continue
		}
		seq, e, err := event.Unmarshal(b)
		if err != nil {
			s.bad++
			continue
		}
		s.next, s.have = Sequenced{Seq: seq, Event: e}, true
	}
	return nil
}

func (s *eventSource) close(info *EventInfo) {
	if s.c == nil {
		return
	}
	s.c.Close()
	s.c = nil
	if s.lr == nil {
		return
	}
	if n := s.bad + s.lr.Long; n > 0 {
		note := fmt.Sprintf("%s: %d unreadable line(s) skipped", s.name, n)
		if s.lr.Long > 0 {
			note += fmt.Sprintf(" (%d longer than %d MiB)", s.lr.Long, MaxEventLine>>20)
		}
		info.Notes = append(info.Notes, note)
	}
}

// RunStats reads a run's stats.json.
func (f *Folder) RunStats(id string) (*stats.Run, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	b, err := f.d.ReadFile(runFile(id, StatsFile), maxStatsBytes)
	if err != nil {
		return nil, err
	}
	var r stats.Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", f.d.Join(runFile(id, StatsFile)), err)
	}
	if r.ID != id {
		return nil, fmt.Errorf("%s: holds run %q", f.d.Join(runFile(id, StatsFile)), clip(r.ID))
	}
	return &r, nil
}

// Summary reads summary.json; a missing one is an error that matches
// fs.ErrNotExist (the campaign did not finish).
func (f *Folder) Summary() (*summary.Summary, error) {
	b, err := f.d.ReadFile(SummaryJSON, maxSummaryBytes)
	if err != nil {
		return nil, err
	}
	var s summary.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", f.d.Join(SummaryJSON), err)
	}
	if err := checkSummary(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", f.d.Join(SummaryJSON), err)
	}
	return &s, nil
}

// checkSummary refuses ids that could leave the folder and more runs than
// a plan can have; it drops null entries.
func checkSummary(s *summary.Summary) error {
	n := 0
	var err error
	s.Stages, err = checkStages(s.Stages, &n)
	if err == nil {
		s.Variants, err = checkStages(s.Variants, &n)
	}
	if err != nil {
		return err
	}
	if s.Sanity != nil {
		if err := CheckID(s.Sanity.ID); err != nil {
			return err
		}
	}
	if n > 2*stats.MaxRuns {
		return fmt.Errorf("refused: more than %d runs", stats.MaxRuns)
	}
	return nil
}

// checkStages checks a summary's stages (or variants), dropping null
// entries, and adds their runs and stages to n.
func checkStages(in []*summary.Stage, n *int) ([]*summary.Stage, error) {
	stages := in[:0]
	for _, st := range in {
		if st == nil {
			continue
		}
		runs := st.Runs[:0]
		for _, r := range st.Runs {
			if r == nil {
				continue
			}
			if err := CheckID(r.ID); err != nil {
				return nil, err
			}
			runs = append(runs, r)
		}
		st.Runs = runs
		if st.ReportedRun != "" {
			if err := CheckID(st.ReportedRun); err != nil {
				return nil, err
			}
		}
		*n += len(st.Runs) + 1
		stages = append(stages, st)
	}
	return stages, nil
}

// Requests streams a run's requests.csv.gz to fn (see RowInfo for a
// truncated file).
func (f *Folder) Requests(id string, fn func(*stats.Request)) (RowInfo, error) {
	if err := CheckID(id); err != nil {
		return RowInfo{}, err
	}
	name := runFile(id, RequestsFile)
	fh, err := f.d.Open(name)
	if err != nil {
		return RowInfo{}, err
	}
	defer fh.Close()
	return readRequests(f.d.Join(name), fh, fn)
}

// Resources reads a run's resources.csv; a missing file is no samples. A
// last line cut by a crash is dropped, and said in note.
func (f *Folder) Resources(id string) ([]sample.Resource, string, error) {
	if err := CheckID(id); err != nil {
		return nil, "", err
	}
	return readSamples(f, runFile(id, ResourcesFile), ResourcesHeader, parseResource)
}

// EachResource streams a run's resources.csv to fn, one sample at a time
// (the sample is not kept: fn copies what it needs); a missing file is no
// samples, a torn last line is said in note. Samples handed to fn before
// an error stay handed.
func (f *Folder) EachResource(id string, fn func(*sample.Resource)) (note string, err error) {
	if err := CheckID(id); err != nil {
		return "", err
	}
	return eachSampleOf(f, runFile(id, ResourcesFile), ResourcesHeader, parseResource, fn)
}

// ComputeRun recomputes a run's statistics from its folder, streaming the
// rows and samples (memory bounded whatever the files hold); a truncated
// file becomes a warning of the run.
func (f *Folder) ComputeRun(meta stats.RunMeta, th stats.Thresholds) (*stats.Run, error) {
	t := stats.NewTally(meta)
	info, err := f.Requests(meta.ID, t.Add)
	if err != nil {
		return nil, err
	}
	note, err := f.EachResource(meta.ID, t.AddResource)
	if err != nil {
		return nil, err
	}
	if t.NeedsResourcesAgain() {
		if _, err := f.EachResource(meta.ID, t.AddResourceAgain); err != nil {
			return nil, err
		}
	}
	hostNote, err := f.EachHost(meta.ID, t.AddHost)
	if err != nil {
		return nil, err
	}
	meta.Warnings = append([]stats.Warning(nil), meta.Warnings...)
	for _, n := range []string{info.Note(), note, hostNote} {
		if n != "" {
			meta.Warnings = append(meta.Warnings, stats.Warn(stats.WarnIncompleteEvidence, meta.ID, n))
		}
	}
	return t.Run(meta, th), nil
}

// Recompute derives every run's statistics and the summary again from the
// raw rows and samples, to check that the folder reproduces its figures.
func (f *Folder) Recompute(th stats.Thresholds) (*summary.Summary, error) {
	var runs []*stats.Run
	complete := true
	for _, e := range f.Manifest.Runs {
		if e.Meta == nil {
			complete = false
			continue
		}
		meta := *e.Meta
		meta.ID = e.ID
		r, err := f.ComputeRun(meta, th)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
		complete = complete && e.Status == stats.StatusDone
	}
	s := &summary.Summary{
		CampaignID: f.Manifest.CampaignID, Name: f.Manifest.Name, Driver: f.Manifest.Driver, Target: f.Manifest.Target,
		Tool: f.Manifest.Tool + " " + f.Manifest.Version, Status: f.Manifest.Status, Reason: f.Manifest.Reason,
		Started: f.Manifest.Started, Finished: f.Manifest.Finished, Thresholds: th, Idle: f.Manifest.Idle,
	}
	s.Scales = f.Manifest.Scaling
	if f.Manifest.Search != nil {
		s.Capacity, s.Capacities = search.Replays(*f.Manifest.Search, runs)
	}
	summary.BuildSummary(s, runs, complete)
	return s, nil
}
