package proc

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tokex-dev/tokex/collector/event"
)

// processMetricsServer exposes this process's metrics with client_golang's
// process collector, as Go servers (Dex, zitadel) do.
func processMetricsServer(t *testing.T, openMetrics bool) *httptest.Server {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	ts := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: openMetrics}))
	t.Cleanup(ts.Close)
	return ts
}

func TestPrometheusScrapesARealExposition(t *testing.T) {
	for _, om := range []bool{false, true} {
		ts := processMetricsServer(t, om)
		p := &Prometheus{URL: ts.URL + "/metrics?x=1"}
		a, err := p.Read()
		if err != nil {
			t.Fatal(err)
		}
		burn := time.Now().Add(300 * time.Millisecond)
		for n := 0; time.Now().Before(burn) && n < 1e9; n++ {
		}
		b, err := p.Read()
		if err != nil {
			t.Fatal(err)
		}
		own, _ := (Process{PID: os.Getpid()}).Read()
		if a.CPUSeconds <= 0 || b.CPUSeconds <= a.CPUSeconds || b.MemoryBytes <= 0 {
			t.Errorf("openmetrics %v: readings %+v then %+v", om, a, b)
		}
		// The endpoint reports this very process: the same counter /proc has.
		if d := b.CPUSeconds - own.CPUSeconds; d > 0.2 || d < -0.2 {
			t.Errorf("scraped %.2f CPU-s, /proc says %.2f", b.CPUSeconds, own.CPUSeconds)
		}
		if p.Kind() != "prometheus" || p.Name() != strings.TrimPrefix(ts.URL, "http://") {
			t.Errorf("kind %q name %q", p.Kind(), p.Name())
		}
	}
}

func TestParseProcessMetricsFormats(t *testing.T) {
	text := "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5\n" +
		"# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 1.048576e+06\n"
	om := "# TYPE process_cpu_seconds counter\nprocess_cpu_seconds_total 12.5\n" +
		"# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 1048576\n# EOF\n"
	// Two processes behind one endpoint (label pid) are summed.
	multi := "process_cpu_seconds_total{pid=\"1\"} 10\nprocess_cpu_seconds_total{pid=\"2\"} 2.5\n" +
		"process_resident_memory_bytes{pid=\"1\"} 524288\nprocess_resident_memory_bytes{pid=\"2\"} 524288\n"
	var proto bytes.Buffer
	tp := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := tp.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	enc := expfmt.NewEncoder(&proto, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	omFormat, _ := expfmt.NewOpenMetricsFormat(expfmt.OpenMetricsVersion_1_0_0)
	for _, c := range []struct {
		name   string
		body   []byte
		format expfmt.Format
	}{
		{"text", []byte(text), expfmt.NewFormat(expfmt.TypeTextPlain)},
		{"unknown content type", []byte(text), expfmt.FmtUnknown},
		{"openmetrics", []byte(om), omFormat},
		{"protobuf", proto.Bytes(), expfmt.NewFormat(expfmt.TypeProtoDelim)},
		{"summed", []byte(multi), expfmt.NewFormat(expfmt.TypeTextPlain)},
	} {
		r, err := parseProcessMetrics(bytes.NewReader(c.body), c.format)
		if err != nil || r.CPUSeconds != 12.5 || r.MemoryBytes != 1<<20 {
			t.Errorf("%s: %+v %v", c.name, r, err)
		}
	}
}

func TestPrometheusErrorsAreClear(t *testing.T) {
	big := strings.Repeat("# padding to exceed the limit\n", MaxScrapeBytes/28+2)
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"no process metrics", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "go_goroutines 8") }, "no process_cpu_seconds_total"},
		{"not an exposition", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "<html>login</html>") }, "not a Prometheus exposition"},
		{"status", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) }, "HTTP 401"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/login", http.StatusFound) }, "HTTP 302"},
		{"too large", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, big) }, "larger than 16 MiB"},
		{"negative counter", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "process_cpu_seconds_total -3") }, "not a CPU counter"},
		{"slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, "deadline exceeded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(c.handler)
			defer ts.Close()
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			timeout := 20 * time.Second
			if c.name == "slow" {
				timeout = 200 * time.Millisecond
			}
			p := &Prometheus{URL: ts.URL + "/metrics?token=s3cret", Client: client, Timeout: timeout}
			_, err := p.Read()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error leaks the URL's query: %v", err)
			}
		})
	}
	if _, err := (&Prometheus{URL: "http://127.0.0.1:1/metrics"}).Read(); err == nil || !strings.Contains(err.Error(), "scrape 127.0.0.1:1") {
		t.Errorf("refused connection: %v", err)
	}
}

// A remote endpoint that fails is retried, and said so once; the samples
// resume when it answers again.
func TestSampleRetriesARemoteEndpoint(t *testing.T) {
	var fail atomic.Bool
	var scrapes atomic.Int64
	fail.Store(true)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if fail.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "process_cpu_seconds_total %g\nprocess_resident_memory_bytes 4096\n", float64(scrapes.Add(1))/2)
	}))
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var warns []string
	var got []event.Resource
	emitted := make(chan struct{}, 1000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Sample(ctx, 20*time.Millisecond, []Target{{Role: "engine", Source: &Prometheus{URL: ts.URL}}}, func(e event.Event) {
			mu.Lock()
			got = append(got, e.(event.Resource))
			mu.Unlock()
			emitted <- struct{}{}
		}, func(s string) {
			mu.Lock()
			warns = append(warns, s)
			mu.Unlock()
		})
	}()
	for range 3 {
		time.Sleep(20 * time.Millisecond) // a few failing scrapes
	}
	fail.Store(false)
	for range 2 {
		select {
		case <-emitted:
		case <-time.After(30 * time.Second):
			t.Fatal("no sample after the endpoint recovered")
		}
	}
	cancel()
	<-done
	if len(warns) < 2 || !strings.Contains(warns[0], "HTTP 503") || !strings.Contains(warns[0], "retrying") || !strings.Contains(warns[1], "works again") {
		t.Errorf("warnings %q", warns)
	}
	r := got[0]
	if r.Source != "prometheus" || r.Role != "engine" || r.MemoryBytes != 4096 || r.CPUSecondsTotal <= 0 || r.CPUMillicores <= 0 {
		t.Errorf("sample %+v", r)
	}
}
