package evidence

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
)

// Recorder is the one way to write a campaign's runs and its end into an
// evidence folder, each step announced on the event stream in the order
// the folder's readers rely on:
//
//	Begin      the run's folder, then RunStarted (into the run's events)
//	Run.Record the run's rows, while it is open
//	Run.End    its statistics computed from the folder, then RunFinished
//	Finish     CampaignFinished, then summary.json, summary.md and the
//	           manifest's status, reason and end, from the summary
//
// A step out of order is refused with ErrOrder before anything is written:
// a run begun while another is open, begun twice or not planned, a run
// ended twice, anything after Finish, a Finish while a run is open or
// without a final status. A row recorded on an ended Run is not written
// (its statistics are computed already): the next step logs how many came.
//
// emit must deliver to the Writer's Consume (the bus the writer consumes,
// or Consume itself), or the events never reach the folder.
type Recorder struct {
	w    *Writer
	emit event.Consumer

	mu    sync.Mutex
	ended []*Run // runs whose late rows are not told yet
}

// NewRecorder records into w, announcing through emit (nil: w.Consume).
func NewRecorder(w *Writer, emit event.Consumer) *Recorder {
	if emit == nil {
		emit = w.Consume
	}
	return &Recorder{w: w, emit: emit}
}

// Run is an open run: its rows go to its own folder only, never to a run
// begun after it.
type Run struct {
	rec   *Recorder
	plan  event.PlannedRun
	ended atomic.Bool
	late  atomic.Int64 // rows recorded after End
	told  int64        // late rows already logged (rec.mu)
}

// Begin creates the run's folder (replacing what an interrupted attempt
// left) and announces it at at.
func (r *Recorder) Begin(p event.PlannedRun, at time.Time) (*Run, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tellLate(at)
	if err := r.w.beginRun(p, at); err != nil {
		return nil, err
	}
	r.emit(event.RunStarted{At: at, Run: p})
	return &Run{rec: r, plan: p}, nil
}

// ID is the run's id.
func (run *Run) ID() string { return run.plan.ID }

// Record appends one request row to the run. Safe for concurrent use.
func (run *Run) Record(q *stats.Request) {
	if run.ended.Load() || !run.rec.w.record(run.plan.ID, q) {
		run.late.Add(1)
	}
}

// End closes the run, computes its statistics from its folder, records
// them with meta (whose ID, if set, must be the run's) and announces the
// end at at. notes are caveats the summary and the announcement carry but
// stats.json does not (an import's remarks on its input). A run whose
// statistics cannot be computed is announced failed with the error.
func (run *Run) End(at time.Time, meta stats.RunMeta, th stats.Thresholds, notes ...stats.Warning) (*stats.Run, error) {
	r := run.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	if meta.ID == "" {
		meta.ID = run.plan.ID
	}
	if meta.ID != run.plan.ID {
		return nil, fmt.Errorf("%w: run %s ended with the statistics of run %s", ErrOrder, run.plan.ID, meta.ID)
	}
	if run.ended.Load() {
		return nil, fmt.Errorf("%w: run %s ended twice", ErrOrder, run.plan.ID)
	}
	st, err := r.w.endRun(meta, th)
	if errors.Is(err, ErrOrder) {
		return nil, err
	}
	run.ended.Store(true)
	r.ended = append(r.ended, run)
	if err != nil {
		r.emit(event.RunFinished{At: at, RunID: run.plan.ID, Status: stats.StatusFailed, Reason: err.Error()})
		return nil, err
	}
	st.Warnings = append(st.Warnings, notes...)
	r.emit(event.RunFinished{At: at, RunID: run.plan.ID, Status: st.Status, Reason: meta.Reason, Stats: st})
	return st, nil
}

// Finish announces the campaign's end and closes the folder; the status,
// reason and end time recorded are the summary's, so the manifest, the
// summary and the announcement cannot disagree.
func (r *Recorder) Finish(s *summary.Summary) error {
	if s == nil {
		return fmt.Errorf("%w: a campaign finished without a summary", ErrOrder)
	}
	switch s.Status {
	case summary.CampaignDone, summary.CampaignAborted, summary.CampaignFailed:
	default:
		return fmt.Errorf("%w: a campaign finished with status %q (done, aborted or failed)", ErrOrder, s.Status)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.w.canFinish(); err != nil {
		return err
	}
	r.tellLate(s.Finished)
	r.emit(event.CampaignFinished{At: s.Finished, Status: s.Status, Reason: s.Reason, Summary: s})
	return r.w.finish(s)
}

// tellLate logs the rows that came after their run ended, once (r.mu held).
func (r *Recorder) tellLate(at time.Time) {
	for _, run := range r.ended {
		if n := run.late.Load(); n > run.told {
			r.emit(event.Log{At: at, Source: "tokex", Level: "warn", Message: fmt.Sprintf(
				"run %s: %d row(s) came after the run ended and are not in its evidence", run.plan.ID, n-run.told)})
			run.told = n
		}
	}
}
