// Package k6import turns k6-native results (per-agent --out json NDJSON,
// per-agent logs with the end-of-test summary, an optional resource CSV)
// into a tokex evidence folder, so report, replay and compare work on them.
//
// The input may be damaged or hostile: every file is read through safefs
// (no link followed, regular files only), points are streamed twice (once
// for the run's bounds and counts, once into the evidence) and never held
// in memory, a malformed line or point is counted and skipped, and the new
// evidence folder appears whole or not at all.
package k6import

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/lines"
	"github.com/tokex-dev/tokex/internal/names"
	"github.com/tokex-dev/tokex/internal/safefs"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/k6"
)

// Options configure an import.
type Options struct {
	Dir        string // k6 results: files of one run, or one sub-folder per run
	Out        string // evidence parent folder
	Name       string
	WarmupTag  string // "k=v" marking warmup points (default phase=warmup)
	Resources  string // monitor CSV (timestamp,kind,name,cpu,memory)
	Rate       float64
	Thresholds stats.Thresholds
	Tool       string
}

// Result says what was imported and what was odd.
type Result struct {
	Dir      string
	Summary  *summary.Summary
	Warnings []stats.Warning
}

// Bounds of one import, whatever the files claim.
const (
	// maxFileBytes bounds one decompressed input file (a compression bomb
	// stops here with an error naming the file).
	maxFileBytes = 4 << 30
	// maxDurationMS bounds an http_req_duration point (24 h); maxDropped a
	// dropped_iterations point.
	maxDurationMS = 24 * 3600 * 1000
	maxDropped    = 1e15
	// maxAgentID bounds an instance_id tag used as the agent number.
	maxAgentID = 1_000_000
)

type runInput struct {
	name    string
	ndjson  []string // paths inside the source folder
	logs    []string
	exports []string
}

// Import reads opt.Dir and writes a new evidence folder under opt.Out.
func Import(opt Options) (*Result, error) {
	src, err := safefs.Open(opt.Dir)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	res := &Result{}
	runs, notes, err := discover(src)
	for _, n := range notes {
		res.Warnings = append(res.Warnings, stats.Warn(stats.WarnMalformedInput, "", n))
	}
	if err != nil {
		return nil, err
	}
	tagK, tagV, err := warmupTag(opt.WarmupTag)
	if err != nil {
		return nil, err
	}
	samples, err := res.readResources(opt.Resources)
	if err != nil {
		return nil, err
	}
	all, err := res.parseRuns(src, runs, opt, tagK, tagV)
	if err != nil {
		return nil, err
	}
	if res.Dir, res.Summary, err = publish(opt, all, samples, tagK+"="+tagV); err != nil {
		return nil, err
	}
	for _, p := range all {
		res.Warnings = append(append(res.Warnings, p.warnings...), p.meta.Warnings...)
	}
	return res, nil
}

// publish writes the evidence folder in a staging folder and moves it into
// place whole, or leaves nothing.
func publish(opt Options, all []*parsed, samples []sample.Resource, warmupTag string) (string, *summary.Summary, error) {
	name := opt.Name
	if name == "" {
		name = "k6-import"
	}
	cfg := fmt.Sprintf("# imported from k6 results\nsource: %q\nwarmup_tag: %q\nresources: %q\n", opt.Dir, warmupTag, opt.Resources)
	w, err := evidence.CreateStaged(opt.Out, name, time.Now(), []byte(cfg), evidence.Manifest{Tool: "tokex", Version: opt.Tool,
		Name: name, Driver: "k6 import", Target: opt.Dir, Started: all[0].meta.Started})
	if err != nil {
		return "", nil, err
	}
	s, err := write(w, all, samples, opt, name)
	if err == nil {
		err = w.Publish()
	}
	if err != nil {
		w.Discard()
		return "", nil, err
	}
	return w.Dir, s, nil
}

// warmupTag splits --warmup-tag's key=value (default phase=warmup).
func warmupTag(tag string) (k, v string, err error) {
	if tag == "" {
		return "phase", "warmup", nil
	}
	k, v, ok := strings.Cut(tag, "=")
	if !ok {
		return "", "", fmt.Errorf("--warmup-tag must be key=value, got %q", tag)
	}
	return k, v, nil
}

// readResources reads the optional monitor CSV; its malformed lines are
// skipped with a warning.
func (res *Result) readResources(file string) ([]sample.Resource, error) {
	if file == "" {
		return nil, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	samples, bad, err := ReadMonitorCSV(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if bad > 0 {
		res.Warnings = append(res.Warnings, stats.Warn(stats.WarnMalformedInput, "", fmt.Sprintf("%s: %d malformed line(s) skipped", file, bad)))
	}
	return samples, nil
}

// parseRuns scans every run's points (the first pass) and plans the runs
// that have any; a run without points is skipped with a warning.
func (res *Result) parseRuns(src *safefs.Dir, runs []runInput, opt Options, tagK, tagV string) ([]*parsed, error) {
	var all []*parsed
	for i, in := range runs {
		p := &parsed{src: src, in: in, warmK: tagK, warmV: tagV}
		if err := p.scan(); err != nil {
			return nil, err
		}
		if p.points == 0 {
			res.Warnings = append(res.Warnings, stats.Warn(stats.WarnIncompleteEvidence, "", fmt.Sprintf("%s: no http_req_duration points; skipped", in.name)))
			res.Warnings = append(res.Warnings, p.warnings...)
			continue
		}
		p.plan, p.meta = p.bounds.plan(i, opt.Rate)
		p.plan.ID = fmt.Sprintf("%02d-%s", i, names.File(in.name, "run"))
		p.meta.ID = p.plan.ID
		for k := range p.warnings {
			p.warnings[k].Run = p.plan.ID
		}
		if opt.Rate == 0 {
			p.warn(stats.WarnNote, fmt.Sprintf("target rate %s inferred from arrivals (pass --rate to set it)", units.StageLabel(p.plan.TargetRPS)))
		}
		all = append(all, p)
		if len(all) > stats.MaxRuns {
			return nil, fmt.Errorf("%s: more than %d runs", opt.Dir, stats.MaxRuns)
		}
	}
	if len(all) == 0 {
		return nil, errors.New("nothing usable: no k6 --out json or --out csv points of http_req_duration found in " + opt.Dir)
	}
	return all, nil
}

// write fills the staged folder: per run, the rows (second pass over the
// points), windows and resource samples in time order, the statistics.
func write(w *evidence.Writer, all []*parsed, samples []sample.Resource, opt Options, name string) (*summary.Summary, error) {
	id := w.Manifest().CampaignID
	var planned []event.PlannedRun
	for _, p := range all {
		planned = append(planned, p.plan)
	}
	if err := w.SetPlan(planned); err != nil {
		return nil, err
	}
	first := all[0].meta.Started
	w.Consume(event.CampaignStarted{At: first, ID: id, Name: name, Driver: "k6 import", Target: opt.Dir, Runs: planned, Thresholds: opt.Thresholds})
	rec := evidence.NewRecorder(w, nil)
	var stRuns []*stats.Run
	for _, p := range all {
		st, err := p.write(rec, w, samples, opt.Thresholds)
		if err != nil {
			return nil, err
		}
		stRuns = append(stRuns, st)
	}
	last := all[len(all)-1].meta.MeasuredEnd
	s := &summary.Summary{CampaignID: id, Name: name, Tool: "tokex " + opt.Tool, Driver: "k6 import", Target: opt.Dir,
		Status: summary.CampaignDone, Started: first, Finished: last, Thresholds: opt.Thresholds}
	summary.BuildSummary(s, stRuns, true)
	return s, rec.Finish(s)
}

// write records one run: its rows, then its windows, resource samples and
// the import's remarks as events, then its statistics.
func (p *parsed) write(rec *evidence.Recorder, w *evidence.Writer, samples []sample.Resource, th stats.Thresholds) (*stats.Run, error) {
	run, err := rec.Begin(p.plan, p.meta.Started)
	if err != nil {
		return nil, err
	}
	wb := runner.NewWindowBuilder(p.plan, p.meta.Started, p.meta.MeasuredStart, p.meta.MeasuredEnd)
	var descs descriptions
	if err := p.each(func(r *stats.Request) {
		run.Record(r)
		wb.Add(r)
		descs.add(r)
	}); err != nil {
		return nil, err
	}
	p.meta.ErrorDescriptions = descs.list()
	p.meta.Warnings = append(p.meta.Warnings, p.judge.warnings(p.plan.ID, p.in.logs)...)
	// Interleave windows and resource samples in time order, as live.
	var evs []event.Event
	for _, x := range wb.Windows() {
		evs = append(evs, x)
	}
	end := p.meta.MeasuredEnd.Add(2 * time.Second).UnixMicro()
	for _, s := range samples {
		if s.AtUS >= p.meta.Started.UnixMicro() && s.AtUS <= end {
			evs = append(evs, event.Resource{At: time.UnixMicro(s.AtUS).UTC(), Role: s.Kind, Name: s.Name,
				CPUMillicores: s.CPUMillicores, MemoryBytes: s.MemoryBytes, Source: s.Source})
		}
	}
	if p.plan.Warmup > 0 {
		evs = append(evs, event.PhaseChanged{At: p.meta.MeasuredStart, RunID: p.plan.ID, Phase: stats.Measured})
	}
	sort.SliceStable(evs, func(i, j int) bool { return event.Time(evs[i]).Before(event.Time(evs[j])) })
	for _, e := range evs {
		w.Consume(e)
	}
	for _, pw := range p.warnings {
		w.Consume(event.Log{At: p.meta.MeasuredEnd, Source: "import", Level: "warn", Message: pw.String()})
	}
	return run.End(p.meta.MeasuredEnd, p.meta, th, p.warnings...)
}

type parsed struct {
	src          *safefs.Dir
	in           runInput
	warmK, warmV string
	points       int64 // usable http_req_duration points
	bounds       bounds
	plan         event.PlannedRun
	meta         stats.RunMeta
	warnings     []stats.Warning
	judge        judge // who says an exchange succeeded (judge.go)
}

// warn files a caveat on this run.
func (p *parsed) warn(code stats.WarningCode, detail string) {
	p.warnings = append(p.warnings, stats.Warn(code, p.plan.ID, detail))
}

// scan is the first pass: the run's bounds and counts, the reconciliation
// with the k6 summaries (a summary whose counts disagree with the points is
// incomplete evidence, reported with both figures), and what was malformed.
func (p *parsed) scan() error {
	perFile := make([]struct{ reqs, dropped float64 }, len(p.in.ndjson))
	agents := map[int]bool{}
	if err := p.judge.readLines(p); err != nil {
		return err
	}
	for a, name := range p.in.ndjson {
		st, coarse, bad, err := p.scanPoints(a, false, func(r *stats.Request) {
			if r.Dropped() {
				perFile[a].dropped += float64(r.Arrivals())
			} else {
				perFile[a].reqs++
				p.points++
			}
			if len(agents) < maxAgentID {
				agents[r.Agent] = true
			}
			p.bounds.add(r)
		})
		if err != nil {
			return err
		}
		p.judge.endFile(a)
		if p.points > stats.MaxRunRows {
			return fmt.Errorf("%s: more than %d points in one run", p.in.name, stats.MaxRunRows)
		}
		if n := st.Malformed + bad; n > 0 {
			msg := fmt.Sprintf("%s: %d malformed line(s) skipped", path.Base(name), n)
			if st.FirstBad > 0 {
				msg += fmt.Sprintf(" (first at line %d)", st.FirstBad)
			}
			if bad > 0 {
				msg += fmt.Sprintf(", %d of them points with impossible values", bad)
			}
			p.warn(stats.WarnMalformedInput, msg)
		}
		if coarse {
			p.warn(stats.WarnNote, fmt.Sprintf("%s: k6 wrote whole-second timestamps (its default CSV timeFormat): request times are known to ±1 s, "+
				"latencies exactly; K6_CSV_TIME_FORMAT=unix_micro keeps the times", path.Base(name)))
		}
		if st.Truncated {
			p.warn(stats.WarnIncompleteEvidence, fmt.Sprintf("%s: the file is truncated after line %d; the points before the cut were imported", path.Base(name), st.Lines))
		}
	}
	p.bounds.agents = len(agents)
	summaries := append(append([]string{}, p.in.logs...), p.in.exports...)
	for i, name := range p.in.ndjson {
		sp := match(name, summaries, i, len(p.in.ndjson))
		if sp == "" {
			continue
		}
		sum, err := readSummary(p.src, sp)
		if err != nil {
			p.warn(stats.WarnIncompleteEvidence, fmt.Sprintf("%s: %v", path.Base(sp), err))
			continue
		}
		n, ok := sum.Counter("http_reqs")
		if !ok { // a summary tokex cannot count from checks nothing: say so
			p.warn(stats.WarnIncompleteEvidence, fmt.Sprintf("%s: the k6 summary has no http_reqs count: %s is not cross-checked", path.Base(sp), path.Base(name)))
			continue
		}
		if n != perFile[i].reqs {
			p.warn(stats.WarnIncompleteEvidence, fmt.Sprintf("incomplete evidence: %s: the k6 summary counts %.0f requests, the points hold %.0f",
				path.Base(name), n, perFile[i].reqs))
		}
		// k6 leaves dropped_iterations out of a summary when none was dropped.
		if n, _ := sum.Counter("dropped_iterations"); n != perFile[i].dropped {
			p.warn(stats.WarnIncompleteEvidence, fmt.Sprintf("incomplete evidence: %s: the k6 summary counts %.0f dropped iterations, the points hold %.0f",
				path.Base(name), n, perFile[i].dropped))
		}
	}
	return nil
}

// each is the second pass: every row, file after file.
func (p *parsed) each(fn func(*stats.Request)) error {
	for a := range p.in.ndjson {
		p.judge.ordinal = nil
		if _, _, _, err := p.scanPoints(a, true, fn); err != nil {
			return err
		}
	}
	return nil
}

// scanPoints streams the rows of points file a; bad counts points whose
// values are impossible (a negative or endless duration, a time no calendar
// has); coarse says k6 wrote whole-second times.
func (p *parsed) scanPoints(a int, final bool, fn func(*stats.Request)) (k6.NDJSONStats, bool, int, error) {
	name := p.in.ndjson[a]
	rc, lim, err := open(p.src, name)
	if err != nil {
		return k6.NDJSONStats{}, false, 0, err
	}
	defer rc.Close()
	var seq int64
	bad := 0
	st, coarse, err := readPoints(name, rc, func(pt k6.Point) error {
		agent := a
		if v, err := strconv.Atoi(pt.Tags["instance_id"]); err == nil && len(p.in.ndjson) == 1 && v >= 0 && v < maxAgentID {
			agent = v
		}
		phase := stats.Measured
		if pt.Tags[p.warmK] == p.warmV || strings.Contains(strings.ToLower(pt.Tags["scenario"]), "warmup") {
			phase = stats.Warmup
		}
		judge := func() (exchange.Outcome, string, int) { return statusOutcome(pt.Tags) }
		if final {
			judge = func() (exchange.Outcome, string, int) { return p.judge.outcome(a, pt, phase) }
		}
		r, ok := row(pt, agent, phase, seq, judge)
		if !ok {
			bad++
			return nil
		}
		if !final && (pt.Metric == "checks" || pt.Metric == "http_req_duration") {
			p.judge.notePoint(pt)
		}
		if r.Outcome != "" {
			if final {
				p.judge.agentic(&r)
			}
			seq++
			fn(&r)
		}
		return nil
	})
	if lim.Hit {
		return st, coarse, bad, fmt.Errorf("%s: refused: more than %d bytes decompressed (a compression bomb?)", name, maxFileBytes)
	}
	if err != nil {
		return st, coarse, bad, fmt.Errorf("%s: %w", name, err)
	}
	return st, coarse, bad, nil
}

// row turns one point into a row; ok is false for impossible values, and a
// point of another metric gives a row without outcome (skipped).
func row(pt k6.Point, agent int, phase stats.Phase, seq int64, judge func() (exchange.Outcome, string, int)) (stats.Request, bool) {
	var r stats.Request
	if math.IsNaN(pt.Value) || math.IsInf(pt.Value, 0) || pt.Time.Year() < 1 || pt.Time.Year() > 9999 {
		return r, false
	}
	switch pt.Metric {
	case "http_req_duration":
		if pt.Value < 0 || pt.Value > maxDurationMS {
			return r, false
		}
		dur := int64(pt.Value * 1000)
		if time.UnixMicro(pt.Time.UnixMicro()-dur).Year() < 1 {
			return stats.Request{}, false
		}
		o, detail, status := judge()
		r = stats.Request{Agent: agent, Seq: seq, Phase: phase, ScheduledUS: pt.Time.UnixMicro() - dur,
			DurationUS: dur, Status: status, Outcome: o, Detail: detail, Description: description(pt.Tags, o, detail)}
	case "dropped_iterations":
		// k6 gives a count and no times: one row stands for all of them.
		if pt.Value < 0 || pt.Value > maxDropped || pt.Value != math.Trunc(pt.Value) {
			return r, false
		}
		if pt.Value == 0 {
			return r, true
		}
		r = stats.Request{Agent: agent, Seq: seq, Phase: phase, ScheduledUS: pt.Time.UnixMicro(), Outcome: exchange.OutcomeDropped, Count: int64(pt.Value)}
		if r.Count == 1 {
			r.Count = 0
		}
	}
	return r, true
}

// bounds are what the first pass learns of a run's rows.
type bounds struct {
	first, mStart, mEnd int64
	measured            int64 // measured arrivals (sent or dropped)
	agents              int
	seen                bool
}

func (b *bounds) add(r *stats.Request) {
	if !b.seen {
		b.first, b.mStart, b.mEnd, b.seen = math.MaxInt64, math.MaxInt64, math.MinInt64, true
	}
	b.first = min(b.first, r.ScheduledUS)
	if r.Phase == stats.Measured {
		b.measured += r.Arrivals()
		b.mStart = min(b.mStart, r.ScheduledUS)
		b.mEnd = max(b.mEnd, r.ScheduledUS+r.SendLagUS+r.DurationUS)
	}
}

// plan derives a run's plan and measured window from its bounds.
func (b *bounds) plan(idx int, rate float64) (event.PlannedRun, stats.RunMeta) {
	mStart, mEnd := b.mStart, b.mEnd
	if b.measured == 0 {
		mStart, mEnd = b.first, b.first
	}
	secs := float64(mEnd-mStart) / 1e6
	if rate == 0 && secs > 0 {
		rate = float64(b.measured) / secs
		p := math.Pow(10, math.Floor(math.Log10(rate))-1)
		rate = math.Round(rate/p) * p
	}
	started := time.UnixMicro(b.first).UTC()
	ms, me := time.UnixMicro(mStart).UTC(), time.UnixMicro(mEnd).UTC()
	p := event.PlannedRun{Index: idx, Round: 1, TargetRPS: rate, Warmup: ms.Sub(started), Duration: me.Sub(ms), Agents: b.agents}
	return p, stats.RunMeta{Index: idx, Round: 1, TargetRPS: rate, Agents: b.agents, Started: started,
		MeasuredStart: ms, MeasuredEnd: me, Status: stats.StatusDone}
}

// match pairs a points file with its summary: same stem, else same position
// when the counts agree.
func match(points string, summaries []string, i, n int) string {
	stem := func(p string) string {
		b := strings.TrimSuffix(path.Base(p), ".gz")
		return strings.TrimSuffix(b, path.Ext(b))
	}
	for _, s := range summaries {
		if stem(s) == stem(points) {
			return s
		}
	}
	if len(summaries) == n {
		return summaries[i]
	}
	return ""
}

func readSummary(src *safefs.Dir, name string) (*k6.Summary, error) {
	rc, _, err := open(src, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if strings.HasSuffix(strings.TrimSuffix(name, ".gz"), ".json") {
		return k6.ParseExport(rc)
	}
	return k6.ParseSummary(rc)
}

// discover finds the runs in the source folder: its own result files, or
// one sub-folder each. Links and special files are skipped and said so.
func discover(src *safefs.Dir) ([]runInput, []string, error) {
	var notes []string
	entries, err := src.ReadDir(".")
	if err != nil {
		return nil, nil, err
	}
	self := classify(src, ".", entries, &notes)
	if len(self.ndjson) > 0 {
		self.name = path.Base(src.Path())
		return []runInput{self}, notes, nil
	}
	var out []runInput
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		es, err := src.ReadDir(e.Name())
		if err != nil {
			return nil, notes, err
		}
		in := classify(src, e.Name(), es, &notes)
		if len(in.ndjson) > 0 {
			in.name = e.Name()
			out = append(out, in)
		}
	}
	if len(out) == 0 {
		return nil, notes, fmt.Errorf("%s: no k6 --out json or --out csv files (*.json, *.ndjson, *.csv, optionally .gz) found", src.Path())
	}
	return out, notes, nil
}

func classify(src *safefs.Dir, dir string, entries []fs.DirEntry, notes *[]string) runInput {
	var in runInput
	for _, e := range entries {
		n := e.Name()
		p := path.Join(dir, n)
		if e.IsDir() {
			continue
		}
		base := strings.TrimSuffix(n, ".gz")
		known := strings.HasSuffix(base, ".ndjson") || strings.HasSuffix(base, ".jsonl") || strings.HasSuffix(base, ".json") ||
			strings.HasSuffix(base, ".csv") || strings.HasSuffix(base, ".log") || strings.HasSuffix(base, ".txt")
		if !known {
			continue
		}
		if !e.Type().IsRegular() {
			*notes = append(*notes, fmt.Sprintf("%s: skipped: not a regular file (a link or special file is never followed)", p))
			continue
		}
		switch {
		case strings.HasSuffix(base, ".ndjson") || strings.HasSuffix(base, ".jsonl"):
			in.ndjson = append(in.ndjson, p)
		case strings.HasSuffix(base, ".json"):
			if isNDJSON(src, p) {
				in.ndjson = append(in.ndjson, p)
			} else {
				in.exports = append(in.exports, p)
			}
		case strings.HasSuffix(base, ".csv"):
			if isK6CSV(src, p) {
				in.ndjson = append(in.ndjson, p)
			}
		default:
			in.logs = append(in.logs, p)
		}
	}
	sort.Strings(in.ndjson)
	sort.Strings(in.logs)
	sort.Strings(in.exports)
	return in
}

// isNDJSON sniffs the first line: k6 NDJSON lines carry "type" and "metric".
func isNDJSON(src *safefs.Dir, name string) bool {
	rc, _, err := open(src, name)
	if err != nil {
		return false
	}
	defer rc.Close()
	b := make([]byte, 512)
	n, _ := io.ReadFull(rc, b)
	first, _, _ := strings.Cut(string(b[:n]), "\n")
	return strings.Contains(first, `"metric"`) && strings.Contains(first, `"type"`)
}

// open opens a file of the source folder, decompressing .gz, within
// maxFileBytes.
func open(src *safefs.Dir, name string) (io.ReadCloser, *lines.Capped, error) {
	f, err := src.Open(name)
	if err != nil {
		return nil, nil, err
	}
	var r io.Reader = f
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		r = zr
	}
	lim := lines.Cap(r, maxFileBytes)
	return struct {
		io.Reader
		io.Closer
	}{lim, f}, lim, nil
}
