// Package k6import turns k6-native results (per-agent --out json NDJSON,
// per-agent logs with the end-of-test summary, an optional resource CSV)
// into a tokex evidence folder, so report, replay and compare work on them.
package k6import

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
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
	Summary  *stats.Summary
	Warnings []stats.Warning
}

type runInput struct {
	name    string
	ndjson  []string
	logs    []string
	exports []string
}

// Import reads opt.Dir and writes a new evidence folder under opt.Out.
func Import(opt Options) (*Result, error) {
	runs, err := discover(opt.Dir)
	if err != nil {
		return nil, err
	}
	tagK, tagV, ok := strings.Cut(opt.WarmupTag, "=")
	if opt.WarmupTag == "" {
		tagK, tagV, ok = "phase", "warmup", true
	}
	if !ok {
		return nil, fmt.Errorf("--warmup-tag must be key=value, got %q", opt.WarmupTag)
	}
	var samples []stats.ResourceSample
	res := &Result{}
	if opt.Resources != "" {
		f, err := os.Open(opt.Resources)
		if err != nil {
			return nil, err
		}
		var bad int
		samples, bad, err = ReadMonitorCSV(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", opt.Resources, err)
		}
		if bad > 0 {
			res.Warnings = append(res.Warnings, stats.Warn(stats.WarnMalformedInput, "", fmt.Sprintf("%s: %d malformed line(s) skipped", opt.Resources, bad)))
		}
	}

	var all []*parsed
	for i, in := range runs {
		p := &parsed{in: in}
		if err := p.read(tagK, tagV); err != nil {
			return nil, err
		}
		if len(p.rows) == 0 {
			res.Warnings = append(res.Warnings, stats.Warn(stats.WarnIncompleteEvidence, "", fmt.Sprintf("%s: no http_req_duration points; skipped", in.name)))
			continue
		}
		p.plan, p.meta = plan(p.rows, i, opt.Rate)
		p.plan.ID = fmt.Sprintf("%02d-%s", i, sanitize(in.name))
		p.meta.ID = p.plan.ID
		if opt.Rate == 0 {
			p.warn(stats.WarnNote, fmt.Sprintf("target rate %s inferred from arrivals (pass --rate to set it)", stats.StageLabel(p.plan.TargetRPS)))
		}
		all = append(all, p)
	}
	if len(all) == 0 {
		return nil, errors.New("nothing usable: no k6 --out json points of http_req_duration found in " + opt.Dir)
	}

	name := opt.Name
	if name == "" {
		name = "k6-import"
	}
	id := time.Now().UTC().Format("20060102-150405") + "-" + sanitize(name)
	cfg := fmt.Sprintf("# imported from k6 results\nsource: %q\nwarmup_tag: %s=%s\nresources: %q\n", opt.Dir, tagK, tagV, opt.Resources)
	first := all[0].meta.Started
	w, err := evidence.Create(filepath.Join(opt.Out, id), []byte(cfg), evidence.Manifest{Tool: "tokex", Version: opt.Tool,
		CampaignID: id, Name: name, Driver: "k6 import", Target: opt.Dir, Started: first})
	if err != nil {
		return nil, err
	}
	var planned []event.PlannedRun
	for _, p := range all {
		planned = append(planned, p.plan)
	}
	if err := w.SetPlan(planned); err != nil {
		return nil, err
	}
	w.Consume(event.CampaignStarted{At: first, ID: id, Name: name, Driver: "k6 import", Target: opt.Dir, Runs: planned, Thresholds: opt.Thresholds})
	var stRuns []*stats.Run
	for _, p := range all {
		if err := w.BeginRun(p.plan, p.meta.Started); err != nil {
			return nil, err
		}
		w.Consume(event.RunStarted{At: p.meta.Started, Run: p.plan})
		wins := runner.Windows(p.plan, p.rows, p.meta.Started, p.meta.MeasuredStart, p.meta.MeasuredEnd)
		// Interleave windows and resource samples in time order, as live.
		var evs []event.Event
		for _, x := range wins {
			evs = append(evs, x)
		}
		end := p.meta.MeasuredEnd.Add(2 * time.Second).UnixMicro()
		for _, s := range samples {
			if s.AtUS >= p.meta.Started.UnixMicro() && s.AtUS <= end {
				evs = append(evs, event.Resource{At: time.UnixMicro(s.AtUS).UTC(), Role: s.Kind, Name: s.Name,
					CPUMillicores: s.CPUMillicores, MemoryBytes: s.MemoryBytes, Source: s.Source})
			}
		}
		sort.SliceStable(evs, func(i, j int) bool { return event.Time(evs[i]).Before(event.Time(evs[j])) })
		if p.plan.Warmup > 0 {
			evs = append(evs, event.PhaseChanged{At: p.meta.MeasuredStart, RunID: p.plan.ID, Phase: stats.Measured})
			sort.SliceStable(evs, func(i, j int) bool { return event.Time(evs[i]).Before(event.Time(evs[j])) })
		}
		for _, e := range evs {
			w.Consume(e)
		}
		for i := range p.rows {
			w.Record(&p.rows[i])
		}
		for _, pw := range p.warnings {
			w.Consume(event.Log{At: p.meta.MeasuredEnd, Source: "import", Level: "warn", Message: pw.String()})
		}
		st, err := w.EndRun(p.meta, opt.Thresholds)
		if err != nil {
			return nil, err
		}
		st.Warnings = append(st.Warnings, p.warnings...)
		w.Consume(event.RunFinished{At: p.meta.MeasuredEnd, RunID: p.plan.ID, Status: st.Status, Stats: st})
		stRuns = append(stRuns, st)
		res.Warnings = append(res.Warnings, p.warnings...)
	}
	last := all[len(all)-1].meta.MeasuredEnd
	s := &stats.Summary{CampaignID: id, Name: name, Tool: "tokex " + opt.Tool, Driver: "k6 import", Target: opt.Dir,
		Status: "done", Started: first, Finished: last, Thresholds: opt.Thresholds}
	stats.BuildSummary(s, stRuns, true)
	w.SetStatus("done", "")
	w.Consume(event.CampaignFinished{At: last, Status: "done", Summary: s})
	if err := w.Finish(s); err != nil {
		return nil, err
	}
	res.Dir, res.Summary = w.Dir, s
	return res, nil
}

type parsed struct {
	in       runInput
	rows     []stats.Request
	plan     event.PlannedRun
	meta     stats.RunMeta
	warnings []stats.Warning
}

// read parses a run's files and reconciles them with the k6 summaries: a
// summary whose counts disagree with the points is incomplete evidence,
// reported with both figures.
// warn files a caveat on this run.
func (p *parsed) warn(code stats.WarningCode, detail string) {
	p.warnings = append(p.warnings, stats.Warn(code, p.plan.ID, detail))
}

func (p *parsed) read(tagK, tagV string) error {
	isWarm := func(tags map[string]string) bool {
		return tags[tagK] == tagV || strings.Contains(strings.ToLower(tags["scenario"]), "warmup")
	}
	type counts struct{ reqs, dropped float64 }
	perFile := make([]counts, len(p.in.ndjson))
	for a, path := range p.in.ndjson {
		rc, err := open(path)
		if err != nil {
			return err
		}
		var seq int64
		st, coarse, err := readPoints(path, rc, func(pt k6.Point) error {
			agent := a
			if v, err := strconv.Atoi(pt.Tags["instance_id"]); err == nil && len(p.in.ndjson) == 1 {
				agent = v
			}
			phase := stats.Measured
			if isWarm(pt.Tags) {
				phase = stats.Warmup
			}
			switch pt.Metric {
			case "http_req_duration":
				dur := int64(pt.Value * 1000)
				o, detail, status := outcome(pt.Tags)
				p.rows = append(p.rows, stats.Request{Agent: agent, Seq: seq, Phase: phase, ScheduledUS: pt.Time.UnixMicro() - dur,
					DurationUS: dur, Status: status, Outcome: o, Detail: detail})
				seq++
				perFile[a].reqs++
			case "dropped_iterations":
				for i := 0; i < int(pt.Value); i++ {
					p.rows = append(p.rows, stats.Request{Agent: agent, Seq: seq, Phase: phase, ScheduledUS: pt.Time.UnixMicro(), Outcome: "dropped"})
					seq++
				}
				perFile[a].dropped += pt.Value
			}
			return nil
		})
		rc.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if st.Malformed > 0 {
			p.warn(stats.WarnMalformedInput, fmt.Sprintf("%s: %d malformed line(s) skipped (first at line %d)", filepath.Base(path), st.Malformed, st.FirstBad))
		}
		if coarse {
			p.warn(stats.WarnNote, fmt.Sprintf("%s: k6 wrote whole-second timestamps (its default CSV timeFormat): request times are known to ±1 s, "+
				"latencies exactly; K6_CSV_TIME_FORMAT=unix_micro keeps the times", filepath.Base(path)))
		}
	}
	// Reconcile with end-of-test summaries (logs or exports), matched by
	// file stem, else by order.
	summaries := append(append([]string{}, p.in.logs...), p.in.exports...)
	for i, path := range p.in.ndjson {
		sp := match(path, summaries, i, len(p.in.ndjson))
		if sp == "" {
			continue
		}
		sum, err := readSummary(sp)
		if err != nil {
			p.warn(stats.WarnIncompleteEvidence, fmt.Sprintf("%s: %v", filepath.Base(sp), err))
			continue
		}
		n, ok := sum.Counter("http_reqs")
		if !ok { // a summary tokex cannot count from checks nothing: say so
			p.warn(stats.WarnIncompleteEvidence, fmt.Sprintf("%s: the k6 summary has no http_reqs count: %s is not cross-checked", filepath.Base(sp), filepath.Base(path)))
			continue
		}
		if n != perFile[i].reqs {
			p.warn(stats.WarnIncompleteEvidence, fmt.Sprintf("incomplete evidence: %s: the k6 summary counts %.0f requests, the points hold %.0f",
				filepath.Base(path), n, perFile[i].reqs))
		}
		// k6 leaves dropped_iterations out of a summary when none was dropped.
		if n, _ := sum.Counter("dropped_iterations"); n != perFile[i].dropped {
			p.warn(stats.WarnIncompleteEvidence, fmt.Sprintf("incomplete evidence: %s: the k6 summary counts %.0f dropped iterations, the points hold %.0f",
				filepath.Base(path), n, perFile[i].dropped))
		}
	}
	sort.SliceStable(p.rows, func(i, j int) bool { return p.rows[i].ScheduledUS < p.rows[j].ScheduledUS })
	return nil
}

// match pairs a points file with its summary: same stem, else same position
// when the counts agree.
func match(points string, summaries []string, i, n int) string {
	stem := func(p string) string {
		b := strings.TrimSuffix(filepath.Base(p), ".gz")
		return strings.TrimSuffix(b, filepath.Ext(b))
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

func readSummary(path string) (*k6.Summary, error) {
	rc, err := open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if strings.HasSuffix(strings.TrimSuffix(path, ".gz"), ".json") {
		return k6.ParseExport(rc)
	}
	return k6.ParseSummary(rc)
}

// discover finds the runs in dir: its own result files, or one sub-folder each.
func discover(dir string) ([]runInput, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	self := classify(dir, entries)
	if len(self.ndjson) > 0 {
		self.name = filepath.Base(dir)
		return []runInput{self}, nil
	}
	var out []runInput
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		es, err := os.ReadDir(sub)
		if err != nil {
			return nil, err
		}
		in := classify(sub, es)
		if len(in.ndjson) > 0 {
			in.name = e.Name()
			out = append(out, in)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no k6 --out json files (*.json, *.ndjson, optionally .gz) found", dir)
	}
	return out, nil
}

func classify(dir string, entries []os.DirEntry) runInput {
	var in runInput
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		n := e.Name()
		p := filepath.Join(dir, n)
		base := strings.TrimSuffix(n, ".gz")
		switch {
		case strings.HasSuffix(base, ".ndjson") || strings.HasSuffix(base, ".jsonl"):
			in.ndjson = append(in.ndjson, p)
		case strings.HasSuffix(base, ".json"):
			if isNDJSON(p) {
				in.ndjson = append(in.ndjson, p)
			} else {
				in.exports = append(in.exports, p)
			}
		case strings.HasSuffix(base, ".csv") && isK6CSV(p):
			in.ndjson = append(in.ndjson, p)
		case strings.HasSuffix(base, ".log") || strings.HasSuffix(base, ".txt"):
			in.logs = append(in.logs, p)
		}
	}
	sort.Strings(in.ndjson)
	sort.Strings(in.logs)
	sort.Strings(in.exports)
	return in
}

// isNDJSON sniffs the first line: k6 NDJSON lines carry "type" and "metric".
func isNDJSON(path string) bool {
	rc, err := open(path)
	if err != nil {
		return false
	}
	defer rc.Close()
	b := make([]byte, 512)
	n, _ := io.ReadFull(rc, b)
	first, _, _ := strings.Cut(string(b[:n]), "\n")
	return strings.Contains(first, `"metric"`) && strings.Contains(first, `"type"`)
}

func open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return f, nil
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{zr, f}, nil
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "run"
	}
	return b.String()
}

// plan derives a run's plan and measured window from its rows.
func plan(rows []stats.Request, idx int, rate float64) (event.PlannedRun, stats.RunMeta) {
	var first, mStart, mEnd int64 = math.MaxInt64, math.MaxInt64, 0
	var measured int64
	for i := range rows {
		r := &rows[i]
		first = min(first, r.ScheduledUS)
		if r.Phase == stats.Measured {
			measured++
			mStart = min(mStart, r.ScheduledUS)
			mEnd = max(mEnd, r.ScheduledUS+r.SendLagUS+r.DurationUS)
		}
	}
	if measured == 0 {
		mStart, mEnd = first, first
	}
	secs := float64(mEnd-mStart) / 1e6
	if rate == 0 && secs > 0 {
		rate = float64(measured) / secs
		p := math.Pow(10, math.Floor(math.Log10(rate))-1)
		rate = math.Round(rate/p) * p
	}
	agents := map[int]bool{}
	for i := range rows {
		agents[rows[i].Agent] = true
	}
	started := time.UnixMicro(first).UTC()
	ms, me := time.UnixMicro(mStart).UTC(), time.UnixMicro(mEnd).UTC()
	p := event.PlannedRun{Index: idx, Round: 1, TargetRPS: rate, Warmup: ms.Sub(started), Duration: me.Sub(ms), Agents: len(agents)}
	return p, stats.RunMeta{Index: idx, Round: 1, TargetRPS: rate, Agents: len(agents), Started: started,
		MeasuredStart: ms, MeasuredEnd: me, Status: stats.StatusDone}
}

// outcome classifies a k6 http_req_duration point: k6's expected_response
// tag when present (the script's own notion of success), else HTTP 200.
func outcome(tags map[string]string) (string, string, int) {
	status, _ := strconv.Atoi(tags["status"])
	exp, tagged := tags["expected_response"]
	switch {
	case status > 0 && ((tagged && exp == "true") || (!tagged && status == 200)):
		return "ok", "", status
	case status == 0:
		if tags["error_code"] == "1050" {
			return "timeout", "1050", 0
		}
		return "conn_error", tags["error_code"], 0
	default:
		return "http_error", strconv.Itoa(status), status
	}
}
