package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// panel names what can hold the focus.
type panel int

const (
	panelLadder panel = iota
	panelLive         // the live figures (the compact layout's sparklines)
	panelLatency
	panelThroughput
	panelEngineCPU
	panelEngineMem
	panelGenerator
	panelStages
	panelErrors
	panelResults
)

// isChart reports a panel that zoom can fill the chart area with.
func (p panel) isChart() bool { return p >= panelLatency && p <= panelStages }

// zone is where a panel is on screen.
type zone struct {
	panel      panel
	x, y, w, h int
}

func (z zone) contains(x, y int) bool { return x >= z.x && x < z.x+z.w && y >= z.y && y < z.y+z.h }

// relayout gives every panel its size and place for the terminal's size
// and what decides the panels' sizes (the runs, the results, the pane
// shown, the zoom): after every message, never while drawing.
func (m *Model) relayout() {
	w, h := m.width, m.height
	m.zones = m.zones[:0]
	m.help.Width = w
	m.charts = w >= 100 && h >= 32 // room for the braille charts
	switch {
	case w < MinWidth || h < MinHeight:
	case m.charts:
		m.chartLayout(w, h)
	default:
		m.compactLayout(w, h)
	}
}

// compactLayout is the 80×24 one: the ladder and the live figures as
// sparklines side by side, the results (or logs, or agents) below.
func (m *Model) compactLayout(w, h int) {
	bodyH := h - headerRows - 2 - footerRows // two rules
	// The middle shows the whole ladder when it can; the results table
	// keeps room for its title, header, one row per stage and the verdict.
	stages := 3
	if s := m.camp.summary; s != nil {
		stages = max(stages, len(s.Stages))
	}
	midH := min(max(9, len(m.camp.runs)+1), bodyH-(stages+3))
	m.midH = max(midH, min(9, bodyH-4))
	m.bottomH = bodyH - m.midH
	top := headerRows + 1
	m.ladder.SetSize(ladderWidth, m.midH)
	m.live.compact = true
	m.live.SetSize(w-ladderWidth-2, m.midH)
	m.bottom().SetSize(w, m.bottomH)
	m.zones = append(m.zones, zone{panelLadder, 0, top, ladderWidth, m.midH}, zone{panelLive, ladderWidth + 1, top, w - ladderWidth - 1, m.midH},
		zone{panelResults, 0, top + m.midH + 1, w, m.bottomH})
}

// chartLayout is the layout of terminals with room: the ladder over the
// errors and warnings on the left, the live figures over the chart grid
// on the right, the results table across the bottom.
func (m *Model) chartLayout(w, h int) {
	c := m.camp
	m.bottomH = h / 3
	if b := m.bottom(); b == m.results { // as tall as the table, 3 to h/3 rows
		m.results.SetSize(w, m.bottomH)
		m.bottomH = min(max(len(m.results.lines()), 3), h/3)
	}
	m.bottom().SetSize(w, m.bottomH)
	m.midH = h - headerRows - 2 - m.bottomH - footerRows
	top := headerRows + 1
	m.ladderH = min(len(c.runs)+1, max(m.midH/2, m.midH-12))
	if c.current == nil && c.started == nil {
		m.ladderH = min(m.ladderH, 2)
	}
	m.ladder.SetSize(ladderWidth, m.ladderH)
	m.errors.SetSize(ladderWidth, m.midH-m.ladderH)
	m.zones = append(m.zones, zone{panelLadder, 0, top, ladderWidth, m.ladderH}, zone{panelErrors, 0, top + m.ladderH, ladderWidth, m.midH - m.ladderH})
	rightW := w - ladderWidth - 1
	m.live.compact = false
	if c.current == nil { // the pre-flight estimate in the whole column
		m.live.SetSize(rightW, m.midH)
	} else {
		m.live.SetSize(rightW, statusRows)
		m.grid.SetSize(rightW, m.midH-statusRows)
		for _, z := range m.grid.cells {
			z.x, z.y = z.x+ladderWidth+1, z.y+top+statusRows
			m.zones = append(m.zones, z)
		}
	}
	m.zones = append(m.zones, zone{panelResults, 0, top + m.midH + 1, w, m.bottomH})
}

// bottom is the panel across the bottom: the results, or the keys, logs
// or agents when asked for.
func (m *Model) bottom() component {
	switch {
	case m.showHelp:
		return m.keysPane
	case m.showLogs:
		return m.logs
	case m.showAgents:
		return m.agents
	}
	return m.results
}

// View implements tea.Model: the panels where the layout put them.
func (m *Model) View() string {
	w, h := m.width, m.height
	if w == 0 || h == 0 {
		return ""
	}
	if w < MinWidth || h < MinHeight {
		return tooSmall(w, h)
	}
	rule := m.com.styles.Rule.Render(strings.Repeat("─", w))
	lines := append(m.chrome.header(w, m.quit), rule)
	if m.charts {
		lines = append(lines, m.chartRows()...)
	} else {
		lines = append(lines, m.compactRows())
	}
	lines = append(lines, rule, m.bottom().View(), m.chrome.status(w, m.quit), m.help.ShortHelpView(m.footer))
	return strings.Join(lines, "\n")
}

// compactRows are the ladder and the live figures side by side.
func (m *Model) compactRows() string {
	return lipgloss.JoinHorizontal(lipgloss.Top, m.ladder.View(), fit(strings.Repeat("│\n", m.midH-1)+"│", 1, m.midH), m.live.View())
}

// chartRows are the left column (ladder over errors) and the right one
// (live figures over the chart grid), line by line.
func (m *Model) chartRows() []string {
	left := strings.Split(m.ladder.View()+"\n"+m.errors.View(), "\n")
	right := strings.Split(m.live.View(), "\n")
	if m.camp.current != nil {
		right = append(right, m.grid.lines()...)
	}
	rows := make([]string, m.midH)
	for i := range rows { // both columns are exactly as wide as they say
		rows[i] = left[i] + "│" + right[i]
	}
	return rows
}
