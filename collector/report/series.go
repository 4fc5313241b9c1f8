// Package report renders a campaign's evidence as one self-contained HTML
// dashboard (inline CSS and SVG, no network): the article's tables, charts
// of every run on a shared time axis, per-agent details and the warnings
// that change what the numbers mean.
package report

import (
	"slices"
	"sort"

	"github.com/tokex-dev/tokex/collector/stats"
)

// second is one second of a run, computed from requests.csv.gz.
type second struct {
	t                                float64 // seconds since the run's start
	phase                            stats.Phase
	completed, answered, ok, dropped int
	mean, p50, p95, p99              float64 // ms
	durs                             []int64
}

// perSecond buckets a run's rows by completion second since start (µs);
// responses after the measured end (µs) count in its last second.
func perSecond(rows []stats.Request, startUS, endUS int64) []*second {
	by := map[int64]*second{}
	for i := range rows {
		r := &rows[i]
		end := r.ScheduledUS
		if !r.Dropped() {
			end += r.SendLagUS + r.DurationUS
		}
		if r.Phase == stats.Measured && end >= endUS && endUS > startUS {
			end = endUS - 1
		}
		sec := (end - startUS) / 1e6
		if end < startUS {
			sec = -1
		}
		s := by[sec]
		if s == nil {
			s = &second{t: float64(sec), phase: r.Phase}
			by[sec] = s
		}
		if r.Phase == stats.Measured {
			s.phase = stats.Measured
		}
		switch {
		case r.Dropped():
			s.dropped++
		case r.Outcome == "aborted":
		default:
			s.completed++
			if r.Responded() {
				s.answered++
			}
			if r.OK() {
				s.ok++
			}
			s.durs = append(s.durs, r.DurationUS)
		}
	}
	out := make([]*second, 0, len(by))
	for _, s := range by {
		if len(s.durs) > 0 {
			slices.Sort(s.durs)
			var sum float64
			for _, d := range s.durs {
				sum += float64(d)
			}
			s.mean = sum / float64(len(s.durs)) / 1000
			s.p50 = stats.Percentile(s.durs, 0.5) / 1000
			s.p95 = stats.Percentile(s.durs, 0.95) / 1000
			s.p99 = stats.Percentile(s.durs, 0.99) / 1000
			s.durs = nil
		}
		out = append(out, s)
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

func perAgent(rows []stats.Request) []agentRow {
	type acc struct {
		reqs, errs, drops int64
		durs              []int64
	}
	by := map[int]*acc{}
	for i := range rows {
		r := &rows[i]
		if r.Phase != stats.Measured || r.Outcome == "aborted" {
			continue
		}
		a := by[r.Agent]
		if a == nil {
			a = &acc{}
			by[r.Agent] = a
		}
		switch {
		case r.Dropped():
			a.drops++
		default:
			a.reqs++
			if !r.OK() {
				a.errs++
			}
			a.durs = append(a.durs, r.DurationUS)
		}
	}
	var out []agentRow
	for id, a := range by {
		slices.Sort(a.durs)
		out = append(out, agentRow{Agent: id, Requests: a.reqs, Errors: a.errs, Drops: a.drops, P95: stats.Percentile(a.durs, 0.95) / 1000})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Agent < out[j].Agent })
	return out
}
