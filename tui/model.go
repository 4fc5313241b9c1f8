// Package tui is tokex's terminal dashboard (bubbletea): the campaign's
// ladder, live rate/latency/CPU panels, the results table, logs and agents.
// It consumes the event stream only, so live and replayed campaigns are the
// same code path and, fed the same events, render the same screen.
//
// The Model folds the events into a campaign (campaign.go), which knows
// nothing of the screen, and lays out panels that read it (the component
// interface, common.go): ladder, errors, live figures, chart grid with the
// stage curve, results, logs, agents and the keys. The layout is computed
// when the size, or what decides the sizes, changes: View only draws.
package tui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/tokex-dev/tokex/collector/event"
)

// MinWidth and MinHeight are the smallest terminal the dashboard lays out in.
const (
	MinWidth  = 80
	MinHeight = 24
)

// EventMsg carries one event of the stream into the program.
type EventMsg struct{ Event event.Event }

// eventsMsg carries a batch of events: one update and one frame for all.
type eventsMsg []event.Event

// Options configure a dashboard.
type Options struct {
	// Live marks a running campaign: quitting asks first, then calls OnStop.
	Live   bool
	OnStop func()
	// Source is shown until the first event arrives ("replay of DIR"); it
	// is not shown after, so live and replayed screens stay identical.
	Source string
}

// Model is the dashboard.
type Model struct {
	opt    Options
	com    *common
	camp   *campaign
	chrome chrome
	help   help.Model    // draws the footer
	footer []key.Binding // the footer's keys: ShortHelp, which does not change
	quit   quitFlow

	// The panels.
	ladder   *ladder
	errors   *errorsPanel
	live     *livePanel
	grid     *chartGrid
	results  *resultsPanel
	logs     *logsPanel
	agents   *agentsPanel
	keysPane *helpPane

	// View state: what is shown where.
	focus                          panel
	showLogs, showAgents, showHelp bool

	// The layout, from the size and what decides the panels' sizes.
	width, height          int
	charts                 bool // braille charts, else the compact layout
	midH, ladderH, bottomH int
	zones                  []zone // where each panel is, for the mouse and the focus order
}

// New returns a dashboard.
func New(opt Options) *Model {
	h := help.New()
	h.ShortSeparator = "  " // every key fits in 80 columns
	camp := newCampaign()
	com := &common{camp: camp, styles: DefaultStyles(), keys: DefaultKeyMap()}
	m := &Model{
		opt: opt, com: com, camp: camp, chrome: chrome{com: com, source: opt.Source}, help: h,
		ladder: newLadder(com), errors: newErrorsPanel(com), live: newLivePanel(com), grid: newChartGrid(com),
		results: newResultsPanel(com), logs: newLogsPanel(com), agents: newAgentsPanel(com), keysPane: newHelpPane(com),
	}
	m.setFocus(panelLadder)
	m.footer = m.ShortHelp()
	return m
}

// SetSize lays the dashboard out for a terminal of w×h.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.relayout()
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case EventMsg:
		return m.Update(eventsMsg{msg.Event})
	case eventsMsg:
		for _, e := range msg {
			m.apply(e)
			if _, ok := e.(event.CampaignFinished); ok && m.quit.stopping {
				cmd = tea.Quit
				break
			}
		}
	case tea.KeyMsg:
		cmd = m.key(msg)
	case tea.MouseMsg:
		m.mouse(msg)
	}
	m.relayout()
	return m, cmd
}

// Apply folds one event into the dashboard.
func (m *Model) Apply(e event.Event) {
	m.apply(e)
	m.relayout()
}

// apply folds an event into the campaign, then keeps the view in step: a
// new campaign selects nothing, a new run takes the cursor along.
func (m *Model) apply(e event.Event) {
	prev := m.camp.current
	if !m.camp.apply(e, m.com.selected) {
		return
	}
	switch e.(type) {
	case event.CampaignStarted:
		m.com.selected, m.ladder.cursor = nil, 0
	case event.RunStarted:
		m.ladder.runStarted(prev)
	}
}

// Stopping reports whether the user asked to stop the campaign.
func (m *Model) Stopping() bool { return m.quit.stopping }

// ShortHelp is the footer: the panels' keys, each once, among the
// dashboard's own.
func (m *Model) ShortHelp() []key.Binding {
	k := m.com.keys
	out, seen := []key.Binding{k.Next}, map[string]bool{}
	for _, c := range []component{m.ladder, m.errors, m.live, m.grid, m.results, m.logs, m.agents} {
		for _, b := range c.ShortHelp() {
			if id := strings.Join(b.Keys(), " "); !seen[id] {
				seen[id] = true
				out = append(out, b)
			}
		}
	}
	return append(append(out, k.Quit), m.keysPane.ShortHelp()...)
}

// key handles the dashboard's own keys (quit, panes, focus, follow the
// live run); the others go to the focused panel when it names them, else
// to the ladder.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	if m.quit.confirm {
		return m.confirmKey(msg)
	}
	k := m.com.keys
	switch {
	case key.Matches(msg, k.Quit):
		if m.quit.stopping && msg.String() == "ctrl+c" {
			return tea.Quit // a second Ctrl-C: out at once
		}
		if m.opt.Live && m.camp.finished == nil {
			m.quit.confirm = true
			return nil
		}
		return tea.Quit
	case key.Matches(msg, k.Logs):
		m.showLogs, m.showAgents = !m.showLogs, false
	case key.Matches(msg, k.Agents):
		m.showAgents, m.showLogs = !m.showAgents, false
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
	case key.Matches(msg, k.Next):
		m.cycleFocus(1)
	case key.Matches(msg, k.Prev):
		m.cycleFocus(-1)
	case key.Matches(msg, k.Live): // the ladder follows the live run, with all its charts
		m.grid.unzoom()
		return m.ladder.Update(msg)
	default:
		target := component(m.ladder)
		if c := m.focused(); key.Matches(msg, bindings(c)...) {
			target = c
		} else if key.Matches(msg, k.Up, k.Down) {
			m.setFocus(panelLadder)
		}
		return target.Update(msg)
	}
	return nil
}

func (m *Model) confirmKey(msg tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.com.keys.Confirm):
		m.quit = quitFlow{stopping: true}
		if m.opt.OnStop != nil {
			m.opt.OnStop()
		}
	case key.Matches(msg, m.com.keys.Cancel):
		m.quit.confirm = false
	case msg.String() == "ctrl+c":
		return tea.Quit
	}
	return nil
}

// mouse focuses the panel under a click and hands it the click (a click on
// a ladder row shows that run); the wheel moves through the ladder or
// scrolls the errors.
func (m *Model) mouse(msg tea.MouseMsg) {
	i := slices.IndexFunc(m.zones, func(z zone) bool { return z.contains(msg.X, msg.Y) })
	if i < 0 {
		return
	}
	z := m.zones[i]
	local := msg
	local.X, local.Y = msg.X-z.x, msg.Y-z.y
	switch msg.Button {
	case tea.MouseButtonWheelUp, tea.MouseButtonWheelDown:
		if z.panel != panelLadder && z.panel != panelErrors {
			return
		}
	case tea.MouseButtonLeft:
		if msg.Action != tea.MouseActionPress {
			return
		}
	default:
		return
	}
	m.setFocus(z.panel)
	m.focused().Update(local)
}

// cycleFocus moves the focus to the next (or previous) panel on screen;
// leaving the charts unzooms them.
func (m *Model) cycleFocus(step int) {
	if len(m.zones) == 0 {
		return
	}
	i := slices.IndexFunc(m.zones, func(z zone) bool { return z.panel == m.focus })
	i = (i + step + len(m.zones)) % len(m.zones)
	if i < 0 {
		i = 0
	}
	m.setFocus(m.zones[i].panel)
	if !m.focus.isChart() {
		m.grid.unzoom()
	}
}

// setFocus gives the focus to panel p.
func (m *Model) setFocus(p panel) {
	m.focus = p
	m.ladder.focused = p == panelLadder
	m.errors.focused = p == panelErrors
	m.grid.setFocus(p)
}

// focused is the panel with the focus.
func (m *Model) focused() component {
	switch {
	case m.focus == panelErrors:
		return m.errors
	case m.focus == panelLive:
		return m.live
	case m.focus == panelResults:
		return m.results
	case m.focus.isChart():
		return m.grid
	}
	return m.ladder
}
