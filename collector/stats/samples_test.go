package stats

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/sample"
)

// sampleCase is generated resource and host samples of one run: several
// engines (some with counters that go back in time, jump, are missing, or
// come out of time order), the generator, the node, samples exactly on and
// around the window's edges, several a second, and host samples that break
// the saturation and starvation rules.
func sampleCase(seed uint64) (RunMeta, []sample.Resource, []sample.Host) {
	rng := rand.New(rand.NewPCG(seed, 25))
	start := time.Unix(1_800_000_000, 0)
	m := RunMeta{ID: "r", Status: StatusDone, TargetRPS: 50, Started: start,
		MeasuredStart: start.Add(5 * time.Second), MeasuredEnd: start.Add(35 * time.Second)}
	ws, we := m.MeasuredStart.UnixMicro(), m.MeasuredEnd.UnixMicro()
	var lists [][]sample.Resource // each process's samples in the order written
	engines := 1 + rng.IntN(5)
	for e := range engines {
		name := fmt.Sprintf("engine-%d", e)
		src := []string{"proc", "metrics-server", "cadvisor"}[rng.IntN(3)]
		mode := rng.IntN(10) // 0-4 fine, 5 goes back, 6 jumps, 7 no counter, 8 out of order, 9 out of order and back
		base, rate := 100*rng.Float64(), 2*rng.Float64()
		counter := func(at int64) float64 { return base + rate*float64(at-start.UnixMicro())/1e6 }
		var own []sample.Resource
		add := func(at int64) {
			s := sample.Resource{AtUS: at, Kind: "engine", Name: name, Source: src,
				CPUMillicores: float64(rng.IntN(2000)), CPUSecondsTotal: counter(at), MemoryBytes: rng.Int64N(1 << 30)}
			switch {
			case mode == 7:
				s.CPUSecondsTotal = 0
			case (mode == 5 || mode == 9) && rng.IntN(8) == 0:
				s.CPUSecondsTotal -= 5
			case mode == 6 && rng.IntN(20) == 0:
				s.CPUSecondsTotal += 1e6
			}
			own = append(own, s)
		}
		for at := start.UnixMicro() + rng.Int64N(300_000); at < we+3e6; at += 100_000 + rng.Int64N(900_000) {
			add(at)
		}
		// The window's edges exactly, some of the time.
		if rng.IntN(2) == 0 {
			add(ws)
			add(we)
		}
		slices.SortStableFunc(own, func(a, b sample.Resource) int { return cmp.Compare(a.AtUS, b.AtUS) })
		if mode >= 8 {
			rng.Shuffle(len(own), func(i, j int) { own[i], own[j] = own[j], own[i] })
		}
		lists = append(lists, own)
	}
	var gen, node []sample.Resource
	for at := start.UnixMicro(); at <= we+2e6; at += 500_000 {
		gen = append(gen, sample.Resource{AtUS: at, Kind: "generator", Name: "tokex", Source: "proc", CPUMillicores: float64(rng.IntN(1000))})
		node = append(node, sample.Resource{AtUS: at + 1, Kind: "node", Name: "n", CPUMillicores: 3})
	}
	lists = append(lists, gen, node)
	// The processes interleaved at random, each in its own order.
	var res []sample.Resource
	for len(lists) > 0 {
		i := rng.IntN(len(lists))
		res = append(res, lists[i][0])
		if lists[i] = lists[i][1:]; len(lists[i]) == 0 {
			lists = append(lists[:i], lists[i+1:]...)
		}
	}
	var host []sample.Host
	busy := rng.Float64() // how often the host is saturated
	for at := start.UnixMicro(); at <= we+2e6; at += 500_000 {
		h := sample.Host{AtUS: at, HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: 2 * busy * rng.Float64(), MemTotalBytes: 100, MemAvailableBytes: 50,
			GeneratorLimitCores: 0.5 + float64(rng.IntN(2))}}
		if rng.IntN(6) == 0 {
			w := 2 * rng.Float64()
			h.GeneratorWaitPerSliceMs = &w
		}
		host = append(host, h)
	}
	host = append(host, sample.Host{AtUS: ws, HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: 2}}, sample.Host{AtUS: we, HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: 2}})
	return m, res, host
}

// TestSampleTallyAgreesWithHoldingEverySample: the streamed CPU figures,
// counter warning and host warnings are those of the implementation that
// held every sample (oldsamples_test.go, main at 631f5d5), on generated
// runs (issue 25: recomputing a folder held a run's samples, 960 MB).
func TestSampleTallyAgreesWithHoldingEverySample(t *testing.T) {
	t.Parallel()
	for seed := range uint64(300) {
		m, res, host := sampleCase(seed)
		exchanges := int64(seed%3) * 700 // none, and some
		tl := NewTally(m)
		for i := range res {
			tl.AddResource(&res[i])
		}
		if tl.NeedsResourcesAgain() {
			for i := range res {
				tl.AddResourceAgain(&res[i])
			}
		}
		for i := range host {
			tl.AddHost(&host[i])
		}
		st := &tl.samples
		got, gotMem := groupCPU(&st.engine, st.start, st.end, exchanges)
		gotW, gotBad := counterWarning(&st.engine, "engine", m.ID)
		gotGen, _ := groupCPU(&st.generator, st.start, st.end, 0)
		r := &Run{ID: m.ID}
		gotHost := r.hostWarnings(&st.host)

		want, wantMem := oldGroupCPU(append([]sample.Resource(nil), res...), "engine", m, exchanges)
		wantW, wantBad := oldCPUCounterWarning(append([]sample.Resource(nil), res...), "engine", m.ID)
		wantGen, _ := oldGroupCPU(res, "generator", m, 0)
		wantHost := oldHostWarnings(r, m, host, res)
		if !reflect.DeepEqual(got, want) || gotMem != wantMem {
			t.Fatalf("seed %d: engine CPU %+v, memory %d; holding every sample: %+v, %d", seed, got, gotMem, want, wantMem)
		}
		if gotBad != wantBad || gotW != wantW {
			t.Fatalf("seed %d: counter warning %v %+v; holding every sample: %v %+v", seed, gotBad, gotW, wantBad, wantW)
		}
		if !reflect.DeepEqual(gotGen, wantGen) {
			t.Fatalf("seed %d: generator CPU %+v; holding every sample: %+v", seed, gotGen, wantGen)
		}
		if !reflect.DeepEqual(gotHost, wantHost) {
			t.Fatalf("seed %d: host warnings %+v; holding every sample: %+v", seed, gotHost, wantHost)
		}
	}
}

// TestSampleTallyKeepsNoHostSample: what the tally holds after a run's
// samples does not grow with its host samples, nor with resource samples
// inside seconds it already holds (the old Run took them as slices: a
// million of each was 970 MB recomputing a folder).
func TestSampleTallyKeepsNoHostSample(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	m := RunMeta{ID: "r", Status: StatusDone, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(100 * time.Second)}
	held := func(n int) uint64 {
		tl := NewTally(m)
		for i := range n {
			at := start.UnixMicro() + int64(i)*100_000_000/int64(n)
			s := sample.Resource{AtUS: at, Kind: "engine", Name: "e", CPUMillicores: 500, CPUSecondsTotal: float64(i), MemoryBytes: 1}
			tl.AddResource(&s)
		}
		for i := range n {
			h := sample.Host{AtUS: start.UnixMicro() + 1 + int64(i)*100_000_000/int64(n), HostMetrics: sample.HostMetrics{CPUs: 2, BusyCores: 2}}
			tl.AddHost(&h)
		}
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		runtime.KeepAlive(tl)
		return ms.HeapAlloc
	}
	small, large := held(1_000), held(400_000)
	// 400,000 host samples held would be 60 MB; 100 seconds of ticks are
	// a few kB.
	if large > small+4<<20 {
		t.Errorf("the tally of 400,000 samples of each file holds %d kB more than that of 1,000", (large-small)>>10)
	}
}
