package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

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
	body := &countingReader{r: io.LimitReader(resp.Body, MaxScrapeBytes+1)}
	r, err := parseProcessMetrics(body, expfmt.ResponseFormat(resp.Header))
	if body.n > MaxScrapeBytes {
		return Reading{}, fmt.Errorf("scrape %s: response larger than %d MiB", p.Name(), MaxScrapeBytes>>20)
	}
	if err != nil {
		return Reading{}, fmt.Errorf("scrape %s: %w", p.Name(), stripURL(err))
	}
	got := time.Now()
	r.At = sent.Add(got.Sub(sent) / 2)
	return r, nil
}

// countingReader counts what it read.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
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
