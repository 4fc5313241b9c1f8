package replay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
)

func TestPlaySpacingAndSpeed(t *testing.T) {
	t0 := time.Now()
	src := fromEvents([]evidence.Sequenced{
		{Seq: 1, Event: event.Log{At: t0, Message: "a"}},
		{Seq: 2, Event: event.Log{At: t0.Add(200 * time.Millisecond), Message: "b"}},
		{Seq: 3, Event: event.Log{At: t0.Add(100 * time.Millisecond), Message: "c"}}, // out of order: no wait
		{Seq: 4, Event: event.Log{At: t0.Add(400 * time.Millisecond), Message: "d"}},
	})
	cases := []struct {
		speed    float64
		min, max time.Duration
	}{
		{0, 0, 50 * time.Millisecond},
		{1, 380 * time.Millisecond, 2 * time.Second},
		{4, 90 * time.Millisecond, time.Second},
	}
	for _, c := range cases {
		var got []string
		start := time.Now()
		if err := src.Play(context.Background(), c.speed, func(e event.Event) { got = append(got, e.(event.Log).Message) }); err != nil {
			t.Fatal(err)
		}
		d := time.Since(start)
		if len(got) != 4 || got[2] != "c" || d < c.min || d > c.max {
			t.Errorf("speed %v: %v in %s", c.speed, got, d)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := src.Play(ctx, 1, func(event.Event) {}); err == nil {
		t.Error("a cancelled replay did not stop")
	}
}

func fromEvents(evs []evidence.Sequenced) *Source {
	return &Source{Count: len(evs), each: func(fn func(evidence.Sequenced) error) error {
		for _, e := range evs {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}}
}

// TestOldFolderReadsForecast: a golden campaign written before the
// pre-flight estimate was renamed (its events.jsonl says "capacity") still
// replays it, as the forecast, and says nothing is odd.
func TestOldFolderReadsForecast(t *testing.T) {
	src, err := Load("../../testdata/campaigns/passed")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var fc []event.Forecast
	if err := src.Play(context.Background(), 0, func(e event.Event) {
		if f, ok := e.(event.Forecast); ok {
			fc = append(fc, f)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(fc) != 1 || fc[0].Estimate.SustainableRPS <= 0 || !strings.HasPrefix(fc[0].Line(), "pre-flight: generator ") {
		t.Fatalf("forecasts %+v", fc)
	}
	if len(src.Notes) != 0 {
		t.Errorf("notes %v", src.Notes)
	}
}
