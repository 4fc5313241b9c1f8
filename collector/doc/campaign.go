package doc

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/table"
	"github.com/tokex-dev/tokex/collector/units"
)

// The sections of a campaign's document, by what they are about: the same
// ID in every medium, also where the media still say it differently.
const (
	SecAnswer      = "answer"      // the verdict and why, the figures that answer, where the report is
	SecHeader      = "header"      // who, what, when; summary.md's verdict and totals
	SecTiles       = "tiles"       // the report's headline figures
	SecWarnings    = "warnings"    // what changes the meaning of the figures
	SecLatency     = "latency"     // the article's latency table
	SecSchedule    = "schedule"    // the same from the scheduled time
	SecResources   = "resources"   // the article's resource table
	SecCost        = "cost"        // capacity, marginal cost, projection
	SecProbes      = "probes"      // a capacity search's probes
	SecSpread      = "spread"      // p95 of every round
	SecVerdict     = "verdict"     // the terminal's verdict and totals
	SecRuns        = "runs"        // the report's runs, one section each
	SecDefinitions = "definitions" // what the figures mean
)

// Page is what only the HTML report adds to the document: the manifest's
// word on the campaign, whether the figures were recomputed, what reading
// the runs' files found, the cost curve's charts and the runs' sections.
type Page struct {
	CampaignID string
	Status     summary.CampaignStatus
	Reason     string
	// Recomputed: there is no summary.json; the figures come from the rows,
	// the thresholds are unknown.
	Recomputed bool
	Notes      []string
	Curve      []template.HTML
	// Agentic are the charts of the section on chains, actor tokens and
	// the premium (the report's per-hop and per-grant charts).
	Agentic []template.HTML
	Runs    func(io.Writer) error
	// Report is where the report was written: the terminal says it with
	// the answer.
	Report string
}

// Campaign is the document of a campaign's summary. page is the report's
// (nil for the terminal and summary.md; without a status, the summary's
// own word is taken). Every medium reads the sections in this order, each
// those shown in it: the answer first, then the article's tables and the
// cost curve, then the warnings grouped by code (the terminal: before the
// tables, one line each).
func Campaign(s *summary.Summary, page *Page) *Document {
	p := Page{}
	if page != nil {
		p = *page
	}
	if p.Status == "" {
		p.Status, p.Reason = s.Status, s.Reason
	}
	if p.CampaignID == "" {
		p.CampaignID = s.CampaignID
	}
	page = &p
	cost := CostLines(s)
	groups := Groups(s, page)
	d := &Document{Title: "tokex campaign " + s.CampaignID, Sections: []Section{
		header(s, true),
		answer(s, page, groups),
		header(s, false),
		{ID: SecTiles, In: HTML, Blocks: []Block{{Kind: Tiles, Tiles: tiles(s)}}},
		{ID: SecWarnings, In: Text, Title: warningsTitle, Brief: "every run's details in summary.md", Blocks: warningBlocks(s, groups)},
		latency(s),
		{ID: SecSchedule, Title: "From the scheduled time (coordinated-omission-free)", Sub: true, Blocks: []Block{tableBlock(ScheduleTable(s))}},
		{ID: SecResources, Title: "Resource consumption", Brief: "reported run per stage", Blocks: []Block{
			{Kind: Para, In: Markdown | HTML, Class: "meta", Lines: says([]string{"Reported run per stage. CPU per exchange = engine CPU in the measured window ÷ completed exchanges."})},
			tableBlock(ResourceTable(s))}},
		costMarkdown(s, cost),
		costHTML(s, cost, page.Curve),
		{ID: SecWarnings, In: Markdown | HTML, Title: warningsTitle, Blocks: warningBlocks(s, groups)},
		{ID: SecSpread, In: HTML, Title: "p95 spread between rounds", Blocks: []Block{tableBlock(SpreadTable(s))}},
		verdict(s),
		probesText(s, cost),
		{ID: SecCost, In: Text, Blocks: []Block{{Kind: Para, Lines: says(cost)}}},
		{ID: SecDefinitions, In: Markdown, Blocks: []Block{{Kind: Footer, Lines: says([]string{summary.LatencyDefinition, summary.SendLagDefinition(s.Driver)})}}},
		{ID: SecRuns, In: HTML, Title: "Runs", Blocks: []Block{{Kind: Slot, Slot: page.Runs}}},
		{ID: SecDefinitions, In: HTML, Blocks: []Block{{Kind: Footer, Lines: []Line{Say(s.LatencyDefinition), Say(s.SendLagDefinition),
			Say("Every figure here is computed from the evidence folder (" + page.CampaignID + "): requests.csv.gz, resources.csv and host.csv of each run.")}}}},
	}}
	if s.Agentic != nil { // after the article's tables; a campaign of single exchanges has none (not even HTML's empty line)
		i := slices.IndexFunc(d.Sections, func(sec Section) bool { return sec.ID == SecResources })
		d.Sections = slices.Insert(d.Sections, i+1, agentic(s, page.Agentic))
	}
	return d
}

const warningsTitle = "Warnings"

func says(ss []string) []Line {
	out := make([]Line, len(ss))
	for i, s := range ss {
		out[i] = Say(s)
	}
	return out
}

func tableBlock(t table.Table) Block { return Block{Kind: Table, Table: &t} }

func passed(ok bool) string {
	if ok {
		return "PASSED"
	}
	return "FAILED"
}

// header: the report's line under its title (byline), or summary.md's
// list of who, what, when, the thresholds' verdict and the totals, under
// the answer.
func header(s *summary.Summary, byline bool) Section {
	if byline {
		line := fmt.Sprintf("%s · driver %s · target %s · status %s · %s → %s · %s", s.Name, s.Driver, s.Target, s.Status,
			s.Started.UTC().Format("2006-01-02 15:04:05 UTC"), s.Finished.UTC().Format("15:04:05 UTC"), s.Tool)
		return Section{ID: SecHeader, In: HTML, Blocks: []Block{{Kind: Byline, Lines: []Line{Say(line)}}}}
	}
	status := string(s.Status)
	if s.Reason != "" {
		status += " (" + s.Reason + ")"
	}
	md := says([]string{"name: " + s.Name, "driver: " + s.Driver, "target: " + s.Target, "status: " + status,
		"started: " + s.Started.UTC().Format(time.RFC3339) + ", finished: " + s.Finished.UTC().Format(time.RFC3339)})
	md = append(md, Line{{Text: fmt.Sprintf("thresholds (%s): ", ThresholdsText(s.Thresholds))}, {Text: passed(s.ThresholdsPassed), Strong: true}},
		Say(fmt.Sprintf("%s exchanges in %s, %.2f%% success, %s dropped%s", units.Thousands(s.Totals.Exchanges),
			units.Count(s.Totals.Runs, "counted run"), s.Totals.SuccessRatio*100, units.Thousands(s.Totals.Dropped), RetriedNote(s.Totals))))
	if l := VerifiedLine(s.Totals); l != "" {
		md = append(md, Say(l))
	}
	return Section{ID: SecHeader, In: Markdown, Blocks: []Block{{Kind: List, Lines: md}}}
}

// latency is the article's first table, what it shows and how each
// stage's run was chosen, and every run's p95.
func latency(s *summary.Summary) Section {
	rule := "Reported run per stage: "
	return Section{ID: SecLatency, Title: "Latency by stage",
		Brief: "reported run of " + roundsWord(s) + " (median by p95, failed runs last), measured phase, from send time",
		Blocks: []Block{
			{Kind: Para, In: Markdown, Lines: []Line{Say(rule + summary.ReportedRunRule + ". Measured phase only, warmup excluded; latency from send time. " +
				"Runs: how many of the stage's runs passed their thresholds (✗: some failed).")}},
			{Kind: Para, In: HTML, Class: "meta", Lines: []Line{{{Text: rule, Ours: true}, {Text: s.ReportedRunRule}, {Text: ". Measured phase only, warmup excluded; " +
				"latency from send time (like k6's http_req_duration). Runs: how many of the stage's runs passed their thresholds.", Ours: true}}}},
			tableBlock(LatencyTable(s)),
			{Kind: Para, Lines: []Line{Say("Per-run p95: " + SpreadLine(s))}},
		}}
}

func roundsWord(s *summary.Summary) string {
	n := 0
	for _, st := range s.Stages {
		n = max(n, len(st.Runs))
	}
	if n == 1 {
		return "1 round"
	}
	return fmt.Sprintf("%d rounds", n)
}

// costMarkdown is summary.md's capacity and marginal cost, the probes
// after them.
func costMarkdown(s *summary.Summary, lines []string) Section {
	sec := Section{ID: SecCost, In: Markdown, Title: "Capacity and marginal cost"}
	if len(lines) == 0 {
		return sec
	}
	sec.Blocks = []Block{{Kind: List, Lines: says(lines)}}
	if s.Capacity != nil && len(s.Capacity.Probes) > 0 {
		sec.Blocks = append(sec.Blocks, tableBlock(ProbeTable(s.Capacity)))
	}
	return sec
}

// costHTML is the report's cost curve: the lines, the charts, the probes
// and how the fit is made.
func costHTML(s *summary.Summary, lines []string, charts []template.HTML) Section {
	sec := Section{ID: SecCost, In: HTML, Title: "Cost curve: capacity and marginal cost"}
	if len(lines) == 0 && len(charts) == 0 {
		return sec
	}
	probes := Block{Kind: Table, Caption: "Capacity search: probes in the order they ran"}
	if s.Capacity != nil && len(s.Capacity.Probes) > 0 {
		t := ProbeTable(s.Capacity)
		probes.Table = &t
	}
	def := Block{Kind: Para, Class: "meta"}
	if s.Cost != nil {
		def.Lines = []Line{Say(s.Cost.Definition)}
	}
	sec.Blocks = []Block{{Kind: List, ID: "cost", Lines: says(lines)}, {Kind: Figures, Figures: charts}, probes, def}
	return sec
}

// probesText is the terminal's capacity search, before the cost lines.
func probesText(s *summary.Summary, lines []string) Section {
	sec := Section{ID: SecProbes, In: Text, Title: "Capacity search (probes in the order they ran):"}
	if len(lines) > 0 && s.Capacity != nil && len(s.Capacity.Probes) > 0 {
		sec.Blocks = []Block{tableBlock(ProbeTable(s.Capacity))}
	}
	return sec
}

// verdict is the terminal's last word: the thresholds' verdict, the
// totals, how the campaign ended, the tokens verified.
func verdict(s *summary.Summary) Section {
	status := string(s.Status)
	if s.Reason != "" {
		status += ": " + s.Reason
	}
	lines := []string{fmt.Sprintf("Thresholds (%s): %s · %s exchanges, %.2f%% success, %d dropped%s · campaign %s", ThresholdsText(s.Thresholds), passed(s.ThresholdsPassed),
		units.Thousands(s.Totals.Exchanges), s.Totals.SuccessRatio*100, s.Totals.Dropped, RetriedNote(s.Totals), status)}
	if l := VerifiedLine(s.Totals); l != "" {
		lines = append(lines, strings.ToUpper(l[:1])+l[1:])
	}
	return Section{ID: SecVerdict, In: Text, Blocks: []Block{{Kind: Para, Lines: says(lines)}}}
}

// tiles are the report's headline figures: the verdict, the totals, each
// stage's p95 and CPU per exchange.
func tiles(s *summary.Summary) []Tile {
	out := []Tile{{"exchanges (measured)", units.Thousands(s.Totals.Exchanges), table.Plain},
		{"success", fmt.Sprintf("%.2f%%", s.Totals.SuccessRatio*100), okTone(s.Totals.SuccessRatio >= 0.99)},
		{"dropped", units.Thousands(s.Totals.Dropped), okTone(s.Totals.Dropped == 0)}}
	if vf := s.Totals.Verified; vf != nil {
		out = append(out, Tile{fmt.Sprintf("tokens verified (%.4g %% at random)", vf.Sample*100),
			fmt.Sprintf("%s · %s failed", units.Thousands(vf.Checked), units.Thousands(vf.Failed)), okTone(vf.Failed == 0)})
	}
	for _, st := range s.Stages {
		r := st.Reported()
		if r == nil {
			continue
		}
		label, tone := "p95 at "+st.Label(), table.Plain
		if len(st.FailedRuns) > 0 {
			label, tone = label+" ("+RunsVerdict(st)+")", table.Bad
		}
		p95 := "no exchange"
		if r.Requests > 0 {
			p95 = fmt.Sprintf("%.2f ms", r.LatencyMs.P95)
		}
		out = append(out, Tile{label, fmt.Sprintf("%s · %.2f%% ok", p95, r.SuccessRatio*100), tone})
		if r.EngineCPU != nil {
			out = append(out, Tile{"CPU-ms / exchange at " + st.Label(), fmt.Sprintf("%.2f", r.EngineCPU.CPUMsPerExchange), table.Plain})
		}
	}
	return out
}

func okTone(ok bool) table.Tone {
	if ok {
		return table.Good
	}
	return table.Bad
}

func allRuns(s *summary.Summary) []*stats.Run {
	var out []*stats.Run
	for _, st := range append(slices.Clone(s.Stages), s.Variants...) {
		out = append(out, st.Runs...)
	}
	return out
}

func suffix(reason string) string {
	if reason == "" {
		return ""
	}
	return " (" + reason + ")"
}
