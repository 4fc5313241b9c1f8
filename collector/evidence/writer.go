// Package evidence is the evidence folder: the contract every part of tokex
// reads. The writer consumes the event stream and the per-request rows; the
// reader serves report, replay and resume.
package evidence

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

// File names inside an evidence folder.
const (
	ManifestFile  = "manifest.json"
	ConfigFile    = "config.yaml"
	EventsFile    = "events.jsonl"
	ResourcesFile = "resources.csv"
	RequestsFile  = "requests.csv.gz"
	StatsFile     = "stats.json"
	SummaryJSON   = "summary.json"
	SummaryMD     = "summary.md"
	RunsDir       = "runs"
)

// RunEntry is a run's line in the manifest.
type RunEntry struct {
	ID       string           `json:"id"`
	Plan     event.PlannedRun `json:"plan"`
	Status   string           `json:"status"` // pending, running, done, aborted, failed
	Reason   string           `json:"reason,omitempty"`
	Started  time.Time        `json:"started,omitzero"`
	Finished time.Time        `json:"finished,omitzero"`
	Meta     *stats.RunMeta   `json:"meta,omitempty"`
}

// Manifest is manifest.json.
type Manifest struct {
	SchemaVersion int        `json:"schema_version"`
	Tool          string     `json:"tool"`
	Version       string     `json:"version"`
	Host          string     `json:"host"`
	GoVersion     string     `json:"go_version"`
	CPUs          int        `json:"cpus,omitempty"` // cores of the generating host
	CampaignID    string     `json:"campaign_id"`
	Name          string     `json:"name"`
	Driver        string     `json:"driver"`
	Target        string     `json:"target"`
	Started       time.Time  `json:"started"`
	Finished      time.Time  `json:"finished,omitzero"`
	Status        string     `json:"status"` // running, done, aborted, failed
	Reason        string     `json:"reason,omitempty"`
	Runs          []RunEntry `json:"runs"`
}

// Run returns the manifest entry of id.
func (m *Manifest) Run(id string) *RunEntry {
	for i := range m.Runs {
		if m.Runs[i].ID == id {
			return &m.Runs[i]
		}
	}
	return nil
}

// Writer writes one campaign's evidence folder. Consume and Record are safe
// for concurrent use; the first write error is kept and returned by EndRun.
type Writer struct {
	Dir string

	mu       sync.Mutex
	man      Manifest
	seq      uint64
	top      *bufio.Writer
	topFile  *os.File
	topRes   *resFile
	topHost  *resFile
	cur      *runFiles
	err      error
	linebuf  []byte
	finished bool
}

type resFile struct {
	f *os.File
	w *bufio.Writer
}

type runFiles struct {
	id     string
	dir    string
	reqF   *os.File
	reqGz  *gzip.Writer
	reqW   *bufio.Writer
	evF    *os.File
	evW    *bufio.Writer
	res    *resFile
	host   *resFile
	rows   int64
	closed bool
}

// Create starts a new evidence folder at dir, which must not exist yet.
// configYAML must already be redacted.
func Create(dir string, configYAML []byte, m Manifest) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("evidence folder: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("evidence folder: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), configYAML, 0o644); err != nil {
		return nil, fmt.Errorf("evidence folder: %w", err)
	}
	m.SchemaVersion = stats.SchemaVersion
	m.Status = "running"
	w := &Writer{Dir: dir, man: m}
	if err := w.openTop(); err != nil {
		return nil, err
	}
	return w, w.saveManifest()
}

// Resume reopens an interrupted campaign's folder for appending.
func Resume(dir string) (*Writer, error) {
	f, err := Open(dir)
	if err != nil {
		return nil, err
	}
	w := &Writer{Dir: dir, man: *f.Manifest}
	w.man.Status = "running"
	w.man.Finished = time.Time{}
	evs, _, err := f.Events()
	if err != nil {
		return nil, err
	}
	if n := len(evs); n > 0 {
		w.seq = evs[n-1].Seq
	}
	if err := w.openTop(); err != nil {
		return nil, err
	}
	return w, w.saveManifest()
}

func (w *Writer) openTop() error {
	f, err := os.OpenFile(filepath.Join(w.Dir, EventsFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("evidence folder: %w", err)
	}
	w.topFile, w.top = f, bufio.NewWriter(f)
	w.topRes, err = openRes(filepath.Join(w.Dir, ResourcesFile))
	return err
}

func openRes(path string) (*resFile, error) {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("evidence folder: %w", err)
	}
	r := &resFile{f: f, w: bufio.NewWriter(f)}
	if statErr != nil {
		_, _ = r.w.WriteString(ResourcesHeader + "\n")
	}
	return r, nil
}

// Manifest returns a copy of the current manifest.
func (w *Writer) Manifest() Manifest {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.man
	m.Runs = append([]RunEntry(nil), w.man.Runs...)
	return m
}

// SetPlan records the planned runs (keeping entries of a resumed folder).
func (w *Writer) SetPlan(plan []event.PlannedRun) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := map[string]RunEntry{}
	for _, r := range w.man.Runs {
		old[r.ID] = r
	}
	w.man.Runs = w.man.Runs[:0]
	for _, p := range plan {
		e, ok := old[p.ID]
		if !ok {
			e = RunEntry{ID: p.ID, Status: "pending"}
		}
		e.Plan = p
		w.man.Runs = append(w.man.Runs, e)
	}
	return w.saveManifestLocked()
}

func (w *Writer) fail(err error) {
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("writing evidence: %w", err)
	}
}

// Err is the first write error.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Consume is the event-bus consumer.
func (w *Writer) Consume(e event.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := e.(event.CampaignStarted); ok {
		w.man.Target = c.Target // known once the driver started (the embedded server's port)
	}
	if w.finished {
		return
	}
	w.seq++
	line, err := event.Marshal(w.seq, e)
	if err != nil {
		w.fail(err)
		return
	}
	dst := w.top
	if w.cur != nil && !w.cur.closed && e.Kind() != event.KindCampaignStarted && e.Kind() != event.KindCampaignFinished {
		dst = w.cur.evW
	}
	_, err = dst.Write(append(line, '\n'))
	w.fail(err)
	if r, ok := e.(event.Resource); ok {
		rf := w.topRes
		if w.cur != nil && !w.cur.closed {
			rf = w.cur.res
		}
		w.linebuf = AppendResource(w.linebuf[:0], &stats.ResourceSample{
			AtUS: r.At.UnixMicro(), Kind: r.Role, Name: r.Name, CPUMillicores: r.CPUMillicores,
			MemoryBytes: r.MemoryBytes, CPUSecondsTotal: r.CPUSecondsTotal, Source: r.Source,
		})
		_, err = rf.w.Write(w.linebuf)
		w.fail(err)
	}
	if h, ok := e.(event.Host); ok {
		w.consumeHost(h)
	}
}

// Record appends one request row to the current run.
func (w *Writer) Record(r *stats.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur == nil || w.cur.closed || w.err != nil {
		return
	}
	w.linebuf = AppendRequest(w.linebuf[:0], r)
	_, err := w.cur.reqW.Write(w.linebuf)
	w.fail(err)
	w.cur.rows++
}

// BeginRun creates the run's folder, replacing what an aborted attempt left.
func (w *Writer) BeginRun(p event.PlannedRun, started time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	dir := filepath.Join(w.Dir, RunsDir, p.ID)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("evidence folder: %w", err)
	}
	rf := &runFiles{id: p.ID, dir: dir}
	var err error
	if rf.reqF, err = os.Create(filepath.Join(dir, RequestsFile)); err != nil {
		return fmt.Errorf("evidence folder: %w", err)
	}
	rf.reqGz, _ = gzip.NewWriterLevel(rf.reqF, gzip.BestSpeed)
	rf.reqW = bufio.NewWriterSize(rf.reqGz, 1<<16)
	_, _ = rf.reqW.WriteString(RequestsHeader + "\n")
	if rf.evF, err = os.Create(filepath.Join(dir, EventsFile)); err != nil {
		return fmt.Errorf("evidence folder: %w", err)
	}
	rf.evW = bufio.NewWriter(rf.evF)
	if rf.res, err = openRes(filepath.Join(dir, ResourcesFile)); err != nil {
		return err
	}
	w.cur = rf
	if e := w.man.Run(p.ID); e != nil {
		e.Status, e.Started, e.Finished, e.Reason, e.Meta = "running", started, time.Time{}, "", nil
	}
	return w.saveManifestLocked()
}

// closeRun flushes and closes the current run's files.
func (w *Writer) closeRun() {
	rf := w.cur
	if rf == nil || rf.closed {
		return
	}
	rf.closed = true
	w.fail(rf.reqW.Flush())
	w.fail(rf.reqGz.Close())
	w.fail(rf.reqF.Sync())
	w.fail(rf.reqF.Close())
	w.fail(rf.evW.Flush())
	w.fail(rf.evF.Close())
	w.fail(rf.res.w.Flush())
	w.fail(rf.res.f.Close())
	w.closeHost(&rf.host)
}

// EndRun closes the run's files, computes its statistics from them (never
// from memory: every figure must be reproducible from the folder), writes
// stats.json and updates the manifest.
func (w *Writer) EndRun(meta stats.RunMeta, th stats.Thresholds) (*stats.Run, error) {
	w.mu.Lock()
	w.closeRun()
	err := w.err
	w.mu.Unlock()
	if err != nil {
		return nil, err
	}
	st, err := ComputeRunFromDir(filepath.Join(w.Dir, RunsDir, meta.ID), meta, th)
	if err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(w.Dir, RunsDir, meta.ID, StatsFile), st); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.man.Run(meta.ID); e != nil {
		e.Status, e.Reason, e.Finished = string(meta.Status), meta.Reason, time.Now()
		m := meta
		e.Meta = &m
	}
	return st, w.saveManifestLocked()
}

// ComputeRunFromDir recomputes a run's statistics from its folder.
func ComputeRunFromDir(dir string, meta stats.RunMeta, th stats.Thresholds) (*stats.Run, error) {
	reqs, err := ReadRequests(filepath.Join(dir, RequestsFile))
	if err != nil {
		return nil, err
	}
	res, err := ReadResources(filepath.Join(dir, ResourcesFile))
	if err != nil {
		return nil, err
	}
	host, err := ReadHost(filepath.Join(dir, HostFile))
	if err != nil {
		return nil, err
	}
	return stats.ComputeRun(meta, reqs, res, th, host...), nil
}

// Finish writes summary.json and summary.md and closes the folder.
func (w *Writer) Finish(s *stats.Summary) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closeRun()
	w.man.Status, w.man.Reason, w.man.Finished = s.Status, "", s.Finished
	if s != nil {
		w.fail(writeJSON(filepath.Join(w.Dir, SummaryJSON), s))
		w.fail(os.WriteFile(filepath.Join(w.Dir, SummaryMD), []byte(s.Markdown()), 0o644))
	}
	w.fail(w.top.Flush())
	w.fail(w.topFile.Close())
	w.fail(w.topRes.w.Flush())
	w.fail(w.topRes.f.Close())
	w.closeHost(&w.topHost)
	w.fail(w.saveManifestLocked())
	w.finished = true
	return w.err
}

// SetStatus records the campaign's status and reason in the manifest.
func (w *Writer) SetStatus(status, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.man.Status, w.man.Reason = status, reason
}

func (w *Writer) saveManifest() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.saveManifestLocked()
}

func (w *Writer) saveManifestLocked() error {
	err := writeJSON(filepath.Join(w.Dir, ManifestFile), &w.man)
	w.fail(err)
	return err
}

// writeJSON writes atomically (temp file + rename) so a crash never leaves
// half a manifest.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

var errNotEvidence = errors.New("not a tokex evidence folder")
