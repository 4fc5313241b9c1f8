package kube

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
)

// APICounter counts the requests tokex sends to the API server, by verb and
// resource, and the bytes it reads back: the load a campaign puts on the
// control plane, stated per run.
type APICounter struct {
	mu    sync.Mutex
	by    map[string]int64
	bytes atomic.Int64
}

// CountRequests makes every client built from cfg count into the returned
// counter.
func CountRequests(cfg *rest.Config) *APICounter {
	c := &APICounter{by: map[string]int64{}}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &countingTransport{c: c, rt: rt} })
	return c
}

type countingTransport struct {
	c  *APICounter
	rt http.RoundTripper
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.c.note(requestKind(req))
	resp, err := t.rt.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &t.c.bytes}
	}
	return resp, err
}

// countingBody counts the bytes read from a response. Upgraded connections
// (exec, port-forward) bypass it: their bytes are not counted.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func (c *APICounter) note(kind string) {
	c.mu.Lock()
	c.by[kind]++
	c.mu.Unlock()
}

// APIUsage is what a counter saw, or the difference between two readings.
type APIUsage struct {
	By    map[string]int64 // "verb resource[/subresource][.group]" → requests
	Bytes int64
}

// Snapshot reads the counter.
func (c *APICounter) Snapshot() APIUsage {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := APIUsage{By: make(map[string]int64, len(c.by)), Bytes: c.bytes.Load()}
	for k, v := range c.by {
		u.By[k] = v
	}
	return u
}

// Since is u minus an earlier reading.
func (u APIUsage) Since(prev APIUsage) APIUsage {
	d := APIUsage{By: map[string]int64{}, Bytes: u.Bytes - prev.Bytes}
	for k, v := range u.By {
		if n := v - prev.By[k]; n > 0 {
			d.By[k] = n
		}
	}
	return d
}

// Total is the number of requests.
func (u APIUsage) Total() int64 {
	var n int64
	for _, v := range u.By {
		n += v
	}
	return n
}

// The API-server budget of a run, besides its held-open streams (one log
// follow per agent, the Pod watch): requests a run makes once (the Job, the
// Pods' List, its deletion, node lookups, retries) and per metrics interval
// (the engine Pods, a PodMetrics List per namespace, the NodeMetrics List).
const (
	budgetPerRun      = 20
	budgetPerInterval = 4
)

// OverBudget says, when u's requests besides streams over d exceed the
// budget, by how much; "" when within it.
func (u APIUsage) OverBudget(d, metricsInterval time.Duration) string {
	var others int64
	for k, v := range u.By {
		if !longRunning(k) {
			others += v
		}
	}
	budget := int64(budgetPerRun)
	if metricsInterval > 0 {
		budget += budgetPerInterval * int64(d/metricsInterval+1)
	}
	if others <= budget {
		return ""
	}
	return fmt.Sprintf("API server: %d requests besides streams this run, over tokex's budget of %d (%d a run + %d a metrics interval): see the counts above",
		others, budget, budgetPerRun, budgetPerInterval)
}

// longRunning reports whether a kind holds its connection open: watches, log
// follows, exec and port-forward streams.
func longRunning(kind string) bool {
	verb, _, _ := strings.Cut(kind, " ")
	return verb == "watch" || verb == "follow" || verb == "exec" || verb == "portforward"
}

// String says how many requests over d, how many of them hold a stream open,
// and the kinds, most frequent first.
func (u APIUsage) String(d time.Duration) string {
	kinds := make([]string, 0, len(u.By))
	var streams int64
	for k, v := range u.By {
		kinds = append(kinds, k)
		if longRunning(k) {
			streams += v
		}
	}
	sort.Slice(kinds, func(i, j int) bool {
		if u.By[kinds[i]] != u.By[kinds[j]] {
			return u.By[kinds[i]] > u.By[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", u.By[k], k)
	}
	total := u.Total()
	return fmt.Sprintf("%d requests in %.0f s (%.2f/s; %d of them streams held open, %.2f/s without them): %s; %.1f MB read",
		total, d.Seconds(), float64(total)/d.Seconds(), streams, float64(total-streams)/d.Seconds(), strings.Join(parts, ", "), float64(u.Bytes)/1e6)
}

// requestKind names a request as "verb resource[/subresource][.group]":
// "list pods", "follow pods/log", "watch pods", "exec pods/exec",
// "list pods.metrics.k8s.io", "get nodes/proxy".
func requestKind(req *http.Request) string {
	seg := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var group string
	switch {
	case len(seg) >= 2 && seg[0] == "api":
		seg = seg[2:] // api/v1
	case len(seg) >= 3 && seg[0] == "apis":
		group, seg = seg[1], seg[3:] // apis/group/version
	default:
		return "discovery"
	}
	if len(seg) == 0 {
		return "discovery"
	}
	if seg[0] == "namespaces" && len(seg) >= 3 {
		seg = seg[2:]
	}
	resource, named := seg[0], len(seg) >= 2
	if len(seg) >= 3 {
		resource += "/" + seg[2]
	}
	if group != "" {
		resource += "." + group
	}
	q := req.URL.Query()
	var verb string
	switch req.Method {
	case http.MethodGet:
		switch {
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			verb = "watch"
		case strings.HasSuffix(resource, "/log") && q.Get("follow") == "true":
			verb = "follow"
		case strings.HasSuffix(resource, "/exec"):
			verb = "exec" // the WebSocket executor upgrades a GET
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		switch {
		case strings.HasSuffix(resource, "/exec"):
			verb = "exec"
		case strings.HasSuffix(resource, "/portforward"):
			verb = "portforward"
		default:
			verb = "create"
		}
	default:
		verb = strings.ToLower(req.Method)
	}
	return verb + " " + resource
}
