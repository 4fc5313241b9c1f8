// Package report renders a campaign's evidence as one self-contained HTML
// dashboard (inline CSS and SVG, no network): the article's tables, charts
// of every run on a shared time axis, per-agent details and the warnings
// that change what the numbers mean.
package report

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/table"
	"github.com/tokex-dev/tokex/collector/units"
)

// Bounds of what one run's charts hold, whatever its rows claim.
const (
	lateSeconds = 600       // completions charted after the run's end
	maxSeconds  = 7 * 86400 // seconds charted at most
	maxAgents   = 1000      // agents in the per-agent table (the config's limit)
	maxSeries   = 200       // resource lines (processes, pods, nodes) per run
)

// second is one second of a run, computed from requests.csv.gz.
type second struct {
	t                                float64 // seconds since the run's start
	completed, answered, ok, dropped int64
	mean, p50, p95, p99              float64 // ms
	sum                              float64
	durs                             stats.Samples
}

// agentAcc is one agent's measured rows.
type agentAcc struct {
	reqs, errs, drops int64
	durs              stats.Samples
}

// series streams a run's rows into per-second and per-agent figures,
// keeping one duration per row (4 bytes), never the rows.
type series struct {
	startUS, endUS int64 // the run's start and measured end
	last           int64 // last second charted
	secs           map[int64]*second
	agents         map[int]*agentAcc
	// outside counts rows outside the run's time span; extraAgents rows of
	// agents beyond maxAgents. Neither is charted.
	outside, extraAgents int64
}

func newSeries(startUS, endUS int64) *series {
	total := float64(endUS-startUS) / 1e6
	last := int64(min(max(total, 0)+lateSeconds, maxSeconds))
	return &series{startUS: startUS, endUS: endUS, last: last, secs: map[int64]*second{}, agents: map[int]*agentAcc{}}
}

// add files one row: per second by completion time (dropped arrivals by
// their scheduled time; measured responses after the measured end in its
// last second), per agent for the measured phase.
func (s *series) add(r *stats.Request) {
	end := r.ScheduledUS
	if !r.Dropped() {
		end += r.SendLagUS + r.DurationUS
	}
	if r.Phase == stats.Measured && end >= s.endUS && s.endUS > s.startUS {
		end = s.endUS - 1
	}
	sec := (end - s.startUS) / 1e6
	if end < s.startUS || sec > s.last {
		s.outside++
	} else {
		b := s.secs[sec]
		if b == nil {
			b = &second{t: float64(sec)}
			s.secs[sec] = b
		}
		switch {
		case r.Dropped():
			b.dropped += r.Arrivals()
		case r.Aborted():
		default:
			b.completed++
			if r.Responded() {
				b.answered++
			}
			if r.OK() {
				b.ok++
			}
			b.sum += float64(r.DurationUS)
			b.durs.Add(r.DurationUS)
		}
	}
	if r.Phase != stats.Measured || r.Aborted() {
		return
	}
	a := s.agents[r.Agent]
	if a == nil {
		if len(s.agents) >= maxAgents {
			s.extraAgents++
			return
		}
		a = &agentAcc{}
		s.agents[r.Agent] = a
	}
	if r.Dropped() {
		a.drops += r.Arrivals()
		return
	}
	a.reqs++
	if !r.OK() {
		a.errs++
	}
	a.durs.Add(r.DurationUS)
}

// seconds returns the per-second figures in time order.
func (s *series) seconds() []*second {
	out := make([]*second, 0, len(s.secs))
	for _, b := range s.secs {
		if n := b.durs.Len(); n > 0 {
			l := b.durs.Summarize()
			b.mean, b.p50, b.p95, b.p99 = b.sum/float64(n)/1000, l.P50, l.P95, l.P99
			b.durs = stats.Samples{}
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].t < out[j].t })
	return out
}

// agentRow is the per-agent detail of a run (measured phase).
type agentRow struct {
	Agent                   int
	Requests, Errors, Drops int64
	P95                     float64
}

// AgentTable is the run's per-agent details.
func (rv RunView) AgentTable() table.Table {
	t := table.New("agent", "requests", "errors", "dropped", "p95")
	t.Class = "agents"
	for _, a := range rv.Agents {
		t.Add(strconv.Itoa(a.Agent), units.Thousands(a.Requests), units.Thousands(a.Errors), units.Thousands(a.Drops), fmt.Sprintf("%.2f ms", a.P95))
	}
	return t
}

func (s *series) agentRows() []agentRow {
	var out []agentRow
	for id, a := range s.agents {
		out = append(out, agentRow{Agent: id, Requests: a.reqs, Errors: a.errs, Drops: a.drops, P95: a.durs.Summarize().P95})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Agent < out[j].Agent })
	return out
}

// notes say what the charts leave out.
func (s *series) notes(id string) []string {
	var out []string
	if s.outside > 0 {
		out = append(out, fmt.Sprintf("%s: %s rows fall outside the run's time span and are not charted", id, units.Thousands(s.outside)))
	}
	if s.extraAgents > 0 {
		out = append(out, fmt.Sprintf("%s: %s rows of agents beyond the first %d are not in the per-agent table", id, units.Thousands(s.extraAgents), maxAgents))
	}
	return out
}
