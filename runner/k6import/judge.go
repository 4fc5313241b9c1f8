package k6import

import (
	"bufio"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/runner/k6"
)

// Success is what the run's own checks say, never k6's expected_response
// tag (any 2xx or 3xx): a 307 is "expected" to k6 and no token to tokex.
// The judge, best first: the outcome tokex's agent script printed for the
// request (its lines in the logs beside the points, matched by phase,
// status and duration); else k6's checks points (a failed check fails the
// request that ended last before it in its scenario); else nothing, said
// as success_unknown, the rows counting HTTP 200 alone.
type judge struct {
	lines   map[judgeKey][]judged // tokex lines not yet matched to a point
	nLines  int
	checks  bool                     // the points hold k6 checks
	failed  map[int]map[string][]int // per points file and scenario: request ordinals a failed check fails
	ends    map[string][]reqEnd      // the first pass's request ends of the current file, by scenario
	ordinal map[string]int           // the second pass's request count of the current file, by scenario
	fails   []int64                  // failed checks of the current file (µs), with their scenario in failsSc
	failsSc []string

	unmatched int64 // points tokex lines did not judge while lines exist
	unjudged  int64 // points no check judged
	// matched is the line the last point judged was matched to (ok false:
	// none): its kind, hop and token size go to the point's row.
	matched judged
	ok      bool
}

type judgeKey struct {
	phase  stats.Phase
	status int
	durUS  int64
}

type judged struct {
	outcome    exchange.Outcome
	detail     string
	kind       exchange.Grant
	hop        int
	tokenBytes int
}

// agentic gives row r the kind, hop and token size of the line its point
// was matched to (tokex4 lines of the agent script), when it was.
func (j *judge) agentic(r *stats.Request) {
	if !j.ok {
		return
	}
	r.Kind, r.Hop = j.matched.kind, j.matched.hop
	if r.OK() {
		r.TokenBytes = j.matched.tokenBytes
	}
}

type reqEnd struct {
	atUS    int64
	ordinal int
}

// readLines collects the tokex lines of the run's logs (bounded: one run's
// rows at most); malformed ones are the summary's business.
func (j *judge) readLines(p *parsed) error {
	for _, name := range p.in.logs {
		rc, _, err := open(p.src, name)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(rc)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() && j.nLines < stats.MaxRunRows {
			l, ok, err := k6.ParseLine(sc.Text())
			if !ok || err != nil {
				continue
			}
			if j.lines == nil {
				j.lines = map[judgeKey][]judged{}
			}
			k := judgeKey{l.Phase, l.Status, l.DurationUS}
			j.lines[k] = append(j.lines[k], judged{l.Outcome, strings.Clone(l.Detail), l.Kind, l.Hop, l.TokenBytes})
			j.nLines++
		}
		rc.Close()
	}
	return nil
}

// notePoint is the first pass: where each request ended and when a check
// failed, per scenario of the current file.
func (j *judge) notePoint(pt k6.Point) {
	sc := pt.Tags["scenario"]
	switch pt.Metric {
	case "http_req_duration":
		if j.ends == nil {
			j.ends = map[string][]reqEnd{}
		}
		j.ends[sc] = append(j.ends[sc], reqEnd{pt.Time.UnixMicro(), len(j.ends[sc])})
	case "checks":
		j.checks = true
		if pt.Value == 0 && len(j.fails) < stats.MaxRunRows {
			j.fails, j.failsSc = append(j.fails, pt.Time.UnixMicro()), append(j.failsSc, sc)
		}
	}
}

// endFile attributes the file's failed checks to requests once its first
// pass is over.
func (j *judge) endFile(a int) {
	if j.failed == nil {
		j.failed = map[int]map[string][]int{}
	}
	out := map[string][]int{}
	for _, e := range j.ends {
		sort.SliceStable(e, func(x, y int) bool { return e[x].atUS < e[y].atUS })
	}
	for i, at := range j.fails {
		e := j.ends[j.failsSc[i]]
		k := sort.Search(len(e), func(x int) bool { return e[x].atUS > at }) - 1
		if k >= 0 {
			out[j.failsSc[i]] = append(out[j.failsSc[i]], e[k].ordinal)
		}
	}
	for sc := range out {
		sort.Ints(out[sc])
	}
	j.failed[a] = out
	j.ends, j.fails, j.failsSc = nil, nil, nil
}

// outcome judges one request point of file a in the second pass.
func (j *judge) outcome(a int, pt k6.Point, phase stats.Phase) (exchange.Outcome, string, int) {
	o, detail, status := statusOutcome(pt.Tags)
	j.ok = false
	sc := pt.Tags["scenario"]
	if j.ordinal == nil {
		j.ordinal = map[string]int{}
	}
	ord := j.ordinal[sc]
	j.ordinal[sc]++
	if status == 0 {
		return o, detail, status // no response: the transport's failure, whatever was checked
	}
	if j.nLines > 0 {
		k := judgeKey{phase, status, int64(math.Round(pt.Value * 1000))}
		if l := j.lines[k]; len(l) > 0 {
			j.lines[k] = l[1:]
			j.matched, j.ok = l[0], true
			return l[0].outcome, l[0].detail, status
		}
		j.unmatched++
		return o, detail, status
	}
	if !j.checks {
		j.unjudged++
		return o, detail, status
	}
	f := j.failed[a][sc]
	if i := sort.SearchInts(f, ord); i < len(f) && f[i] == ord {
		if status == 200 {
			return exchange.OutcomeBadResponse, "200", status
		}
		return exchange.OutcomeHTTPError, strconv.Itoa(status), status
	}
	return exchange.OutcomeOK, "", status
}

// warnings say how success was judged when it was not by tokex's lines;
// they are the run's own (a success_unknown fails its verdict unless
// allowed).
func (j *judge) warnings(id string, logs []string) []stats.Warning {
	switch {
	case j.unmatched > 0:
		return []stats.Warning{stats.Warn(stats.WarnIncompleteEvidence, id, fmt.Sprintf("incomplete evidence: %d of the points have no tokex line beside them (of %d lines): their success counts HTTP 200 alone", j.unmatched, j.nLines))}
	case j.nLines == 0 && j.checks:
		return []stats.Warning{stats.Warn(stats.WarnNote, id, "success judged by k6's checks points: a failed check fails the request that ended last before it in its scenario")}
	case j.unjudged > 0:
		where := "no log beside the points"
		if len(logs) > 0 {
			var bs []string
			for _, n := range logs {
				bs = append(bs, path.Base(n))
			}
			where = "no tokex lines in " + strings.Join(bs, ", ")
		}
		return []stats.Warning{stats.Warn(stats.WarnSuccessUnknown, id, fmt.Sprintf("no check judged the %d exchanges (%s, no k6 checks points): the success ratio counts HTTP 200 alone and is not a verdict "+
			"(k6's expected_response counts any 2xx or 3xx)", j.unjudged, where))}
	}
	return nil
}

// statusOutcome classifies a point by what k6 saw: no response (its error
// code; 1050 is the request timeout), HTTP 200, or another status.
func statusOutcome(tags map[string]string) (exchange.Outcome, string, int) {
	status, _ := strconv.Atoi(tags["status"])
	if status < 0 || status > 999 {
		status = 0
	}
	switch {
	case status == 200:
		return exchange.OutcomeOK, "", status
	case status == 0:
		code := tags["error_code"]
		if _, err := strconv.Atoi(code); err != nil || len(code) > 4 {
			code = "other" // a detail is a code or 'other', never text a file chose
		}
		if code == "1050" {
			return exchange.OutcomeTimeout, code, 0
		}
		return exchange.OutcomeConnError, code, 0
	default:
		return exchange.OutcomeHTTPError, strconv.Itoa(status), status
	}
}

// description is what k6 said of a failed request: its error tag, else
// its error code in words.
func description(tags map[string]string, o exchange.Outcome, detail string) string {
	if o != exchange.OutcomeConnError && o != exchange.OutcomeTimeout {
		return ""
	}
	if e := exchange.SanitizeDescription(tags["error"]); e != "" {
		if detail != "other" {
			e += " (k6 error " + detail + ")"
		}
		return "k6: " + e
	}
	return k6.ErrorText(detail)
}

// maxDescriptions bounds the distinct (error, description) pairs kept per
// run: a file could vary its text per point.
const maxDescriptions = 32

// descriptions counts what k6 said about a run's failures, in first-seen
// order.
type descriptions struct {
	counts map[sample.ErrorDescription]int64
	order  []sample.ErrorDescription
}

func (d *descriptions) add(q *stats.Request) {
	if q.Description == "" {
		return
	}
	k := sample.ErrorDescription{Error: q.ErrorKey(), Text: q.Description}
	if d.counts == nil {
		d.counts = map[sample.ErrorDescription]int64{}
	}
	if _, ok := d.counts[k]; !ok {
		if len(d.order) >= maxDescriptions {
			return
		}
		d.order = append(d.order, k)
	}
	d.counts[k]++
}

func (d *descriptions) list() []sample.ErrorDescription {
	var out []sample.ErrorDescription
	for _, k := range d.order {
		k.Count = d.counts[k]
		out = append(out, k)
	}
	return out
}
