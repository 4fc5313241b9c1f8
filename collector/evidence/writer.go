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
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/search"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/internal/names"
	"github.com/tokex-dev/tokex/internal/owner"
	"github.com/tokex-dev/tokex/internal/safefs"
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
	Status   stats.RunStatus  `json:"status"`
	Reason   string           `json:"reason,omitempty"`
	Started  time.Time        `json:"started,omitzero"`
	Finished time.Time        `json:"finished,omitzero"`
	Meta     *stats.RunMeta   `json:"meta,omitempty"`
}

// Manifest is manifest.json.
type Manifest struct {
	SchemaVersion int                    `json:"schema_version"`
	Tool          string                 `json:"tool"`
	Version       string                 `json:"version"`
	Host          string                 `json:"host"`
	GoVersion     string                 `json:"go_version"`
	CPUs          int                    `json:"cpus,omitempty"` // cores of the generating host
	CampaignID    string                 `json:"campaign_id"`
	Name          string                 `json:"name"`
	Driver        string                 `json:"driver"`
	Target        string                 `json:"target"`
	Started       time.Time              `json:"started"`
	Finished      time.Time              `json:"finished,omitzero"`
	Status        summary.CampaignStatus `json:"status"`
	Reason        string                 `json:"reason,omitempty"`
	Runs          []RunEntry             `json:"runs"`
	// Idle is the engine at rest before the first run (its samples are in
	// the campaign's resources.csv).
	Idle *summary.Idle `json:"idle,omitempty"`
	// Search is how a capacity campaign searches (nil: it runs its stages).
	Search *search.Spec `json:"search,omitempty"`
	// Owner is the seal of config.yaml by the tokex that wrote the folder
	// (internal/owner): a resume trusts the config of a folder it sealed.
	Owner string `json:"owner,omitempty"`
	// EngineProcesses: the engine processes sampled, the latest last.
	EngineProcesses []EngineProcess `json:"engine_processes,omitempty"`
	// Scaling: the engine counts a campaign over them set, and the
	// restore at its end (nil: one size, as the engines were).
	Scaling []summary.Scale `json:"scaling,omitempty"`
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

// ErrWrite marks the failure to write evidence; a campaign that meets it
// stops the current run at once (its figures could not be proven).
var ErrWrite = errors.New("evidence cannot be written")

// ErrOrder marks a step of the evidence lifecycle taken out of order (a
// run begun while another is open, ended twice, a campaign finished
// twice...): a bug of the caller, refused before anything is written.
var ErrOrder = errors.New("evidence lifecycle out of order")

// Writer writes one campaign's evidence folder: the event stream (Consume)
// and, through its Recorder, the runs, their rows and the campaign's end.
// Consume, Flush and Run.Record are safe for concurrent use. The first
// write error is kept: Failed is closed, Err returns it, later rows are not
// written.
type Writer struct {
	Dir string

	d        *safefs.Dir
	wrap     func(name string, w io.Writer) io.Writer
	mu       sync.Mutex
	man      Manifest
	seq      uint64
	top      *lineFile
	topRes   *lineFile
	topHost  *lineFile // created at the first sample between runs
	cur      *runFiles
	err      error
	failed   chan struct{}
	linebuf  []byte
	finished bool
	begun    map[string]bool // runs begun by this writer (Recorder.Begin)
	notes    []string
	final    string // a staged folder's final path
}

// Option configures a Writer.
type Option func(*Writer)

// WrapFiles passes every byte the writer writes to the file name (relative
// to the folder) through wrap: a seam for tests that need a full disk.
func WrapFiles(wrap func(name string, w io.Writer) io.Writer) Option {
	return func(w *Writer) { w.wrap = wrap }
}

// lineFile is an append-only text file behind a buffer.
type lineFile struct {
	f *os.File
	w *bufio.Writer
}

type runFiles struct {
	id     string
	reqF   *os.File
	reqGz  *gzip.Writer
	reqW   *bufio.Writer
	ev     *lineFile
	res    *lineFile
	host   *lineFile // created at the run's first host sample
	rows   int64
	closed bool
}

func newWriter(dir string, d *safefs.Dir, opts []Option) *Writer {
	w := &Writer{Dir: dir, d: d, failed: make(chan struct{})}
	for _, o := range opts {
		o(w)
	}
	return w
}

func (w *Writer) wrapped(name string, f io.Writer) io.Writer {
	if w.wrap == nil {
		return f
	}
	return w.wrap(name, f)
}

// Create starts a new evidence folder at dir, which must not exist yet.
// configYAML must already be redacted.
func Create(dir string, configYAML []byte, m Manifest, opts ...Option) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("evidence folder: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("evidence folder: %w", err)
	}
	return create(dir, configYAML, m, opts)
}

// CreateNew starts a new evidence folder under parent with a fresh campaign
// id (NewID); two campaigns started in the same millisecond get the next
// free millisecond, so ids stay unique, readable and in start order.
func CreateNew(parent, name string, now time.Time, configYAML []byte, m Manifest, opts ...Option) (*Writer, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("evidence folder: %w", err)
	}
	for i := 0; i < 1000; i++ {
		id := NewID(now.Add(time.Duration(i)*time.Millisecond), name)
		dir := filepath.Join(parent, id)
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("evidence folder: %w", err)
		}
		m.CampaignID = id
		return create(dir, configYAML, m, opts)
	}
	return nil, fmt.Errorf("evidence folder: no free campaign id under %s", parent)
}

// stagingSuffix ends the hidden name a staged folder is written under.
const stagingSuffix = ".partial"

// CreateStaged is CreateNew for a folder that must appear whole or not at
// all (an import): it is written under a hidden name (".ID.partial", marked
// with this process) and Publish renames it into place; Discard removes it.
// Staged folders of killed processes are removed first.
func CreateStaged(parent, name string, now time.Time, configYAML []byte, m Manifest, opts ...Option) (*Writer, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("evidence folder: %w", err)
	}
	_, _ = owner.Sweep(parent, ".", stagingSuffix)
	for i := 0; i < 1000; i++ {
		id := NewID(now.Add(time.Duration(i)*time.Millisecond), name)
		final := filepath.Join(parent, id)
		staging := filepath.Join(parent, "."+id+stagingSuffix)
		if _, err := os.Lstat(final); err == nil {
			continue
		}
		err := os.Mkdir(staging, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("evidence folder: %w", err)
		}
		if err := owner.Mark(staging); err != nil {
			_ = os.RemoveAll(staging)
			return nil, fmt.Errorf("evidence folder: %w", err)
		}
		m.CampaignID = id
		w, err := create(staging, configYAML, m, opts)
		if err != nil {
			_ = os.RemoveAll(staging)
			return nil, err
		}
		w.final = final
		return w, nil
	}
	return nil, fmt.Errorf("evidence folder: no free campaign id under %s", parent)
}

// Publish moves a finished staged folder to its final name (w.Dir).
func (w *Writer) Publish() error {
	if w.final == "" {
		return nil
	}
	if err := os.Remove(filepath.Join(w.Dir, owner.MarkerFile)); err != nil {
		return err
	}
	if _, err := os.Lstat(w.final); err == nil {
		return fmt.Errorf("evidence folder: %s appeared meanwhile", w.final)
	}
	if err := os.Rename(w.Dir, w.final); err != nil {
		return fmt.Errorf("evidence folder: %w", err)
	}
	w.Dir, w.final = w.final, ""
	return nil
}

// Discard removes a staged folder that will not be published.
func (w *Writer) Discard() {
	if w.final == "" {
		return
	}
	w.mu.Lock()
	w.closeRun()
	if !w.finished {
		_ = w.top.close()
		_ = w.topRes.close()
		w.closeHost(&w.topHost)
		w.finished = true
		_ = w.d.Close()
	}
	w.mu.Unlock()
	_ = os.RemoveAll(w.Dir)
}

// NewID is a campaign id: UTC start time to the millisecond, then the
// campaign's name made a file name (names.File), e.g. 20261130-154030.417-quick.
func NewID(t time.Time, name string) string {
	return t.UTC().Format("20060102-150405.000") + "-" + names.File(name, "campaign")
}

// create fills the new, empty folder dir; on failure it removes it again,
// so a campaign that could not start leaves no folder.
func create(dir string, configYAML []byte, m Manifest, opts []Option) (w *Writer, err error) {
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	if err := CheckID(m.CampaignID); err != nil {
		return nil, fmt.Errorf("evidence folder: %w", err)
	}
	d, err := safefs.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("evidence folder: %w", err)
	}
	w = newWriter(dir, d, opts)
	m.SchemaVersion = stats.SchemaVersion
	m.Status = summary.CampaignRunning
	w.man = m
	if err = w.writeFile(ConfigFile, configYAML); err == nil {
		err = w.openTop()
	}
	if err == nil {
		err = w.saveManifest()
	}
	if err != nil {
		if w.top != nil {
			_ = w.top.close()
		}
		if w.topRes != nil {
			_ = w.topRes.close()
		}
		d.Close()
		return nil, fmt.Errorf("evidence folder: %w", err)
	}
	return w, nil
}

// Resume reopens an interrupted campaign's folder for appending. It repairs
// what a kill can leave: a torn last line of the campaign's events.jsonl
// and resources.csv (removed), a resources.csv without its header, and
// temporary files of an interrupted atomic write; Notes says what it did.
func Resume(dir string, opts ...Option) (*Writer, error) {
	f, err := Open(dir)
	if err != nil {
		return nil, err
	}
	w := newWriter(dir, f.d, opts)
	w.man = *f.Manifest
	w.man.Status, w.man.Reason = summary.CampaignRunning, ""
	w.man.Finished = time.Time{}
	w.removeTemps()
	for _, name := range []string{EventsFile, ResourcesFile, HostFile} {
		n, err := w.repairTail(name)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("resume: %w", err)
		}
		if n > 0 {
			w.notes = append(w.notes, fmt.Sprintf("%s: removed a torn last line of %d bytes (tokex was stopped while writing it)", name, n))
		}
	}
	info, err := f.EachEvent(func(Sequenced) error { return nil })
	if err != nil {
		f.Close()
		return nil, err
	}
	w.seq = info.MaxSeq
	if err := w.openTop(); err != nil {
		f.Close()
		return nil, fmt.Errorf("evidence folder: %w", err)
	}
	return w, w.saveManifest()
}

// Notes are what Resume repaired.
func (w *Writer) Notes() []string { return w.notes }

// repairTail cuts name back to its last complete line.
func (w *Writer) repairTail(name string) (int64, error) {
	fh, err := w.d.OpenFile(name, os.O_RDWR)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	end := size
	buf := make([]byte, 64<<10)
	for end > 0 {
		n := int64(len(buf))
		if end < n {
			n = end
		}
		if _, err := fh.ReadAt(buf[:n], end-n); err != nil {
			return 0, err
		}
		i := int64(len(buf[:n])) - 1
		for ; i >= 0 && buf[i] != '\n'; i-- {
		}
		if i >= 0 {
			end = end - n + i + 1
			break
		}
		end -= n
	}
	if end == size {
		return 0, nil
	}
	return size - end, fh.Truncate(end)
}

// removeTemps deletes temporary files an interrupted atomic write left.
func (w *Writer) removeTemps() {
	dirs := []string{"."}
	if ents, err := w.d.ReadDir(RunsDir); err == nil {
		for _, e := range ents {
			if e.IsDir() && CheckID(e.Name()) == nil {
				dirs = append(dirs, path.Join(RunsDir, e.Name()))
			}
		}
	}
	for _, dir := range dirs {
		ents, err := w.d.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Type().IsRegular() && safefs.IsTemp(e.Name()) {
				_ = w.d.Remove(path.Join(dir, e.Name()))
			}
		}
	}
}

func (w *Writer) openTop() error {
	var err error
	if w.top, err = w.openLines(EventsFile, ""); err != nil {
		return err
	}
	w.topRes, err = w.openLines(ResourcesFile, ResourcesHeader)
	return err
}

// openLines opens name for appending; an empty file gets header first.
func (w *Writer) openLines(name, header string) (*lineFile, error) {
	f, err := w.d.Append(name)
	if err != nil {
		return nil, err
	}
	lf := &lineFile{f: f, w: bufio.NewWriter(w.wrapped(name, f))}
	if header != "" {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if st.Size() == 0 {
			_, _ = lf.w.WriteString(header + "\n")
		}
	}
	return lf, nil
}

func (lf *lineFile) close() error {
	err := lf.w.Flush()
	return errors.Join(err, lf.f.Close())
}

// Manifest returns a copy of the current manifest.
func (w *Writer) Manifest() Manifest {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.man
	m.Runs = append([]RunEntry(nil), w.man.Runs...)
	m.EngineProcesses = append([]EngineProcess(nil), w.man.EngineProcesses...)
	return m
}

// SetIdle records the engine measured at rest.
func (w *Writer) SetIdle(idle summary.Idle) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.man.Idle = &idle
	return w.saveManifestLocked()
}

// SetSearch records that the campaign is a capacity search, and how.
func (w *Writer) SetSearch(spec search.Spec) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.man.Search = &spec
	return w.saveManifestLocked()
}

// SetPlan records the planned runs (keeping entries of a resumed folder).
func (w *Writer) SetPlan(plan []event.PlannedRun) error {
	if len(plan) > stats.MaxRuns {
		return fmt.Errorf("a plan of %d runs: at most %d", len(plan), stats.MaxRuns)
	}
	for _, p := range plan {
		if err := CheckID(p.ID); err != nil {
			return err
		}
	}
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
			e = RunEntry{ID: p.ID, Status: stats.StatusPending}
		}
		e.Plan = p
		w.man.Runs = append(w.man.Runs, e)
	}
	return w.saveManifestLocked()
}

func (w *Writer) fail(err error) {
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("%w: %w", ErrWrite, err)
		close(w.failed)
	}
}

// Err is the first write error.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Failed is closed at the first write error.
func (w *Writer) Failed() <-chan struct{} { return w.failed }

// Consume is the event-bus consumer.
func (w *Writer) Consume(e event.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := e.(event.CampaignStarted); ok {
		w.man.Target = c.Target // known once the driver started (the embedded server's port)
	}
	if w.finished || w.err != nil {
		return
	}
	w.seq++
	line, err := event.Marshal(w.seq, e)
	if err == nil && len(line) >= MaxEventLine {
		err = fmt.Errorf("%d bytes, longer than a line may be", len(line))
	}
	if err != nil {
		// Recorded as a note rather than lost without a trace.
		note := event.Log{At: event.Time(e), Source: "tokex", Level: "warn",
			Message: fmt.Sprintf("a %s event could not be recorded: %v", e.Kind(), err)}
		if line, err = event.Marshal(w.seq, note); err != nil {
			note.At = time.Time{} // a time JSON cannot hold
			line, _ = event.Marshal(w.seq, note)
		}
	}
	dst := w.top
	if w.cur != nil && !w.cur.closed && e.Kind() != event.KindCampaignStarted && e.Kind() != event.KindCampaignFinished {
		dst = w.cur.ev
	}
	_, err = dst.w.Write(append(line, '\n'))
	w.fail(err)
	if r, ok := e.(event.Resource); ok {
		rf := w.topRes
		if w.cur != nil && !w.cur.closed {
			rf = w.cur.res
		}
		w.linebuf = AppendResource(w.linebuf[:0], &sample.Resource{
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

// record appends one request row to run id, if it is the open run; false
// when it is not (the row came too late, or for another run). Rows after a
// write error are not written either, but that is the error's to tell.
func (w *Writer) record(id string, r *stats.Request) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur == nil || w.cur.closed || w.cur.id != id {
		return false
	}
	if w.err != nil {
		return true
	}
	if w.cur.rows >= stats.MaxRunRows {
		w.fail(fmt.Errorf("run %s: more than %d rows, more than a reader accepts", w.cur.id, stats.MaxRunRows))
		return true
	}
	w.linebuf = AppendRequest(w.linebuf[:0], r)
	_, err := w.cur.reqW.Write(w.linebuf)
	w.fail(err)
	w.cur.rows++
	return true
}

// Flush pushes everything buffered to the files, so a write error shows
// within a flush interval and a kill loses at most that much. The runner
// calls it every second.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	return w.err
}

func (w *Writer) flushLocked() {
	if w.finished {
		return
	}
	if rf := w.cur; rf != nil && !rf.closed {
		w.fail(rf.reqW.Flush())
		w.fail(rf.reqGz.Flush())
		w.fail(rf.ev.w.Flush())
		w.fail(rf.res.w.Flush())
		if rf.host != nil {
			w.fail(rf.host.w.Flush())
		}
	}
	w.fail(w.top.w.Flush())
	w.fail(w.topRes.w.Flush())
	if w.topHost != nil {
		w.fail(w.topHost.w.Flush())
	}
}

// beginRun creates the run's folder, replacing what an aborted attempt (of
// an earlier process) left. The run must be planned, begun once, and no
// other run open (Recorder.Begin).
func (w *Writer) beginRun(p event.PlannedRun, started time.Time) error {
	if err := CheckID(p.ID); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.canBegin(p.ID); err != nil {
		return err
	}
	w.flushLocked() // a run boundary: the campaign's files are complete on disk
	if w.err != nil {
		return w.err
	}
	dir := path.Join(RunsDir, p.ID)
	if err := w.d.Mkdir(RunsDir, true); err != nil {
		return fmt.Errorf("evidence folder: %w", err)
	}
	if err := w.d.RemoveAll(dir); err != nil {
		return fmt.Errorf("evidence folder: %w", err)
	}
	if err := w.d.Mkdir(dir, false); err != nil {
		return fmt.Errorf("evidence folder: %w", err)
	}
	rf := &runFiles{id: p.ID}
	var err error
	reqName := path.Join(dir, RequestsFile)
	if rf.reqF, err = w.d.Create(reqName); err != nil {
		return fmt.Errorf("evidence folder: %w", err)
	}
	rf.reqGz, _ = gzip.NewWriterLevel(w.wrapped(reqName, rf.reqF), gzip.BestSpeed)
	rf.reqW = bufio.NewWriterSize(rf.reqGz, 1<<16)
	_, _ = rf.reqW.WriteString(RequestsHeader + "\n")
	if rf.ev, err = w.openLines(path.Join(dir, EventsFile), ""); err != nil {
		return fmt.Errorf("evidence folder: %w", err)
	}
	if rf.res, err = w.openLines(path.Join(dir, ResourcesFile), ResourcesHeader); err != nil {
		return fmt.Errorf("evidence folder: %w", err)
	}
	w.cur = rf
	if w.begun == nil {
		w.begun = map[string]bool{}
	}
	w.begun[p.ID] = true
	e := w.man.Run(p.ID)
	e.Status, e.Started, e.Finished, e.Reason, e.Meta = stats.StatusRunning, started, time.Time{}, "", nil
	if err := w.saveManifestLocked(); err != nil {
		w.closeRun() // never begun: no run stays open
		return err
	}
	return nil
}

// canBegin says why run id cannot begin now (w.mu held).
func (w *Writer) canBegin(id string) error {
	switch {
	case w.finished:
		return fmt.Errorf("%w: run %s begun after the campaign finished", ErrOrder, id)
	case w.cur != nil && !w.cur.closed:
		return fmt.Errorf("%w: run %s begun while run %s is still open", ErrOrder, id, w.cur.id)
	case w.begun[id]:
		return fmt.Errorf("%w: run %s begun twice", ErrOrder, id)
	case w.man.Run(id) == nil:
		return fmt.Errorf("%w: run %s is not in the plan", ErrOrder, id)
	}
	return nil
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
	w.fail(rf.ev.close())
	w.fail(rf.res.close())
	w.closeHost(&rf.host)
	w.fail(w.top.w.Flush())
	w.fail(w.topRes.w.Flush())
	if w.topHost != nil {
		w.fail(w.topHost.w.Flush())
	}
}

// endRun closes the open run's files, computes its statistics from them
// (never from memory: every figure must be reproducible from the folder),
// writes stats.json and updates the manifest. meta.ID must be the open run.
func (w *Writer) endRun(meta stats.RunMeta, th stats.Thresholds) (*stats.Run, error) {
	w.mu.Lock()
	if w.cur == nil || w.cur.closed || w.cur.id != meta.ID {
		w.mu.Unlock()
		return nil, fmt.Errorf("%w: run %s ended but not open (ended twice?)", ErrOrder, meta.ID)
	}
	w.closeRun()
	err := w.err
	if err != nil {
		// Best effort: the manifest says why the run has no statistics.
		if e := w.man.Run(meta.ID); e != nil {
			e.Status, e.Reason, e.Finished = stats.StatusFailed, err.Error(), time.Now()
		}
		_ = w.writeJSON(ManifestFile, &w.man)
	}
	w.mu.Unlock()
	if err != nil {
		return nil, err
	}
	f := &Folder{Dir: w.Dir, d: w.d}
	st, err := f.ComputeRun(meta, th)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.writeJSON(runFile(meta.ID, StatsFile), st); err != nil {
		w.fail(err)
		return nil, w.err
	}
	if e := w.man.Run(meta.ID); e != nil {
		e.Status, e.Reason, e.Finished = meta.Status, meta.Reason, time.Now()
		m := meta
		e.Meta = &m
	}
	return st, w.saveManifestLocked()
}

// finish records how the campaign ended (the summary's status, reason and
// end), writes summary.json and summary.md and closes the folder. No run
// may be open (Recorder.Finish).
func (w *Writer) finish(s *summary.Summary) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.canFinishLocked(); err != nil {
		return err
	}
	w.man.Status, w.man.Reason, w.man.Finished = s.Status, s.Reason, s.Finished
	w.fail(w.writeJSON(SummaryJSON, s))
	w.fail(w.writeFile(SummaryMD, []byte(doc.Campaign(s, nil).Markdown())))
	w.fail(w.top.close())
	w.fail(w.topRes.close())
	w.closeHost(&w.topHost)
	w.fail(w.saveManifestLocked())
	w.finished = true
	_ = w.d.Close()
	return w.err
}

// canFinish says why the campaign cannot finish now.
func (w *Writer) canFinish() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.canFinishLocked()
}

func (w *Writer) canFinishLocked() error {
	switch {
	case w.finished:
		return fmt.Errorf("%w: the campaign finished twice", ErrOrder)
	case w.cur != nil && !w.cur.closed:
		return fmt.Errorf("%w: the campaign finished while run %s is still open", ErrOrder, w.cur.id)
	}
	return nil
}

func (w *Writer) saveManifest() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.saveManifestLocked()
}

func (w *Writer) saveManifestLocked() error {
	err := w.writeJSON(ManifestFile, &w.man)
	w.fail(err)
	if err != nil {
		return w.err
	}
	return nil
}

// writeJSON and writeFile replace a file atomically (temp file + rename
// inside the folder): a crash or a full disk never leaves half a file.
func (w *Writer) writeJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return w.writeFile(name, append(b, '\n'))
}

func (w *Writer) writeFile(name string, data []byte) error {
	return w.d.WriteFile(name, data, func(f io.Writer) io.Writer { return w.wrapped(name, f) })
}

var errNotEvidence = errors.New("not a tokex evidence folder")
