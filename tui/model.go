// Package tui is tokex's terminal dashboard (bubbletea): the campaign's
// ladder, live rate/latency/CPU panels, the results table, logs and agents.
// It consumes the event stream only, so live and replayed campaigns are the
// same code path and, fed the same events, render the same screen.
package tui

import (
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/internal/termsafe"
)

// MinWidth and MinHeight are the smallest terminal the dashboard lays out in.
const (
	MinWidth  = 80
	MinHeight = 24
)

// EventMsg carries one event of the stream into the program.
type EventMsg struct{ Event event.Event }

// Options configure a dashboard.
type Options struct {
	// Live marks a running campaign: quitting asks first, then calls OnStop.
	Live   bool
	OnStop func()
	// Source is shown until the first event arrives ("replay of DIR"); it
	// is not shown after, so live and replayed screens stay identical.
	Source string
}

type runState struct {
	plan    event.PlannedRun
	state   string // pending, warmup, measuring, done, failed, aborted
	started time.Time
	stats   *stats.Run
}

type engineSeries struct {
	name   string
	series charts.Series
	mem    int64
}

type agentRow = event.AgentStatus

// Model is the dashboard.
type Model struct {
	opt    Options
	keys   KeyMap
	styles Styles
	help   help.Model
	bar    progress.Model

	width, height int

	// campaign
	campaign *event.CampaignStarted
	runs     []*runState
	byID     map[string]*runState
	current  *runState
	now      time.Time
	finished *event.CampaignFinished
	summary  *stats.Summary

	// live panels (current run)
	win       *event.Window
	p95       charts.Series
	dropped   int64
	ok, errs  int64
	engines   map[string]*engineSeries
	engineTot charts.Series
	lastTick  int64
	generator charts.Series
	host      *event.Host
	hostBusy  charts.Series
	health    stats.Live // the current run's per-sample rules
	capacity  *event.Capacity
	agents    map[int]agentRow
	logs      []event.Log
	lastWarn  *event.Log

	// UI
	showLogs, showAgents, confirm, stopping bool
}

// New returns a dashboard.
func New(opt Options) *Model {
	m := &Model{
		opt: opt, keys: DefaultKeyMap(), styles: DefaultStyles(), help: help.New(),
		bar:     progress.New(progress.WithSolidFill("#6CB6FF"), progress.WithoutPercentage()),
		byID:    map[string]*runState{},
		engines: map[string]*engineSeries{},
		agents:  map[int]agentRow{},
	}
	m.p95.Max, m.engineTot.Max, m.generator.Max, m.hostBusy.Max = 600, 600, 600, 600
	return m
}

// SetSize lays the dashboard out for a terminal of w×h.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, h }

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.SetSize(msg.Width, msg.Height)
	case EventMsg:
		m.Apply(msg.Event)
		if _, ok := msg.Event.(event.CampaignFinished); ok && m.stopping {
			return m, tea.Quit
		}
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	return m, nil
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	if m.confirm {
		switch {
		case key.Matches(msg, m.keys.Confirm):
			m.confirm, m.stopping = false, true
			if m.opt.OnStop != nil {
				m.opt.OnStop()
			}
		case key.Matches(msg, m.keys.Cancel):
			m.confirm = false
		case msg.String() == "ctrl+c":
			return tea.Quit
		}
		return nil
	}
	switch {
	case key.Matches(msg, m.keys.Quit):
		if m.stopping && msg.String() == "ctrl+c" {
			return tea.Quit // a second Ctrl-C: out at once
		}
		if m.opt.Live && m.finished == nil {
			m.confirm = true
			return nil
		}
		return tea.Quit
	case key.Matches(msg, m.keys.Logs):
		m.showLogs, m.showAgents = !m.showLogs, false
	case key.Matches(msg, m.keys.Agents):
		m.showAgents, m.showLogs = !m.showAgents, false
	case key.Matches(msg, m.keys.Help):
		m.help.ShowAll = !m.help.ShowAll
	}
	return nil
}

// Stopping reports whether the user asked to stop the campaign.
func (m *Model) Stopping() bool { return m.stopping }

// Apply folds one event into the state. Nothing after CampaignFinished is
// part of the campaign (the evidence stops there too), so the final screen
// of a live campaign and of its replay are the same.
func (m *Model) Apply(e event.Event) {
	if m.finished != nil {
		return
	}
	// Text from evidence, servers and pods is drawn, never obeyed.
	e = termsafe.Copy(e)
	if t := event.Time(e); t.After(m.now) {
		m.now = t
	}
	switch v := e.(type) {
	case event.CampaignStarted:
		m.campaign = &v
		m.runs = m.runs[:0]
		m.byID = map[string]*runState{}
		for _, p := range v.Runs {
			rs := &runState{plan: p, state: "pending"}
			m.runs = append(m.runs, rs)
			m.byID[p.ID] = rs
		}
	case event.RunStarted:
		rs := m.run(v.Run)
		rs.state, rs.started = "warmup", v.At
		if v.Run.Warmup <= 0 {
			rs.state = "measuring"
		}
		m.current = rs
		m.win, m.dropped, m.ok, m.errs = nil, 0, 0, 0
		m.p95.Reset()
		m.agents = map[int]agentRow{}
		m.health.Reset(rs.state == "measuring")
	case event.PhaseChanged:
		if rs := m.byID[v.RunID]; rs != nil && v.Phase == stats.Measured {
			rs.state = "measuring"
			if rs == m.current {
				m.health.Measuring()
			}
		}
	case event.Window:
		if m.current == nil || v.RunID != m.current.plan.ID {
			return
		}
		if v.Phase == stats.Warmup && m.current.state != "warmup" {
			return // a late warmup response: the live figures are the measured phase's
		}
		w := v
		m.win = &w
		// k6 agents mint inside the iteration, so their send lag is not
		// lateness: the run's end judges their start lag (stats.SendLagParts).
		if m.campaign == nil || !strings.HasPrefix(m.campaign.Driver, "kube") {
			m.health.Window(v.TargetRPS, v.Latency.P50, v.SendLagP99, v.Phase == stats.Measured)
		}
		if v.Phase == stats.Measured {
			m.p95.Push(v.Latency.P95)
			m.dropped += v.Dropped
			m.ok += v.OK
			m.errs += v.Errors
		}
	case event.Resource:
		m.resource(v)
	case event.Host:
		h := v
		m.host = &h
		m.hostBusy.Push(v.BusyCores * 1000)
		if m.running() {
			m.health.Host(v.At, &h.HostMetrics)
		}
	case event.Capacity:
		c := v
		m.capacity = &c
	case event.AgentStatus:
		if m.current != nil && v.RunID == m.current.plan.ID {
			m.agents[v.Agent] = v
		}
	case event.Log:
		m.logs = append(m.logs, v)
		if len(m.logs) > 500 {
			m.logs = m.logs[len(m.logs)-500:]
		}
		if v.Level == "warn" || v.Level == "error" {
			l := v
			m.lastWarn = &l
		}
	case event.RunFinished:
		rs := m.byID[v.RunID]
		if rs == nil {
			return
		}
		rs.state = string(v.Status)
		rs.stats = v.Stats
		m.rebuildSummary()
	case event.CampaignFinished:
		f := v
		m.finished = &f
		if v.Summary != nil {
			m.summary = v.Summary
		}
		if m.current != nil && (m.current.state == "warmup" || m.current.state == "measuring") {
			m.current.state = "aborted"
		}
	}
}

func (m *Model) run(p event.PlannedRun) *runState {
	rs := m.byID[p.ID]
	if rs == nil {
		rs = &runState{plan: p, state: "pending"}
		m.runs = append(m.runs, rs)
		m.byID[p.ID] = rs
	}
	return rs
}

func (m *Model) resource(v event.Resource) {
	switch v.Role {
	case "engine":
		sec := v.At.Unix()
		if m.lastTick != 0 && sec != m.lastTick {
			m.engineTot.Push(m.engineTotal())
		}
		m.lastTick = sec
		es := m.engines[v.Name]
		if es == nil {
			es = &engineSeries{name: v.Name, series: charts.Series{Max: 600}}
			m.engines[v.Name] = es
		}
		es.series.Push(v.CPUMillicores)
		es.mem = v.MemoryBytes
	case "generator":
		m.generator.Push(v.CPUMillicores)
		m.health.Generator(v.At, v.CPUMillicores/1000)
	}
}

// running reports whether a run is under way.
func (m *Model) running() bool {
	return m.current != nil && (m.current.state == "warmup" || m.current.state == "measuring")
}

// flagged reports whether a run carries a warning that invalidates its
// figures (allowed or not: the ✓/✗ says the verdict); the current run
// from its samples so far.
func (m *Model) flagged(r *runState) bool {
	if r == m.current && m.running() {
		return len(m.health.Codes()) > 0
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

func (m *Model) engineTotal() float64 {
	var t float64
	for _, e := range m.engines {
		t += e.series.Last()
	}
	return t
}

func (m *Model) engineList() []*engineSeries {
	out := make([]*engineSeries, 0, len(m.engines))
	for _, e := range m.engines {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// rebuildSummary groups the finished runs as the final summary will.
func (m *Model) rebuildSummary() {
	var runs []*stats.Run
	for _, r := range m.runs {
		if r.stats != nil {
			runs = append(runs, r.stats)
		}
	}
	s := &stats.Summary{}
	if m.campaign != nil {
		s.Thresholds = m.campaign.Thresholds
	}
	stats.BuildSummary(s, runs, false)
	m.summary = s
}
