// Package tui is tokex's terminal dashboard (bubbletea): the campaign's
// ladder, live rate/latency/CPU panels, the results table, logs and agents.
// It consumes the event stream only, so live and replayed campaigns are the
// same code path and, fed the same events, render the same screen.
package tui

import (
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/curve"
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

// rowState is where a run of the ladder is: pending, in its warmup or its
// measured phase, then how it ended (its stats.RunStatus).
type rowState string

const (
	rowPending   = rowState(stats.StatusPending)
	rowWarmup    = rowState("warmup")
	rowMeasuring = rowState("measuring")
	rowDone      = rowState(stats.StatusDone)
	rowFailed    = rowState(stats.StatusFailed)
	rowAborted   = rowState(stats.StatusAborted)
)

// live reports a run under way.
func (s rowState) live() bool { return s == rowWarmup || s == rowMeasuring }

type runState struct {
	plan    event.PlannedRun
	state   rowState
	started time.Time
	stats   *stats.Run
	data    *runData // nil before it starts and once history lets it go
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
	kept     []*runState // runs holding charts, oldest first (maxHistory)
	now      time.Time
	finished *event.CampaignFinished
	summary  *stats.Summary

	host     *event.Host
	hostBusy charts.Series
	health   stats.Live // the current run's per-sample rules
	capacity *event.Capacity
	logs     []event.Log
	coolDown string // the capacity search's latest cool-down line, until the next run
	lastWarn *event.Log
	warnings []stats.Warning  // coded warnings of finished runs, as raised
	curve    stats.CurveModel // a capacity search's bracket and probes

	// UI
	showLogs, showAgents, confirm, stopping bool
	focus                                   panel
	cursor                                  int        // ladder row under the cursor
	ladderFirst                             int        // the first run the ladder drew
	selected                                *runState  // a finished run shown instead of the live one
	zoom                                    bool       // the focused chart fills the chart area
	errScroll                               int        // first line of the errors panel
	zones                                   []zone     // where the last frame drew each panel
	cache                                   panelCache // chart panels as last drawn
	sumVer, hostVer                         int        // bumped by results and host samples
}

// New returns a dashboard.
func New(opt Options) *Model {
	h := help.New()
	h.ShortSeparator = "  " // every key fits in 80 columns
	m := &Model{
		opt: opt, keys: DefaultKeyMap(), styles: DefaultStyles(), help: h,
		bar:  newBar(),
		byID: map[string]*runState{},
	}
	m.hostBusy.Max = 600
	return m
}

// newBar is the progress bar in the current run's colour for this
// terminal's background, in the colour profile lipgloss uses (none under
// NO_COLOR).
func newBar() progress.Model {
	fill := "#005FAF"
	if lipgloss.HasDarkBackground() {
		fill = "#6CB6FF"
	}
	return progress.New(progress.WithSolidFill(fill), progress.WithoutPercentage(), progress.WithColorProfile(lipgloss.ColorProfile()))
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
	case eventsMsg:
		for _, e := range msg {
			m.Apply(e)
			if _, ok := e.(event.CampaignFinished); ok && m.stopping {
				return m, tea.Quit
			}
		}
	case tea.KeyMsg:
		return m, m.key(msg)
	case tea.MouseMsg:
		m.mouse(msg)
	}
	return m, nil
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	if m.confirm {
		return m.confirmKey(msg)
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
	default:
		m.navigate(msg)
	}
	return nil
}

func (m *Model) confirmKey(msg tea.KeyMsg) tea.Cmd {
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
		m.started(v)
	case event.RunStarted:
		m.runStarted(v)
	case event.PhaseChanged:
		if rs := m.byID[v.RunID]; rs != nil && v.Phase == stats.Measured {
			rs.state = rowMeasuring
			if rs == m.current {
				m.health.Measuring()
			}
		}
	case event.Window:
		m.window(v)
	case event.Resource:
		m.resource(v)
	case event.Host:
		m.hostSample(v)
	case event.Capacity:
		c := v
		m.capacity = &c
	case event.AgentStatus:
		if r := m.current; r != nil && r.data != nil && v.RunID == r.plan.ID && len(r.data.agents) < maxAgents {
			r.data.agents[v.Agent] = v
		}
	case event.Log:
		m.log(v)
	case event.RunFinished:
		m.runFinished(v)
	case event.CampaignFinished:
		m.campaignFinished(v)
	case event.Search:
		m.curve.SetSearch(v.Result, v.Next)
		if m.finished == nil { // the probes' verdicts are the results table's
			m.rebuildSummary()
		}
		m.sumVer++
	}
}

// maxAgents bounds the agents a run's table keeps.
const maxAgents = 1000

func (m *Model) started(v event.CampaignStarted) {
	m.campaign = &v
	m.runs, m.kept, m.selected, m.cursor = m.runs[:0], nil, nil, 0
	m.curve = stats.CurveModel{}
	if v.Search != nil { // a capacity search from the start, before its first probe is judged
		m.curve.SetSearch(searchStart(*v.Search, len(v.Resumed) > 0))
	}
	m.byID = map[string]*runState{}
	for _, p := range v.Runs {
		rs := &runState{plan: p, state: rowPending}
		m.runs = append(m.runs, rs)
		m.byID[p.ID] = rs
	}
}

// searchStart is a search before its first probe is judged, and the rate
// it tries first (0 when a resume's probes decide it, or the policy read
// from evidence is not finite).
func searchStart(spec stats.SearchSpec, resumed bool) (curve.Result, float64) {
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

func (m *Model) runStarted(v event.RunStarted) {
	rs := m.run(v.Run)
	m.coolDown = ""
	rs.state, rs.started = rowWarmup, v.At
	if v.Run.Warmup <= 0 {
		rs.state = rowMeasuring
	}
	if m.selected == nil || m.cursor == m.indexOf(m.current) {
		m.cursor = m.indexOf(rs) // the cursor follows the live run until moved
	}
	m.current = rs
	rs.data = newRunData(v.At)
	m.keep(rs)
	m.health.Reset(rs.state == rowMeasuring)
}

// keep records that rs holds charts, letting the oldest go past maxHistory
// (never the run on screen).
func (m *Model) keep(rs *runState) {
	m.kept = append(slices.DeleteFunc(m.kept, func(r *runState) bool { return r == rs }), rs)
	for len(m.kept) > maxHistory {
		i := slices.IndexFunc(m.kept, func(r *runState) bool { return r != m.selected })
		m.kept[i].data = nil
		m.kept = slices.Delete(m.kept, i, i+1)
	}
}

func (m *Model) window(v event.Window) {
	r := m.current
	if r == nil || r.data == nil || v.RunID != r.plan.ID {
		return
	}
	if v.Phase == stats.Warmup && r.state != rowWarmup {
		return // a late warmup response: the live figures are the measured phase's
	}
	// k6 agents mint inside the iteration, so their send lag is not
	// lateness: the run's end judges their start lag (stats.SendLagParts).
	if m.campaign == nil || !strings.HasPrefix(m.campaign.Driver, "kube") {
		m.health.Window(v.TargetRPS, v.Latency.P50, v.SendLagP99, v.Phase == stats.Measured)
	}
	r.data.window(v)
}

func (m *Model) hostSample(v event.Host) {
	h := v
	m.host = &h
	m.hostVer++
	m.hostBusy.Push(v.BusyCores * 1000)
	if m.running() {
		d := m.current.data
		d.host.Push(d.sec(v.At), v.BusyCores*1000)
		d.nGen++
		m.health.Host(v.At, &h.HostMetrics)
	}
}

func (m *Model) log(v event.Log) {
	if v.Source == event.CoolDownSource {
		m.coolDown = v.Message
	}
	m.logs = append(m.logs, v)
	if len(m.logs) > 500 {
		m.logs = m.logs[len(m.logs)-500:]
	}
	if v.Level == "warn" || v.Level == "error" {
		l := v
		m.lastWarn = &l
	}
}

func (m *Model) runFinished(v event.RunFinished) {
	rs := m.byID[v.RunID]
	if rs == nil {
		return
	}
	rs.state = rowState(v.Status)
	rs.stats = v.Stats
	m.sumVer++
	if v.Stats != nil {
		for _, w := range v.Stats.Warnings {
			if len(m.warnings) < maxWarnings {
				m.warnings = append(m.warnings, w)
			}
		}
	}
	m.rebuildSummary()
}

// maxWarnings bounds the coded warnings the errors panel keeps.
const maxWarnings = 500

func (m *Model) campaignFinished(v event.CampaignFinished) {
	f := v
	m.finished = &f
	m.sumVer++
	if v.Summary != nil {
		m.summary = v.Summary
		if c := v.Summary.Capacity; c != nil { // as the search ended, also without its events
			m.curve.SetSearch(*c, 0)
		}
	}
	if m.current != nil && m.current.state.live() {
		m.current.state = rowAborted
	}
}

func (m *Model) run(p event.PlannedRun) *runState {
	rs := m.byID[p.ID]
	if rs == nil {
		rs = &runState{plan: p, state: rowPending}
		m.runs = append(m.runs, rs)
		m.byID[p.ID] = rs
	}
	return rs
}

func (m *Model) indexOf(rs *runState) int {
	return slices.Index(m.runs, rs)
}

func (m *Model) resource(v event.Resource) {
	if !m.running() {
		return
	}
	d := m.current.data
	switch v.Role {
	case "engine":
		d.engine(v)
	case "generator":
		d.gen.Push(d.sec(v.At), v.CPUMillicores)
		d.nGen++
		m.health.Generator(v.At, v.CPUMillicores/1000)
	}
}

// running reports whether a run is under way.
func (m *Model) running() bool {
	return m.current != nil && m.current.data != nil && m.current.state.live()
}

// shown is the run whose charts and figures are on screen: the selected
// finished run, or the live one.
func (m *Model) shown() *runState {
	if m.selected != nil {
		return m.selected
	}
	return m.current
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
	if res, _ := m.curve.Search(); res != nil { // a search judges its probes, not the thresholds
		c := *res
		s.Capacity = &c
	}
	m.summary = s
}
