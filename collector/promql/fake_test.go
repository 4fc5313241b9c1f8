package promql

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProm answers the Prometheus HTTP API's instant queries for the query
// shapes tokex builds, evaluated over synthetic series: enough of PromQL's
// semantics (ranges left-open, a 5-minute lookback, rate as the slope
// between the first and last sample of the range, without Prometheus's
// extrapolation) to judge the checks. The real semantics are the
// real-Prometheus test's (runner/local/e2e).
type fakeProm struct {
	mu      sync.Mutex
	series  []fakeSeries
	queries []string
	status  int // non-zero: answer every query with it
}

type fakeSeries struct {
	labels  map[string]string // __name__ included
	samples []fakeSample
}

type fakeSample struct{ t, v float64 } // unix seconds

// counter is a series scraped every interval from start to end with a
// counter rising at cores per second.
func counter(labels map[string]string, start, end time.Time, interval time.Duration, cores float64) fakeSeries {
	s := fakeSeries{labels: labels}
	for t := start; !t.After(end); t = t.Add(interval) {
		s.samples = append(s.samples, fakeSample{t: seconds(t), v: 100 + cores*t.Sub(start).Seconds()})
	}
	return s
}

// gauge is a series with a constant value.
func gauge(labels map[string]string, start, end time.Time, interval time.Duration, v float64) fakeSeries {
	s := counter(labels, start, end, interval, 0)
	for i := range s.samples {
		s.samples[i].v = v
	}
	return s
}

func (f *fakeProm) server(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeProm) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query" {
		http.NotFound(w, r)
		return
	}
	_ = r.ParseForm()
	q := r.Form.Get("query")
	at, _ := strconv.ParseFloat(r.Form.Get("time"), 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
	if f.status != 0 {
		w.WriteHeader(f.status)
		fmt.Fprint(w, `{"status":"error","errorType":"internal","error":"broken"}`)
		return
	}
	res, err := f.eval(q, at)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"status":"error","errorType":"bad_data","error":%q}`, err.Error())
		return
	}
	type sample struct {
		Metric map[string]string `json:"metric"`
		Value  [2]any            `json:"value"`
	}
	out := []sample{}
	for _, x := range res {
		out = append(out, sample{Metric: x.labels, Value: [2]any{at, strconv.FormatFloat(x.v, 'f', -1, 64)}})
	}
	b, _ := json.Marshal(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": out}})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

type fakeResult struct {
	labels map[string]string
	v      float64
}

var (
	reSumBy   = regexp.MustCompile(`^sum by \(([^)]*)\) \((rate|avg_over_time)\((.*)\[(\w+)\]\)\)$`)
	reCount   = regexp.MustCompile(`^count_over_time\((.*)\[(\w+)\]\)$`)
	reStamp   = regexp.MustCompile(`^timestamp\((.*)\)$`)
	reGap     = regexp.MustCompile(`^max_over_time\(\(time\(\) - timestamp\((.*)\)\)\[(\w+):(\w+)\]\)$`)
	rePeak    = regexp.MustCompile(`^max_over_time\(sum\(rate\((.*)\[(\w+)\]\)\)\[(\w+):(\w+)\]\)$`)
	reSummary = regexp.MustCompile(`^(\d+)(ms|s)$`)
)

func dur(s string) float64 {
	m := reSummary.FindStringSubmatch(s)
	if m == nil {
		panic("duration " + s)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	if m[2] == "ms" {
		return v / 1000
	}
	return v
}

func (f *fakeProm) eval(q string, at float64) ([]fakeResult, error) {
	if m := reSumBy.FindStringSubmatch(q); m != nil {
		per := f.each(m[3], func(s fakeSeries) (float64, bool) {
			in := s.in(at-dur(m[4]), at)
			if m[2] == "avg_over_time" {
				return avg(in), len(in) > 0
			}
			return slope(in), len(in) > 1
		})
		return sumBy(per, strings.Split(m[1], ", ")), nil
	}
	if m := reCount.FindStringSubmatch(q); m != nil {
		return f.each(m[1], func(s fakeSeries) (float64, bool) { n := len(s.in(at-dur(m[2]), at)); return float64(n), n > 0 }), nil
	}
	if m := reStamp.FindStringSubmatch(q); m != nil {
		return f.each(m[1], func(s fakeSeries) (float64, bool) { return s.last(at) }), nil
	}
	if m := reGap.FindStringSubmatch(q); m != nil {
		rng, step := dur(m[2]), dur(m[3])
		return f.each(m[1], func(s fakeSeries) (float64, bool) {
			worst, any := 0.0, false
			for t := math.Floor(at/step) * step; t > at-rng; t -= step {
				if l, ok := s.last(t); ok {
					worst, any = math.Max(worst, t-l), true
				}
			}
			return worst, any
		}), nil
	}
	if m := rePeak.FindStringSubmatch(q); m != nil {
		r, rng, step := dur(m[2]), dur(m[3]), dur(m[4])
		best := 0.0
		for t := math.Floor(at/step) * step; t > at-rng; t -= step {
			total := 0.0
			for _, x := range f.each(m[1], func(s fakeSeries) (float64, bool) { in := s.in(t-r, t); return slope(in), len(in) > 1 }) {
				total += x.v
			}
			best = math.Max(best, total)
		}
		return []fakeResult{{labels: map[string]string{}, v: best}}, nil
	}
	return nil, fmt.Errorf("the fake does not know %q", q)
}

// each evaluates fn on every series the selector matches; the metric name
// is dropped, as PromQL's functions do.
func (f *fakeProm) each(sel string, fn func(fakeSeries) (float64, bool)) []fakeResult {
	s, err := ParseSelector(sel)
	if err != nil {
		panic(err)
	}
	var out []fakeResult
	for _, x := range f.series {
		if !matches(s, x.labels) {
			continue
		}
		if v, ok := fn(x); ok {
			l := map[string]string{}
			for k, v := range x.labels {
				if k != "__name__" {
					l[k] = v
				}
			}
			out = append(out, fakeResult{labels: l, v: v})
		}
	}
	return out
}

func matches(s Selector, l map[string]string) bool {
	if l["__name__"] != s.Metric {
		return false
	}
	for _, m := range s.Matchers {
		v := l[m.Name]
		re := regexp.MustCompile("^(?:" + m.Value + ")$")
		ok := map[string]bool{"=": v == m.Value, "!=": v != m.Value, "=~": re.MatchString(v), "!~": !re.MatchString(v)}[m.Op]
		if !ok {
			return false
		}
	}
	return true
}

func sumBy(in []fakeResult, by []string) []fakeResult {
	groups := map[string]*fakeResult{}
	for _, x := range in {
		l := map[string]string{}
		var key []string
		for _, b := range by {
			if v := x.labels[b]; v != "" {
				l[b] = v
			}
			key = append(key, x.labels[b])
		}
		k := strings.Join(key, "\x00")
		if groups[k] == nil {
			groups[k] = &fakeResult{labels: l}
		}
		groups[k].v += x.v
	}
	var keys []string
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []fakeResult
	for _, k := range keys {
		out = append(out, *groups[k])
	}
	return out
}

func (s fakeSeries) in(from, to float64) []fakeSample {
	var out []fakeSample
	for _, x := range s.samples {
		if x.t > from && x.t <= to {
			out = append(out, x)
		}
	}
	return out
}

func (s fakeSeries) last(at float64) (float64, bool) {
	in := s.in(at-300, at)
	if len(in) == 0 {
		return 0, false
	}
	return in[len(in)-1].t, true
}

func slope(in []fakeSample) float64 {
	if len(in) < 2 {
		return 0
	}
	a, b := in[0], in[len(in)-1]
	return (b.v - a.v) / (b.t - a.t)
}

func avg(in []fakeSample) float64 {
	var sum float64
	for _, x := range in {
		sum += x.v
	}
	return sum / float64(len(in))
}
