package runner

import (
	"sync"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

// maxDescriptions bounds the distinct (error, description) pairs kept per
// run; a hostile server could otherwise vary its text per request.
const maxDescriptions = 32

// descriptions counts what the server said about a run's failures.
type descriptions struct {
	mu     sync.Mutex
	counts map[sample.ErrorDescription]int64 // Count left zero in the key
	order  []sample.ErrorDescription
	other  map[string]int64 // per error: descriptions past the bound
}

// record counts q's description. Warmup rows are left out: top_errors
// counts the measured phase, and its descriptions must count the same rows.
func (d *descriptions) record(q *stats.Request) {
	if q.Description == "" || q.OK() || q.Dropped() || q.Aborted() || q.Phase == stats.Warmup {
		return
	}
	k := sample.ErrorDescription{Error: q.ErrorKey(), Text: q.Description}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.counts == nil {
		d.counts, d.other = map[sample.ErrorDescription]int64{}, map[string]int64{}
	}
	if _, ok := d.counts[k]; !ok {
		if len(d.counts) >= maxDescriptions {
			d.other[k.Error]++
			return
		}
		d.order = append(d.order, k)
	}
	d.counts[k]++
}

// list returns the counts in first-seen order.
func (d *descriptions) list() []sample.ErrorDescription {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []sample.ErrorDescription
	for _, k := range d.order {
		k.Count = d.counts[k]
		out = append(out, k)
	}
	for _, k := range d.order { // once per error, after its kept texts
		if n := d.other[k.Error]; n > 0 {
			out = append(out, sample.ErrorDescription{Error: k.Error, Text: "(other descriptions, not kept)", Count: n})
			delete(d.other, k.Error)
		}
	}
	for e, n := range d.other { // errors first seen past the bound
		out = append(out, sample.ErrorDescription{Error: e, Text: "(other descriptions, not kept)", Count: n})
	}
	return out
}
