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
)

// Source is an evidence folder's recorded stream.
type Source struct {
	Folder *evidence.Folder
	Events []evidence.Sequenced
	// Notes say what is missing or odd (an aborted campaign, a lost log).
	Notes []string
}

// Load opens dir and reads its event stream.
func Load(dir string) (*Source, error) {
	f, err := evidence.Open(dir)
	if err != nil {
		return nil, err
	}
	evs, notes, err := f.Events()
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, fmt.Errorf("%s: no events recorded", dir)
	}
	m := f.Manifest
	if m.Status != "done" {
		done := 0
		for _, r := range m.Runs {
			if r.Status == "done" {
				done++
			}
		}
		notes = append(notes, fmt.Sprintf("campaign %s: %d of %d runs finished", m.Status, done, len(m.Runs)))
	}
	if _, ok := evs[len(evs)-1].Event.(event.CampaignFinished); !ok {
		notes = append(notes, "the event log ends before the campaign finished (tokex was killed?)")
	}
	return &Source{Folder: f, Events: evs, Notes: notes}, nil
}

// Play emits every event; speed scales the original spacing (2 = twice as
// fast), 0 emits everything at once. It stops early when ctx ends.
func (s *Source) Play(ctx context.Context, speed float64, emit func(event.Event)) error {
	var prev time.Time
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for _, se := range s.Events {
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
		emit(se.Event)
	}
	return nil
}
