// Package replay re-emits a saved campaign's event stream with its original
// spacing, so the TUI and the headless printer show it exactly as they did
// live.
package replay

import (
	"context"
	"fmt"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
)

// Source is an evidence folder's recorded stream. It is read from disk as
// it plays, one event at a time, so its size costs no memory.
type Source struct {
	Folder *evidence.Folder
	// Count is the number of events; Last the last one.
	Count int
	Last  event.Event
	// Notes say what is missing or odd (an aborted campaign, a lost log,
	// lines that could not be read).
	Notes []string
	each  func(func(evidence.Sequenced) error) error
}

// Load opens dir and reads its event stream once, to count it.
func Load(dir string) (*Source, error) {
	f, err := evidence.Open(dir)
	if err != nil {
		return nil, err
	}
	info, err := f.EachEvent(func(evidence.Sequenced) error { return nil })
	if err != nil {
		f.Close()
		return nil, err
	}
	if info.Count == 0 {
		f.Close()
		return nil, fmt.Errorf("%s: no events recorded", dir)
	}
	notes := info.Notes
	m := f.Manifest
	if m.Status != summary.CampaignDone {
		done := 0
		for _, r := range m.Runs {
			if r.Status == stats.StatusDone {
				done++
			}
		}
		notes = append(notes, fmt.Sprintf("campaign %s: %d of %s finished", m.Status, done, units.Count(len(m.Runs), "run")))
	}
	if _, ok := info.Last.Event.(event.CampaignFinished); !ok {
		notes = append(notes, "the event log ends before the campaign finished (tokex was killed?)")
	}
	s := &Source{Folder: f, Count: info.Count, Last: info.Last.Event, Notes: notes}
	s.each = func(fn func(evidence.Sequenced) error) error {
		_, err := f.EachEvent(fn)
		return err
	}
	return s, nil
}

// Close releases the folder.
func (s *Source) Close() error {
	if s.Folder == nil {
		return nil
	}
	return s.Folder.Close()
}

// Play emits every event; speed scales the original spacing (2 = twice as
// fast), 0 emits everything at once. It stops early when ctx ends.
func (s *Source) Play(ctx context.Context, speed float64, emit func(event.Event)) error {
	var prev time.Time
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	return s.each(func(se evidence.Sequenced) error {
		t := event.Time(se.Event)
		if speed > 0 && !prev.IsZero() && t.After(prev) {
			timer.Reset(time.Duration(float64(t.Sub(prev)) / speed))
			select {
			case <-timer.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if t.After(prev) {
			prev = t
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		emit(se.Event)
		return nil
	})
}
