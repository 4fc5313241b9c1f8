package tui

import (
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/event"
)

// The header says where the campaign is (the source until it starts);
// the status line says the most pressing thing: the question, the stop
// under way, how it ended, the latest warning.
func TestChrome(t *testing.T) {
	c := chrome{com: fed(nil), source: "replay of x"}
	if h := c.header(80, quitFlow{}); len(h) != 2 || h[0] != "tokex replay of x" {
		t.Errorf("before the start: %q", h)
	}
	all := script(0)
	c.com = fed(midRun(all))
	if h := c.header(120, quitFlow{}); h[1] != "campaign 20261130-120000-test · elapsed 21s · ETA 14s · running" {
		t.Errorf("mid-run: %q", h[1])
	}
	if h := c.header(120, quitFlow{stopping: true}); !strings.HasSuffix(h[1], "ETA 14s · stopping") {
		t.Errorf("stopping: %q", h[1])
	}
	if s := c.status(120, quitFlow{}); s != "" {
		t.Errorf("nothing to say: %q", s)
	}
	c.com.camp.apply(event.Log{At: t0, Source: "tokex", Level: "warn", Message: "careful"}, nil)
	for q, want := range map[quitFlow]string{{}: "warn: careful", {stopping: true}: "stopping the current run", {confirm: true}: "Stop the campaign?"} {
		if s := c.status(120, q); !strings.HasPrefix(s, want) {
			t.Errorf("%+v: %q", q, s)
		}
	}
	c.com = fed(all)
	if h, s := c.header(120, quitFlow{}), c.status(40, quitFlow{}); !strings.HasSuffix(h[1], "elapsed 35s · done") || s != "campaign done — press q to exit" {
		t.Errorf("the end: %q %q", h[1], s)
	}
}
