package tui

import (
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/tokex-dev/tokex/collector/summary"
)

// headerRows and footerRows are the lines above and below the panels.
const headerRows, footerRows = 2, 2

// quitFlow is where quitting is: asking to stop a live campaign, or
// stopping it.
type quitFlow struct{ confirm, stopping bool }

// chrome is the frame around the panels: the campaign in two lines at the
// top, the status line over the keys at the bottom.
type chrome struct {
	com    *common
	source string // shown until the campaign starts
}

// header is the campaign, where it is and how long it has left: two
// lines.
func (c chrome) header(w int, q quitFlow) []string {
	s, camp := c.com.styles, c.com.camp
	if camp.started == nil {
		src := "waiting for the campaign to start…"
		if c.source != "" {
			src = c.source
		}
		return []string{s.Title.Render("tokex") + " " + s.Dim.Render(src), ""}
	}
	cs := camp.started
	l1 := s.Title.Render("tokex") + " " + s.Value.Render(cs.Name) + s.Dim.Render(" · "+cs.Driver+" · ") + cs.Target
	elapsed := camp.now.Sub(cs.At)
	var remaining time.Duration
	for _, r := range camp.runs {
		switch {
		case r.state == rowPending:
			remaining += r.plan.Total()
		case r.state.live():
			remaining += r.plan.Total() - camp.now.Sub(r.started)
		}
	}
	state := string(summary.CampaignRunning)
	if camp.finished != nil {
		state = string(camp.finished.Status)
		remaining = 0
	} else if q.stopping {
		state = campaignStopping
	}
	l2 := s.Dim.Render("campaign ") + cs.ID + s.Dim.Render(" · elapsed ") + dur(elapsed)
	if camp.finished == nil {
		l2 += s.Dim.Render(" · ETA ") + dur(remaining)
	}
	l2 += s.Dim.Render(" · ") + c.com.stateStyle(state).Render(state)
	return []string{ansi.Truncate(l1, w, "…"), ansi.Truncate(l2, w, "…")}
}

// status is the line over the keys: the question before stopping, the
// stop under way, how the campaign ended, or the latest warning.
func (c chrome) status(w int, q quitFlow) string {
	s, camp := c.com.styles, c.com.camp
	switch {
	case q.confirm:
		return s.Bad.Render("Stop the campaign? Finished runs keep their evidence; the current run is marked aborted. [y/N]")
	case q.stopping && camp.finished == nil:
		return s.Warn.Render("stopping the current run… (Ctrl-C again to quit at once)")
	case camp.finished != nil:
		msg := "campaign " + string(camp.finished.Status)
		if camp.finished.Reason != "" {
			msg += ": " + camp.finished.Reason
		}
		// A long reason is cut, never the way out.
		const hint = " — press q to exit"
		msg = ansi.Truncate(msg, max(0, w-ansi.StringWidth(hint)), "…")
		return ansi.Truncate(c.com.stateStyle(string(camp.finished.Status)).Render(msg)+s.Dim.Render(hint), w, "…")
	case camp.lastWarn != nil:
		return ansi.Truncate(s.Warn.Render(camp.lastWarn.Level+": "+camp.lastWarn.Message), w, "…")
	}
	return ""
}
