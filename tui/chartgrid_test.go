package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
)

// The grid tiles its cells exactly: two columns below 150 cells, three
// from there, the last row and column taking what the division leaves.
func TestChartGridTiles(t *testing.T) {
	g := newChartGrid(fed(midRun(script(0))))
	for _, c := range []struct{ w, h, cols int }{{89, 34, 2}, {149, 20, 2}, {169, 51, 3}} {
		lines := sized(t, g, c.w, c.h)
		if g.cols != c.cols || len(g.cells) != len(chartPanels) {
			t.Errorf("%d wide: %d columns, %d cells", c.w, g.cols, len(g.cells))
		}
		area := 0
		for _, z := range g.cells {
			area += z.w * z.h
			if z.x+z.w > c.w || z.y+z.h > c.h {
				t.Errorf("%d×%d: cell %+v outside", c.w, c.h, z)
			}
		}
		if gaps := (g.cols - 1) * c.h; area+gaps != c.w*c.h {
			t.Errorf("%d×%d: cells cover %d of %d cells", c.w, c.h, area+gaps, c.w*c.h)
		}
		if row(lines, "latency p95 6.50 ms") == "" || row(lines, "p95 ms per stage") == "" {
			t.Errorf("%d×%d:\n%s", c.w, c.h, strings.Join(lines, "\n"))
		}
	}
}

// z (or Enter) zooms the focused chart to the whole grid and back; with
// no chart focused it does nothing; the zoom waits while the focus is
// elsewhere.
func TestChartGridZooms(t *testing.T) {
	g := newChartGrid(fed(midRun(script(0))))
	g.SetSize(89, 30)
	g.Update(keyMsg("z"))
	if g.zoom || len(g.cells) != 6 {
		t.Fatal("zoomed without a chart focused")
	}
	g.setFocus(panelEngineCPU)
	g.Update(keyMsg("enter"))
	lines := sized(t, g, 89, 30)
	if len(g.cells) != 1 || g.cells[0] != (zone{panelEngineCPU, 0, 0, 89, 30}) || !strings.HasPrefix(lines[0], "▸ engine CPU 750 m") {
		t.Errorf("zoomed cells %+v:\n%s", g.cells, strings.Join(lines, "\n"))
	}
	g.setFocus(panelLadder)
	if len(g.cells) != 6 || !g.zoom {
		t.Errorf("focus elsewhere: %d cells, zoom %v", len(g.cells), g.zoom)
	}
	g.setFocus(panelStages)
	if len(g.cells) != 1 || g.cells[0].panel != panelStages || !strings.HasPrefix(g.View(), "▸ p95 ms per stage") {
		t.Errorf("the stage curve zoomed: %+v", g.cells)
	}
	g.Update(keyMsg("z"))
	if g.zoom || len(g.cells) != 6 {
		t.Error("z did not unzoom")
	}
}

// A chart is drawn again only when what it draws changed: an engine
// sample redraws the engine charts and not the latency.
func TestChartGridRedrawsWhatChanged(t *testing.T) {
	com := fed(midRun(script(0)))
	g := newChartGrid(com)
	g.SetSize(89, 30)
	g.View()
	latency, engine := &g.cache[panelLatency].lines[0], &g.cache[panelEngineCPU].lines[0]
	g.View()
	if &g.cache[panelLatency].lines[0] != latency || &g.cache[panelEngineCPU].lines[0] != engine {
		t.Fatal("an unchanged chart was drawn again")
	}
	com.camp.apply(event.Resource{At: com.camp.now.Add(time.Second), Role: "engine", Name: "tokex-serve", CPUMillicores: 900, MemoryBytes: 18 << 20}, nil)
	if v := g.View(); &g.cache[panelLatency].lines[0] != latency || &g.cache[panelEngineCPU].lines[0] == engine || !strings.Contains(v, "engine CPU 900 m") {
		t.Errorf("after an engine sample:\n%s", v)
	}
}
