package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// chartGrid is the chart layout's right column under the live figures:
// the shown run's latency, throughput, engine CPU and memory and generator
// charts and the stage curve, in rows of two or three; z (or Enter) makes
// the focused chart fill the grid. Each chart is drawn again only when
// what it draws, its size, focus or run changed.
type chartGrid struct {
	com    *common
	stages *stageCurve
	w, h   int
	focus  panel // the focused chart; any other panel: none of them
	zoom   bool  // the focused chart fills the grid (kept while the focus is elsewhere)

	// The arrangement, from the size, focus and zoom.
	cols, rows, colW, rowH int
	cells                  []zone // where each chart is, in the grid's coordinates
	cache                  panelCache
}

// chartPanels are the chart grid's panels, in reading order.
var chartPanels = []panel{panelLatency, panelThroughput, panelEngineCPU, panelEngineMem, panelGenerator, panelStages}

func newChartGrid(com *common) *chartGrid {
	return &chartGrid{com: com, stages: newStageCurve(com), focus: panelLadder}
}

// SetSize implements component.
func (g *chartGrid) SetSize(w, h int) {
	g.w, g.h = w, h
	g.arrange()
}

// setFocus gives the focus to chart p (or, p not a chart, to none).
func (g *chartGrid) setFocus(p panel) {
	g.focus = p
	g.stages.focused = p == panelStages
	g.arrange()
}

// ShortHelp implements help.KeyMap.
func (g *chartGrid) ShortHelp() []key.Binding { return []key.Binding{g.com.keys.Zoom} }

// FullHelp implements help.KeyMap.
func (g *chartGrid) FullHelp() [][]key.Binding {
	return [][]key.Binding{{g.com.keys.Zoom, g.com.keys.Show}}
}

// Update implements component: z or Enter zooms the focused chart, or
// not.
func (g *chartGrid) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyMsg); ok && g.focus.isChart() && key.Matches(k, g.com.keys.Zoom, g.com.keys.Show) {
		g.zoom = !g.zoom
		g.arrange()
	}
	return nil
}

// unzoom shows every chart again.
func (g *chartGrid) unzoom() {
	g.zoom = false
	g.arrange()
}

// arrange lays the charts out in rows of two or three (three from 150
// cells), or the zoomed one alone.
func (g *chartGrid) arrange() {
	panels := chartPanels
	if g.zoom && g.focus.isChart() {
		panels = []panel{g.focus}
	}
	g.cols = 2
	if g.w >= 150 {
		g.cols = 3
	}
	g.cols = min(g.cols, len(panels))
	g.rows = (len(panels) + g.cols - 1) / g.cols
	g.colW, g.rowH = (g.w-(g.cols-1))/g.cols, g.h/g.rows
	g.cells = g.cells[:0]
	for i, p := range panels {
		row, col := i/g.cols, i%g.cols
		z := zone{panel: p, x: col * (g.colW + 1), y: row * g.rowH}
		z.w, z.h = g.cellSize(row, col)
		if p == panelStages {
			g.stages.SetSize(z.w, z.h)
		}
		g.cells = append(g.cells, z)
	}
}

// cellSize is the size of the cell at row, col: the last row and column
// take what the division leaves.
func (g *chartGrid) cellSize(row, col int) (w, h int) {
	w, h = g.colW, g.rowH
	if col == g.cols-1 {
		w = g.w - (g.colW+1)*(g.cols-1)
	}
	if row == g.rows-1 {
		h = g.h - g.rowH*(g.rows-1)
	}
	return w, h
}

// View implements component: exactly h lines of w cells.
func (g *chartGrid) View() string { return strings.Join(g.lines(), "\n") }

// lines are the grid's h lines (the chart layout sets them beside the
// left column without joining and splitting them again).
func (g *chartGrid) lines() []string {
	out := make([]string, 0, g.h)
	for row := 0; row < g.rows; row++ {
		_, ph := g.cellSize(row, 0)
		lines := make([]string, ph)
		for col := 0; col < g.cols; col++ {
			cw, _ := g.cellSize(row, col)
			block := strings.Split(strings.Repeat(strings.Repeat(" ", cw)+"\n", ph-1)+strings.Repeat(" ", cw), "\n")
			if i := row*g.cols + col; i < len(g.cells) {
				block = g.panelLines(g.cells[i].panel, cw, ph)
			}
			for y := range lines {
				if col > 0 {
					lines[y] += " "
				}
				lines[y] += block[y]
			}
		}
		out = append(out, lines...)
	}
	return out
}

// panelCache keeps each chart's lines until its data, size, focus or run
// changes: an event redraws only the charts it feeds.
type panelCache map[panel]cachedPanel

type cachedPanel struct {
	key   panelKey
	lines []string
}

type panelKey struct {
	run          *runState
	state        rowState
	w, h         int
	focus, zoom  bool
	data, others int // versions of what the panel draws
}

// panelLines is a chart's exactly w×h lines, from the cache while what it
// draws is unchanged.
func (g *chartGrid) panelLines(p panel, w, h int) []string {
	c := g.com.camp
	r := g.com.shown()
	k := panelKey{run: r, state: r.state, w: w, h: h, focus: g.focus == p, zoom: g.zoom, others: c.sumVer}
	if p == panelStages {
		k.data = c.coolVer
	} else if d := r.data; d != nil {
		switch p {
		case panelLatency, panelThroughput:
			k.data = d.nWin
		case panelEngineCPU, panelEngineMem:
			k.data = d.nEng
		case panelGenerator:
			k.data, k.others = d.nGen, c.hostVer
		}
	}
	if cached, ok := g.cache[p]; ok && cached.key == k {
		return cached.lines
	}
	if g.cache == nil {
		g.cache = panelCache{}
	}
	lines := g.chartPanel(p, r, w, h)
	g.cache[p] = cachedPanel{key: k, lines: lines}
	return lines
}

// chartPanel draws one chart, exactly w×h: a title with the current
// figures over its plot.
func (g *chartGrid) chartPanel(p panel, r *runState, w, h int) []string {
	var text string
	focused := g.focus == p
	switch {
	case p == panelStages:
		return strings.Split(g.stages.View(), "\n")
	case r.data == nil:
		text = g.com.title(focused, chartTitles[p]) + "\n" + g.com.styles.Dim.Render(wrap(noCharts, w))
	default:
		title, plot := g.chart(p, r)
		if plot.Traces == nil { // nothing measured: say so, draw no empty axes
			text = g.com.title(focused, title)
			break
		}
		plot.Width, plot.Height, plot.Axis = w, h-1, g.com.styles.Rule
		plot.XMax, plot.Mark = r.plan.Total().Seconds(), r.plan.Warmup.Seconds()
		if out := plot.Render(); out != "" { // exactly w×(h-1) already
			return append([]string{fit(g.com.title(focused, title), w, 1)}, strings.Split(out, "\n")...)
		}
		text = g.com.title(focused, title)
	}
	return strings.Split(fit(text, w, h), "\n")
}
