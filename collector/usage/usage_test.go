package usage

import (
	"fmt"
	"testing"

	"github.com/tokex-dev/tokex/collector/sample"
)

// TestGroupBoundsItsMembers: past MaxMembers processes a group gives no
// figures (a hostile resources.csv of a million names held each), and
// what it keeps per member is one entry per second of the window.
func TestGroupBoundsItsMembers(t *testing.T) {
	t.Parallel()
	g := NewGroup(0, 10e6, true)
	for i := range MaxMembers + 5 {
		for at := int64(0); at <= 10e6; at += 2e5 {
			g.Add(&sample.Resource{AtUS: at, Kind: "engine", Name: fmt.Sprint("p", i%(MaxMembers+5)), CPUMillicores: 1, CPUSecondsTotal: 1 + float64(at)/1e6})
		}
		if i == 2 {
			f, ok := g.Sum()
			if !ok || f.Seconds != 11 || !f.Cumulative || len(g.members[0].ticks) != 11 {
				t.Fatalf("three members: %+v %v, %d ticks", f, ok, len(g.members[0].ticks))
			}
		}
	}
	if _, ok := g.Sum(); ok || !g.Overflow() || len(g.members) != MaxMembers {
		t.Errorf("%d members kept, overflow %v", len(g.members), g.Overflow())
	}
}

// TestSumsMergeKeysInAnyOrder: figures of a key that came apart are
// summed in the order they came, as one map would.
func TestSumsMergeKeysInAnyOrder(t *testing.T) {
	t.Parallel()
	var s Sums
	for _, kv := range [][2]int64{{5, 1}, {5, 2}, {3, 10}, {5, 4}, {9, 100}, {3, 20}} {
		s.Add(kv[0], float64(kv[1]))
	}
	s.Sort()
	for key, want := range map[int64]float64{3: 30, 5: 7, 9: 100} {
		if got, ok := s.Get(key); !ok || got != want {
			t.Errorf("key %d: %v %v, want %v", key, got, ok, want)
		}
	}
	if _, ok := s.Get(4); ok {
		t.Error("key 4 found")
	}
}
