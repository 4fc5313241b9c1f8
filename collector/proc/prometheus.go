package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// MaxScrapeBytes bounds one scrape: a process-metrics page is a few KB, a
// busy server's full page a few hundred.
const MaxScrapeBytes = 16 << 20

// Prometheus reads a remote server's own process metrics from its
// Prometheus endpoint: process_cpu_seconds_total (cumulative CPU, all of
// the process's threads) and process_resident_memory_bytes, which Go's and
// Java's client libraries, Dex, Keycloak and zitadel expose. Series of
// several processes behind one endpoint are summed.
type Prometheus struct {
	URL     string
	Label   string
	Client  *http.Client  // default: http.DefaultClient
	Timeout time.Duration // per scrape; default 5s
}

// Name is the sample name: the endpoint's host.
func (p *Prometheus) Name() string {
	if p.Label != "" {
		return p.Label
	}
	if u, err := url.Parse(p.URL); err == nil && u.Host != "" {
		return u.Host
	}
	return "metrics"
}

// Kind names the method in the evidence.
func (p *Prometheus) Kind() string { return "prometheus" }

// Read scrapes the endpoint once. The reading's time is the middle of the
// request, when the server read its counters give or take half the round
// trip.
func (p *Prometheus) Read() (Reading, error) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return Reading{}, fmt.Errorf("metrics_url: %w", err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=0.9,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1")
	c := p.Client
	if c == nil {
		c = http.DefaultClient
	}
	sent := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return Reading{}, fmt.Errorf("scrape %s: %w", p.Name(), stripURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Reading{}, fmt.Errorf("scrape %s: HTTP %d", p.Name(), resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxScrapeBytes+1))
	if err != nil {
		return Reading{}, fmt.Errorf("scrape %s: %w", p.Name(), stripURL(err))
	}
	got := time.Now()
	if len(body) > MaxScrapeBytes {
		return Reading{}, fmt.Errorf("scrape %s: response larger than %d MiB", p.Name(), MaxScrapeBytes>>20)
	}
	r, err := parseProcessMetrics(body, expfmt.ResponseFormat(resp.Header))
	if err != nil {
		return Reading{}, fmt.Errorf("scrape %s: %w", p.Name(), err)
	}
	r.At = sent.Add(got.Sub(sent) / 2)
	return r, nil
}

// parseProcessMetrics reads process_cpu_seconds_total and
// process_resident_memory_bytes from an exposition (text, OpenMetrics or
// delimited protobuf; an unknown content type is read as text).
func parseProcessMetrics(body []byte, format expfmt.Format) (Reading, error) {
	if format.FormatType() == expfmt.TypeUnknown {
		format = expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), format)
	var r Reading
	var cpu, mem bool
	for {
		var f dto.MetricFamily
		err := dec.Decode(&f)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Reading{}, fmt.Errorf("not a Prometheus exposition: %w", err)
		}
		switch f.GetName() {
		case "process_cpu_seconds_total", "process_cpu_seconds": // OpenMetrics names the family without _total
			for _, m := range f.GetMetric() {
				r.CPUSeconds += metricValue(m)
				cpu = true
			}
		case "process_resident_memory_bytes":
			for _, m := range f.GetMetric() {
				if v := metricValue(m); v >= 0 && v < 1<<50 { // a PiB: no real RSS is larger
					r.MemoryBytes += int64(v)
					mem = true
				}
			}
		}
	}
	if !cpu {
		return Reading{}, errors.New("no process_cpu_seconds_total: the server does not export process metrics there")
	}
	if r.CPUSeconds < 0 || r.CPUSeconds != r.CPUSeconds || r.CPUSeconds > 1e15 {
		return Reading{}, fmt.Errorf("process_cpu_seconds_total %v is not a CPU counter", r.CPUSeconds)
	}
	if !mem {
		r.MemoryBytes = 0
	}
	return r, nil
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}

// stripURL keeps a transport error without the URL it carries (which may
// hold credentials in its query).
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
