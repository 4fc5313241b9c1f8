package tui

import (
	"sort"
	"time"

	"github.com/tokex-dev/tokex/charts"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
)

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

// campaignStopping is the campaign's state after a stop was asked for
// and before it finished (the summary.CampaignStatus values otherwise).
const campaignStopping = "stopping"

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

// maxHistory bounds how many runs keep their charts (a campaign may have
// 999 runs); older runs keep their figures, not their series.
const maxHistory = 64

// seriesCap is the points a run's series keeps before merging neighbours:
// more than the widest chart has braille columns at 200 cells.
const seriesCap = 400

// runData is what the dashboard shows of one run: its charts' series and its
// live counters. Finished runs keep theirs so history can show them.
type runData struct {
	start time.Time
	win   *event.Window // the latest window, live figures
	hops  int           // requests per arrival (a chain's hops): the target counts requests

	p50, p95, p99                     charts.TimeSeries // ms
	target, achieved, dropped, errors charts.TimeSeries // per second
	engines                           map[string]*engineSeries
	engineTot, engineMem              charts.TimeSeries // millicores, bytes
	gen, host                         charts.TimeSeries // millicores

	nWin, nEng, nGen    int              // events drawn per chart: versions for the cache
	droppedN, okN, errN int64            // measured phase
	errKinds            map[string]int64 // measured phase, by error key
	agents              map[int]agentRow
}

type engineSeries struct {
	name           string
	cpu            charts.TimeSeries
	mem            int64
	request, limit float64 // millicores, 0 when unknown
}

func newRunData(start time.Time) *runData {
	d := &runData{start: start, hops: 1, engines: map[string]*engineSeries{}, errKinds: map[string]int64{}, agents: map[int]agentRow{}}
	for _, s := range []*charts.TimeSeries{&d.p50, &d.p95, &d.p99, &d.target, &d.achieved, &d.dropped, &d.errors,
		&d.engineTot, &d.engineMem, &d.gen, &d.host} {
		s.Cap = seriesCap
	}
	return d
}

// sec places an event on the run's time axis, in whole seconds.
func (d *runData) sec(at time.Time) float64 {
	return float64(max(0, at.Sub(d.start)/time.Second))
}

func (d *runData) window(v event.Window) {
	w := v
	d.win = &w
	d.nWin++
	t := d.sec(v.At)
	per := v.Seconds
	if per <= 0 {
		per = 1
	}
	if v.Latency.Count > 0 {
		d.p50.Push(t, v.Latency.P50)
		d.p95.Push(t, v.Latency.P95)
		d.p99.Push(t, v.Latency.P99)
	}
	d.target.Push(t, v.TargetRPS*float64(d.hops))
	d.achieved.Push(t, v.AchievedRPS())
	d.dropped.Push(t, float64(v.Dropped)/per)
	d.errors.Push(t, float64(v.Errors)/per)
	if v.Phase != stats.Measured {
		return
	}
	d.droppedN += v.Dropped
	d.okN += v.OK
	d.errN += v.Errors
	for k, n := range v.ErrorKinds {
		if _, ok := d.errKinds[k]; ok || len(d.errKinds) < maxErrorKinds {
			d.errKinds[k] += n
		} else {
			d.errKinds[event.OtherErrors] += n
		}
	}
}

// maxErrorKinds bounds the error keys a run keeps live.
const maxErrorKinds = 32

func (d *runData) engine(v event.Resource) {
	es := d.engines[v.Name]
	if es == nil {
		if len(d.engines) >= maxEngines {
			return
		}
		es = &engineSeries{name: v.Name, cpu: charts.TimeSeries{Cap: seriesCap}}
		d.engines[v.Name] = es
	}
	t := d.sec(v.At)
	d.nEng++
	es.cpu.Push(t, v.CPUMillicores)
	es.mem, es.request, es.limit = v.MemoryBytes, v.RequestMillicores, v.LimitMillicores
	var cpu float64
	var mem int64
	for _, e := range d.engines {
		cpu += e.cpu.Last()
		mem += e.mem
	}
	d.engineTot.Push(t, cpu)
	d.engineMem.Push(t, float64(mem))
}

// maxEngines bounds the engines (processes or pods) a run draws.
const maxEngines = 64

func (d *runData) engineList() []*engineSeries {
	out := make([]*engineSeries, 0, len(d.engines))
	for _, e := range d.engines {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// sizes are the engines' summed CPU requests and limits in millicores, each
// 0 unless every engine has one.
func (d *runData) sizes() (request, limit float64) {
	allReq, allLim := len(d.engines) > 0, len(d.engines) > 0
	for _, e := range d.engines {
		request, limit = request+e.request, limit+e.limit
		allReq, allLim = allReq && e.request > 0, allLim && e.limit > 0
	}
	if !allReq {
		request = 0
	}
	if !allLim {
		limit = 0
	}
	return request, limit
}

func (d *runData) memory() int64 {
	var mem int64
	for _, e := range d.engines {
		mem += e.mem
	}
	return mem
}
