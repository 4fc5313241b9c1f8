package promql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// MaxResponseBytes bounds one API answer: tokex's queries return a value
// per series.
const MaxResponseBytes = 8 << 20

// MaxSeries bounds the series one query may return.
const MaxSeries = sample.MaxPromMembers

// Client asks one Prometheus server.
type Client struct {
	api    v1.API
	server string
	// Timeout bounds one query (default 10 s); MaxWait the wait for the
	// samples past a window's end (default: 2 scrape intervals + 5 s,
	// 5 s–3 min); Poll how often it looks (default 250 ms).
	Timeout time.Duration
	MaxWait time.Duration
	Poll    time.Duration
	// Now is the clock (tests).
	Now func() time.Time
}

// New is a client of the Prometheus HTTP API at base (http(s)://host[:port]
// [/prefix]; user:password@ is sent as basic authentication and never
// recorded). Redirects are not followed; answers are read up to
// MaxResponseBytes.
func New(base string, rt http.RoundTripper) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL of a Prometheus server", Redact(base))
	}
	if rt == nil {
		rt = &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConns: 2, IdleConnTimeout: 30 * time.Second}
	}
	hc := &http.Client{Transport: limited{rt}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	c, err := api.NewClient(api.Config{Address: strings.TrimSuffix(base, "/"), Client: hc})
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", Redact(base), err)
	}
	return &Client{api: v1.NewAPI(c), server: Redact(base)}, nil
}

// Redact is a URL without credentials, query or fragment: what evidence
// and messages may say of a server.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(an invalid URL)"
	}
	return u.Scheme + "://" + u.Host + strings.TrimSuffix(u.Path, "/")
}

// limited reads an answer up to MaxResponseBytes and fails past it.
type limited struct{ rt http.RoundTripper }

func (l limited) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &capped{rc: resp.Body, left: MaxResponseBytes}
	return resp, nil
}

type capped struct {
	rc   io.ReadCloser
	left int64
}

func (c *capped) Read(b []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("answer larger than %d MiB", MaxResponseBytes>>20)
	}
	if int64(len(b)) > c.left {
		b = b[:c.left]
	}
	n, err := c.rc.Read(b)
	c.left -= int64(n)
	return n, err
}

func (c *capped) Close() error { return c.rc.Close() }

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// vector runs an instant query at ts and returns its samples.
func (c *Client) vector(ctx context.Context, q string, ts time.Time) (model.Vector, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, _, err := c.api.Query(qctx, q, ts, v1.WithTimeout(timeout))
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %s: %w", c.server, q, unwrapURL(err))
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("prometheus %s: %s: a %s, not a vector", c.server, q, v.Type())
	}
	if len(vec) > MaxSeries {
		return nil, fmt.Errorf("prometheus %s: %s: %d series, more than %d", c.server, q, len(vec), MaxSeries)
	}
	for _, s := range vec {
		if f := float64(s.Value); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("prometheus %s: %s: a value that is not finite", c.server, q)
		}
	}
	return vec, nil
}

// unwrapURL keeps a transport error without its URL (credentials).
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// series is one CPU series' checks.
type series struct {
	metric      model.Metric
	samples     int
	last, first float64 // unix seconds; 0: none
	gap         float64 // longest time without a sample, seconds
}

// Measure asks for the target's CPU and memory over the window: it waits
// until Prometheus holds samples past the window's end (bounded), then
// queries at its end. The record always holds the queries sent; members
// only when the CPU query answered. Warnings say what is wrong with the data.
func (c *Client) Measure(ctx context.Context, t Target, w Window, runID string) (*sample.PromQL, []stats.Warning) {
	rec := &sample.PromQL{Server: c.server, From: w.From, To: w.To}
	ask := func(name, q string, at time.Time) (model.Vector, error) {
		rec.Queries = append(rec.Queries, sample.PromQuery{Name: name, Query: q})
		return c.vector(ctx, q, at)
	}
	noData := func(detail string) []stats.Warning {
		return []stats.Warning{stats.Warn(stats.WarnPromQLNoData, runID, detail+": engine CPU not measured by promql")}
	}
	// A first count at the end tells the scrape interval, hence how long
	// to wait for the samples that close the window.
	est, err := c.vector(ctx, t.SamplesQuery(w), w.To)
	if err != nil {
		return rec, noData(err.Error())
	}
	waited := c.waitPast(ctx, t, w, intervalOf(est, w))
	counts, err := ask("samples", t.SamplesQuery(w), w.To)
	if err != nil {
		return rec, noData(err.Error())
	}
	if len(counts) == 0 {
		return rec, noData(fmt.Sprintf("no series of %s in the window", t.CPU))
	}
	cpu, err := ask("cpu", t.CPUQuery(w), w.To)
	if err != nil {
		return rec, noData(err.Error())
	}
	interval := intervalOf(counts, w)
	rec.IntervalSeconds = round3(interval.Seconds())
	var warns []stats.Warning
	ss, err := c.checks(ask, t, w, counts)
	if err != nil {
		warns = append(warns, stats.Warn(stats.WarnPromQLStale, runID, "the samples could not be checked: "+err.Error()))
	}
	warns = append(warns, judge(ss, t, w, runID, waited)...)
	mem := map[string]float64{}
	if q := t.MemoryQuery(w); q != "" {
		vec, err := ask("memory", q, w.To)
		if err != nil {
			warns = append(warns, stats.Warn(stats.WarnPromQLMissingSeries, runID, "memory: "+err.Error()))
		}
		for _, s := range vec {
			mem[t.name(s.Metric)] += float64(s.Value)
		}
	}
	if q := t.PeakQuery(w, interval); q != "" {
		if vec, err := ask("peak", q, w.To); err == nil && len(vec) == 1 {
			rec.PeakCores = round3(float64(vec[0].Value))
		}
	}
	rec.Members = members(t, cpu, mem, ss)
	return rec, append(warns, coverage(rec, t, cpu, mem, runID)...)
}

// checks runs the queries that judge each CPU series' samples.
func (c *Client) checks(ask func(string, string, time.Time) (model.Vector, error), t Target, w Window, counts model.Vector) ([]*series, error) {
	by := map[model.Fingerprint]*series{}
	var out []*series
	for _, s := range counts {
		x := &series{metric: s.Metric, samples: int(s.Value)}
		by[s.Metric.Fingerprint()] = x
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].metric.String() < out[j].metric.String() })
	for _, q := range []struct {
		name, query string
		at          time.Time
		set         func(*series, float64)
	}{
		{"last", t.LastQuery(), w.To, func(x *series, v float64) { x.last = v }},
		{"first", t.LastQuery(), w.From, func(x *series, v float64) { x.first = v }},
		{"gap", t.GapQuery(w), w.To, func(x *series, v float64) { x.gap = v }},
	} {
		vec, err := ask(q.name, q.query, q.at)
		if err != nil {
			return out, err
		}
		for _, s := range vec {
			if x := by[withoutName(s.Metric).Fingerprint()]; x != nil {
				q.set(x, float64(s.Value))
			}
		}
	}
	return out, nil
}

// withoutName drops the metric name (timestamp() keeps none either).
func withoutName(m model.Metric) model.Metric {
	if _, ok := m[model.MetricNameLabel]; !ok {
		return m
	}
	c := m.Clone()
	delete(c, model.MetricNameLabel)
	return c
}

// intervalOf is the scrape interval the counts show: the window ÷ the
// fewest samples of a series (the coarsest series decides).
func intervalOf(counts model.Vector, w Window) time.Duration {
	fewest := math.MaxInt
	for _, s := range counts {
		fewest = min(fewest, max(int(s.Value), 1))
	}
	if fewest == math.MaxInt {
		return 0
	}
	return w.Len() / time.Duration(fewest)
}

// waitPast waits until every CPU series has a sample at or after the
// window's end, at most MaxWait; it reports how long it waited and whether
// the samples came.
func (c *Client) waitPast(ctx context.Context, t Target, w Window, interval time.Duration) waitResult {
	limit := c.MaxWait
	if limit <= 0 {
		limit = min(max(2*interval+5*time.Second, 5*time.Second), 3*time.Minute)
	}
	poll := c.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	start := c.now()
	end := float64(w.To.UnixMilli()) / 1000
	for {
		vec, err := c.vector(ctx, t.LastQuery(), c.now())
		if err == nil && len(vec) > 0 && slices.IndexFunc(vec, func(s *model.Sample) bool { return float64(s.Value) < end }) < 0 {
			return waitResult{waited: c.now().Sub(start), came: true}
		}
		if c.now().Sub(start) >= limit || ctx.Err() != nil {
			return waitResult{waited: c.now().Sub(start), limit: limit}
		}
		select {
		case <-ctx.Done():
		case <-time.After(poll):
		}
	}
}

type waitResult struct {
	waited, limit time.Duration
	came          bool
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// Ping asks the server a constant query: it answers, and is a Prometheus.
func (c *Client) Ping(ctx context.Context) error {
	vec, err := c.vector(ctx, "vector(1)", c.now())
	if err == nil && (len(vec) != 1 || vec[0].Value != 1) {
		err = fmt.Errorf("prometheus %s: vector(1) answered %v", c.server, vec)
	}
	return err
}
