package usage

import (
	"math"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/sample"
)

// TestPods: each engine's cores from its own samples (its counter,
// else its sampled rate), and their balance.
func TestPods(t *testing.T) {
	t.Parallel()
	group := func(rs []sample.Resource) *Group {
		g := NewGroup(at(0).UnixMicro(), at(10).UnixMicro(), true)
		for i := range rs {
			g.Add(&rs[i])
		}
		return &g
	}
	var res []sample.Resource
	for i := int64(0); i <= 11; i++ {
		res = append(res, sample.Resource{AtUS: at(i).UnixMicro(), Kind: "engine", Name: "a", CPUSecondsTotal: 1 + 0.6*float64(i), CPUMillicores: 600},
			sample.Resource{AtUS: at(i).UnixMicro(), Kind: "engine", Name: "b", CPUSecondsTotal: 1 + 0.2*float64(i), CPUMillicores: 200},
			sample.Resource{AtUS: at(i).UnixMicro(), Kind: "engine", Name: "c", CPUMillicores: 400}) // no counter: its rate
	}
	pods, bal := group(res).Pods(10)
	if len(pods) != 3 || math.Abs(pods[0].Cores-0.6) > 1e-3 || math.Abs(pods[1].Cores-0.2) > 1e-3 || math.Abs(pods[2].Cores-0.4) > 1e-3 || bal != 1.5 {
		t.Errorf("pods %+v balance %v", pods, bal)
	}
	var one []sample.Resource
	for _, r := range res {
		if r.Name == "a" {
			one = append(one, r)
		}
	}
	if pods, _ := group(one).Pods(10); pods != nil {
		t.Errorf("one engine has no balance: %+v", pods)
	}
}

// at is second s of a fixed day.
func at(s int64) time.Time { return time.Unix(1_800_000_000+s, 0) }
