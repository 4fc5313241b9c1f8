package tui

import (
	"slices"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/search"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/internal/termsafe"
	"github.com/tokex-dev/tokex/tui/health"
)

// campaign is the event stream folded into what the dashboard shows: the
// runs and their data, the summary so far, the host, logs and warnings, a
// capacity search's state. It knows nothing of the screen; the panels read
// it and only apply writes it, so a live campaign and its replay, fed the
// same events, hold the same state.
type campaign struct {
	started  *event.CampaignStarted
	runs     []*runState
	byID     map[string]*runState
	current  *runState
	kept     []*runState // runs holding charts, oldest first (maxHistory)
	now      time.Time
	finished *event.CampaignFinished
	summary  *summary.Summary

	host     *event.Host
	health   health.Live // the current run's per-sample rules
	forecast *event.Forecast
	hostChk  *event.HostCheck // the machine before the first run
	logs     []event.Log
	coolDown string // the capacity search's latest cool-down line, until the next run
	lastWarn *event.Log
	warnings []stats.Warning // coded warnings of finished runs, as raised

	search *curve.Result // a capacity search so far (nil: not a search)
	next   float64       // the rate it tries next (0: done or unknown)

	// Versions, bumped by what changes them: the panels' caches.
	sumVer, hostVer, coolVer int
}

func newCampaign() *campaign { return &campaign{byID: map[string]*runState{}} }

// apply folds one event into the state; pinned is a run whose charts must
// be kept (the one on screen). Nothing after CampaignFinished is part of
// the campaign (the evidence stops there too), so the final screen of a
// live campaign and of its replay are the same: apply reports whether it
// took the event.
func (c *campaign) apply(e event.Event, pinned *runState) bool {
	if c.finished != nil {
		return false
	}
	// Text from evidence, servers and pods is drawn, never obeyed.
	e = termsafe.Copy(e)
	if t := event.Time(e); t.After(c.now) {
		c.now = t
	}
	switch v := e.(type) {
	case event.CampaignStarted:
		c.begin(v)
	case event.RunStarted:
		c.runStarted(v, pinned)
	case event.PhaseChanged:
		if rs := c.byID[v.RunID]; rs != nil && v.Phase == stats.Measured {
			rs.state = rowMeasuring
			if rs == c.current {
				c.health.Measuring()
			}
		}
	case event.Window:
		c.window(v)
	case event.Resource:
		c.resource(v)
	case event.Host:
		c.hostSample(v)
	case event.Forecast:
		fc := v
		c.forecast = &fc
	case event.HostCheck:
		h := v
		c.hostChk = &h
	case event.AgentStatus:
		if r := c.current; r != nil && r.data != nil && v.RunID == r.plan.ID && len(r.data.agents) < maxAgents {
			r.data.agents[v.Agent] = v
		}
	case event.Log:
		c.log(v)
	case event.RunFinished:
		c.runFinished(v)
	case event.CampaignFinished:
		c.campaignFinished(v)
	case event.Search:
		c.setSearch(v.Result, v.Next)
		c.rebuildSummary() // the probes' verdicts are the results table's
		c.sumVer++
	}
	return true
}

// maxAgents bounds the agents a run's table keeps.
const maxAgents = 1000

func (c *campaign) begin(v event.CampaignStarted) {
	c.started = &v
	c.runs, c.kept = c.runs[:0], nil
	c.search, c.next = nil, 0
	if v.Search != nil { // a capacity search from the start, before its first probe is judged
		c.setSearch(searchStart(*v.Search, len(v.Resumed) > 0))
	}
	c.byID = map[string]*runState{}
	for _, p := range v.Runs {
		rs := &runState{plan: p, state: rowPending}
		c.runs = append(c.runs, rs)
		c.byID[p.ID] = rs
	}
}

// setSearch records a capacity search's state and the rate it tries next
// (0: done).
func (c *campaign) setSearch(r curve.Result, next float64) { c.search, c.next = &r, next }

// searchStart is a search before its first probe is judged, and the rate
// it tries first (0 when a resume's probes decide it, or the policy read
// from evidence is not finite).
func searchStart(spec search.Spec, resumed bool) (curve.Result, float64) {
	if !spec.Policy.Finite() {
		return curve.Result{Status: curve.StatusRunning, Objective: spec.Objective}, 0
	}
	s := curve.NewSearch(spec.Policy, spec.Objective)
	next := s.Next().Rate
	if resumed {
		next = 0
	}
	return s.Result(), next
}

func (c *campaign) runStarted(v event.RunStarted, pinned *runState) {
	rs := c.run(v.Run)
	c.coolDown = ""
	c.coolVer++
	rs.state, rs.started = rowWarmup, v.At
	if v.Run.Warmup <= 0 {
		rs.state = rowMeasuring
	}
	c.current = rs
	rs.data = newRunData(v.At)
	rs.data.hops = hopsOf(v.Run)
	c.keep(rs, pinned)
	c.health.Reset(rs.state == rowMeasuring)
}

// keep records that rs holds charts, letting the oldest go past maxHistory
// (never the pinned run).
func (c *campaign) keep(rs, pinned *runState) {
	c.kept = append(slices.DeleteFunc(c.kept, func(r *runState) bool { return r == rs }), rs)
	for len(c.kept) > maxHistory {
		i := slices.IndexFunc(c.kept, func(r *runState) bool { return r != pinned })
		c.kept[i].data = nil
		c.kept = slices.Delete(c.kept, i, i+1)
	}
}

func (c *campaign) window(v event.Window) {
	r := c.current
	if r == nil || r.data == nil || v.RunID != r.plan.ID {
		return
	}
	if v.Phase == stats.Warmup && r.state != rowWarmup {
		return // a late warmup response: the live figures are the measured phase's
	}
	// k6 agents mint inside the iteration, so their send lag is not
	// lateness: the run's end judges their start lag (stats.SendLagParts).
	if c.started == nil || !strings.HasPrefix(c.started.Driver, "kube") {
		c.health.Window(v.TargetRPS, v.Latency.P50, v.SendLagP99, v.Phase == stats.Measured)
	}
	r.data.window(v)
}

func (c *campaign) hostSample(v event.Host) {
	h := v
	c.host = &h
	c.hostVer++
	if c.running() {
		d := c.current.data
		d.host.Push(d.sec(v.At), v.BusyCores*1000)
		d.nGen++
		c.health.Host(v.At, &h.HostMetrics)
	}
}

func (c *campaign) resource(v event.Resource) {
	if !c.running() {
		return
	}
	d := c.current.data
	switch v.Role {
	case "engine":
		d.engine(v)
	case "generator":
		d.gen.Push(d.sec(v.At), v.CPUMillicores)
		d.nGen++
		c.health.Generator(v.At, v.CPUMillicores/1000)
	}
}

// maxLogs bounds the log lines kept.
const maxLogs = 500

func (c *campaign) log(v event.Log) {
	if v.Source == event.CoolDownSource {
		c.coolDown = v.Message
		c.coolVer++
	}
	c.logs = append(c.logs, v)
	if len(c.logs) > maxLogs {
		c.logs = c.logs[len(c.logs)-maxLogs:]
	}
	if v.Level == "warn" || v.Level == "error" {
		l := v
		c.lastWarn = &l
	}
}

func (c *campaign) runFinished(v event.RunFinished) {
	rs := c.byID[v.RunID]
	if rs == nil {
		return
	}
	rs.state = rowState(v.Status)
	rs.stats = v.Stats
	c.sumVer++
	if v.Stats != nil {
		for _, w := range v.Stats.Warnings {
			if len(c.warnings) < maxWarnings {
				c.warnings = append(c.warnings, w)
			}
		}
	}
	c.rebuildSummary()
}

// maxWarnings bounds the coded warnings the errors panel keeps.
const maxWarnings = 500

func (c *campaign) campaignFinished(v event.CampaignFinished) {
	f := v
	c.finished = &f
	c.sumVer++
	if v.Summary != nil {
		c.summary = v.Summary
		if cp := v.Summary.Capacity; cp != nil { // as the search ended, also without its events
			c.setSearch(*cp, 0)
		}
	}
	if c.current != nil && c.current.state.live() {
		c.current.state = rowAborted
	}
}

func (c *campaign) run(p event.PlannedRun) *runState {
	rs := c.byID[p.ID]
	if rs == nil {
		rs = &runState{plan: p, state: rowPending}
		c.runs = append(c.runs, rs)
		c.byID[p.ID] = rs
	}
	return rs
}

func (c *campaign) indexOf(rs *runState) int { return slices.Index(c.runs, rs) }

// running reports whether a run is under way.
func (c *campaign) running() bool {
	return c.current != nil && c.current.data != nil && c.current.state.live()
}

// final is a finished run's statistics, nil while it runs.
func (c *campaign) final(r *runState) *stats.Run {
	if r == c.current && c.running() {
		return nil
	}
	return r.stats
}

// flagged reports whether a run carries a warning that invalidates its
// figures (allowed or not: the ✓/✗ says the verdict); the current run
// from its samples so far.
func (c *campaign) flagged(r *runState) bool {
	if r == c.current && c.running() {
		return len(c.health.Codes()) > 0
	}
	if r.stats == nil {
		return false
	}
	for _, w := range r.stats.Warnings {
		if w.Code.Invalidating() {
			return true
		}
	}
	return false
}

// rebuildSummary groups the finished runs as the final summary will.
func (c *campaign) rebuildSummary() {
	var runs []*stats.Run
	for _, r := range c.runs {
		if r.stats != nil {
			runs = append(runs, r.stats)
		}
	}
	s := &summary.Summary{}
	if c.started != nil {
		s.Thresholds = c.started.Thresholds
	}
	if c.search != nil { // a search judges its probes, not the thresholds; its broken ones stay out of the cost fit
		r := *c.search
		s.Capacity = &r
	}
	summary.BuildSummary(s, runs, false)
	c.summary = s
}
