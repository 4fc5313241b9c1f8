// Package headless is the --no-tui consumer: plain progress lines for CI
// logs, then the summary tables.
package headless

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/collector/curve"
	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
	"github.com/tokex-dev/tokex/internal/termsafe"
	"github.com/tokex-dev/tokex/tui/health"
)

// Printer writes progress lines; every Nth measured window prints a line.
type Printer struct {
	W     io.Writer
	Every int // windows between progress lines; default 5
	// Deferred leaves the last screen (Report) to the caller: tokex run
	// prints it once the report is written, to say where.
	Deferred bool

	mu      sync.Mutex
	runs    int
	index   map[string]int
	plans   map[string]event.PlannedRun
	current event.PlannedRun
	started time.Time
	windows int
	engine  map[string]float64
	gen     float64
	host    *event.Host
	live    health.Live
	said    map[stats.WarningCode]bool // live warnings printed this run
	search  bool                       // a capacity search: it, not the thresholds, judges the runs
}

// New returns a printer to w. What it prints carries no control
// character but its own newlines, whatever the events hold: Consume
// sanitises each event once (termsafe.Copy: controls dropped, a newline
// inside a text a space), and everything printed is composed from it.
func New(w io.Writer) *Printer {
	return &Printer{W: w, Every: 5, index: map[string]int{}, engine: map[string]float64{}}
}

func (p *Printer) printf(format string, args ...any) { fmt.Fprintf(p.W, format, args...) }

// Consume is the event-bus consumer.
func (p *Printer) Consume(e event.Event) {
	e = termsafe.Copy(e)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch v := e.(type) {
	case event.CampaignStarted:
		p.campaignStarted(v)
	case event.Forecast:
		p.printf("%s\n", v.Line())
	case event.HostCheck:
		p.hostCheck(v)
	case event.RunStarted:
		p.runStarted(v)
	case event.Resource:
		switch v.Role {
		case "engine":
			p.engine[v.Name] = v.CPUMillicores
		case "generator":
			p.gen = v.CPUMillicores
			p.live.Generator(v.At, v.CPUMillicores/1000)
		}
	case event.Host:
		h := v
		p.host = &h
		if p.said != nil {
			p.live.Host(v.At, &h.HostMetrics)
			p.sayLive()
		}
	case event.PhaseChanged:
		if v.RunID == p.current.ID && v.Phase == stats.Measured {
			p.live.Measuring()
		}
	case event.Window:
		p.window(v)
	case event.Log:
		p.log(v)
	case event.RunFinished:
		p.runFinished(v)
	case event.Search:
		p.search = true
		p.probeJudged(v)
	case event.CampaignFinished:
		if v.Summary != nil && !p.Deferred {
			io.WriteString(p.W, "\n"+Report(v.Summary, ""))
		}
	}
}

func (p *Printer) campaignStarted(v event.CampaignStarted) {
	p.runs = len(v.Runs)
	p.index = map[string]int{}
	p.plans = map[string]event.PlannedRun{}
	var total time.Duration
	for _, r := range v.Runs {
		p.index[r.ID] = r.Index
		p.plans[r.ID] = r
		total += r.Total()
	}
	p.engine = map[string]float64{}
	p.printf("tokex campaign %s (%s) · driver %s · %s, about %s\n", v.ID, v.Name, v.Driver, units.Count(len(v.Runs), "run"), total.Round(time.Second))
	p.printf("target %s\n", v.Target)
	if len(v.Resumed) > 0 {
		p.printf("resuming: %s already done (%s)\n", units.Count(len(v.Resumed), "run"), strings.Join(v.Resumed, ", "))
	}
	p.search = v.Search != nil
	if p.search {
		p.printf("capacity search: the highest rate with %s\n", v.Search.Objective)
	}
}

// probeJudged prints the probe the search just judged, its verdict and
// the bracket so far.
func (p *Printer) probeJudged(v event.Search) {
	n := len(v.Result.Probes)
	if n == 0 || v.Result.Probes[n-1].Verdict == "" {
		return
	}
	pr := &v.Result.Probes[n-1]
	verdict, _ := doc.ProbeVerdict(pr)
	line := fmt.Sprintf("probe #%d %s %s · capacity %s", n, curve.RateLabel(pr.Rate), verdict, v.Result.Bracket())
	if v.Next > 0 {
		line += " · next " + curve.RateLabel(v.Next)
	}
	p.printf("%s\n", line)
}

func (p *Printer) runStarted(v event.RunStarted) {
	p.current, p.started, p.windows = v.Run, v.At, 0
	p.live.Reset(v.Run.Warmup <= 0)
	p.said = map[stats.WarningCode]bool{}
	kind := fmt.Sprintf("round %d", v.Run.Round)
	if v.Run.Sanity {
		kind = "sanity (discarded)"
	}
	p.printf("%s %s %s: %s, %d agents, warmup %s, measure %s\n", p.tag(v.Run.ID), v.Run.ID, kind,
		units.StageLabel(v.Run.TargetRPS), v.Run.Agents, v.Run.Warmup, v.Run.Duration)
}

// window feeds the live health rules and prints every Nth measured second.
func (p *Printer) window(v event.Window) {
	if v.RunID != p.current.ID {
		return
	}
	p.live.Window(v.TargetRPS, v.Latency.P50, v.SendLagP99, v.Phase == stats.Measured)
	p.sayLive()
	if v.Phase != stats.Measured {
		return
	}
	p.windows++
	if p.Every > 0 && p.windows%p.Every != 0 {
		return
	}
	var eng float64
	for _, m := range p.engine {
		eng += m
	}
	succ := "     —"
	if n := v.OK + v.Errors; n > 0 {
		succ = fmt.Sprintf("%6.2f%%", float64(v.OK)/float64(n)*100)
	}
	host := ""
	if p.host != nil && p.host.CPUs > 0 {
		host = fmt.Sprintf("  host %.2f/%d cores", p.host.BusyCores, p.host.CPUs)
	}
	p.printf("%s   t+%-4s %5.0f/s  ok %s  p95 %7.2f ms  p99 %7.2f ms  in-flight %d  dropped %d  engine %4.0f m  generator %4.0f m%s\n",
		p.tag(v.RunID), v.At.Sub(p.started).Round(time.Second), v.AchievedRPS(), succ, v.Latency.P95, v.Latency.P99,
		v.InFlight, v.Dropped, eng, p.gen, host)
}

// runFinished prints the run's figures, then its reason, warnings and most
// common errors.
func (p *Printer) runFinished(v event.RunFinished) {
	p.said = nil
	s := v.Stats
	if s == nil {
		p.printf("%s %s %s %s\n", p.tag(v.RunID), v.RunID, v.Status, v.Reason)
		return
	}
	mark := "✓"
	if !s.ThresholdsPassed {
		mark = "✗"
	}
	switch {
	case s.Sanity:
		mark = "(discarded)"
	case p.search:
		mark = "(a probe's round: the search judges it)"
	}
	cpu := "engine CPU n/a"
	if s.EngineCPU != nil {
		cpu = fmt.Sprintf("engine %.2f cores, %.2f CPU-ms/exchange", s.EngineCPU.AvgCores, s.EngineCPU.CPUMsPerExchange)
	}
	p95 := "p95 —"
	if s.Requests > 0 {
		p95 = fmt.Sprintf("p95 %.2f ms", s.LatencyMs.P95)
	}
	if v := s.Verification; v != nil {
		cpu += fmt.Sprintf(", %d tokens verified (%d failed)", v.Checked, v.Failed)
	}
	if s.Status == stats.StatusDone {
		p.printf("%s %s %s %s: %d exchanges, %.1f%% of arrivals answered, success %.2f%%, dropped %d, %s, %s\n",
			p.tag(v.RunID), v.RunID, v.Status, mark, s.Requests, s.AchievedRatio*100, s.SuccessRatio*100, s.Dropped, p95, cpu)
	} else {
		// Cut short: its figures cover part of the plan and are not reported.
		p.printf("%s %s %s after %.1f of %.0f s measured: %d exchanges, success %.2f%%, dropped %d, %s; not reported\n",
			p.tag(v.RunID), v.RunID, v.Status, max(0, s.MeasuredSeconds), p.plans[v.RunID].Duration.Seconds(), s.Requests, s.SuccessRatio*100, s.Dropped, p95)
	}
	if v.Reason != "" {
		p.printf("%s   reason: %s\n", p.tag(v.RunID), v.Reason)
	}
	for _, w := range s.Warnings {
		w.Run = ""
		p.printf("%s   warning: %s\n", p.tag(v.RunID), w)
	}
	for i, k := range s.TopErrors {
		if i == 3 {
			break
		}
		p.printf("%s   error: %s\n", p.tag(v.RunID), doc.ErrorKindText(k))
	}
	if l := doc.RetriedLine(s); l != "" {
		p.printf("%s   %s\n", p.tag(v.RunID), l)
	}
}

// sayLive prints a rule once it has broken often enough in this run's
// measured phase to become the run's warning; the run's statistics decide.
func (p *Printer) sayLive() {
	if p.said == nil {
		return
	}
	for _, c := range p.live.Codes() {
		if p.said[c] {
			continue
		}
		p.said[c] = true
		why := p.live.Now[c]
		if why == "" {
			why = "in earlier seconds"
		}
		p.printf("%s   ⚠ %s so far (%s)\n", p.tag(p.current.ID), c, why)
	}
}

func (p *Printer) tag(runID string) string {
	return fmt.Sprintf("[%*d/%d]", len(fmt.Sprint(p.runs)), p.index[runID]+1, p.runs)
}

// Report is a campaign's last screen, the campaign's document for the
// terminal: the answer first (the verdict and why, each stage's p95 and
// CPU per exchange, the capacity and marginal cost, where the report is
// when report is set), the warnings one line per code, then the tables,
// the thresholds and totals, the capacity search and the cost.
func Report(s *summary.Summary, report string) string {
	return doc.Campaign(termsafe.Copy(s), &doc.Page{Report: report}).Text()
}

// hostCheck says a busy machine at once, and a wait for a quiet one every
// ten seconds and when it ends; a quiet machine is only recorded.
func (p *Printer) hostCheck(v event.HostCheck) {
	switch {
	case v.State == event.HostQuiet && v.Waited == 0:
		return
	case v.State == event.HostWaiting && v.Waited > 0 && v.Waited%(10*time.Second) >= time.Second:
		return
	}
	p.printf("%s\n", v.Line())
}

// log prints warnings, errors and tokex's own notes (how it measures and
// authenticates); other servers' chatter stays in the evidence.
func (p *Printer) log(v event.Log) {
	switch {
	case v.Level == "warn" || v.Level == "error":
		p.printf("%s: [%s] %s\n", v.Level, v.Source, v.Message)
	case v.Source == "tokex" || v.Source == event.CoolDownSource:
		p.printf("note: %s\n", v.Message)
	}
}
