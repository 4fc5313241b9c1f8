package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
)

// The keys pane names every key of the key map (the confirmation's are in
// the quit line), each line within the width.
func TestHelpPane(t *testing.T) {
	com := fed(nil)
	v := strings.Join(sized(t, newHelpPane(com), 130, 9), "\n")
	k := com.keys
	for _, b := range []key.Binding{k.Next, k.Prev, k.Up, k.Down, k.Show, k.Live, k.Zoom, k.Logs, k.Agents, k.Quit, k.Help} {
		for _, key := range b.Keys() {
			if !strings.Contains(v, key) {
				t.Errorf("%q (%s) missing:\n%s", key, b.Help().Desc, v)
			}
		}
	}
	for _, want := range []string{"y stops it", "n keeps running"} {
		if !strings.Contains(v, want) {
			t.Errorf("%q missing:\n%s", want, v)
		}
	}
}
