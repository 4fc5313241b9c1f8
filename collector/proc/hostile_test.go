package proc

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/tokex-dev/tokex/collector/event"
)

// TestSampleRejectsCountersThatAreNoCounters: a metrics endpoint whose CPU
// counter overflows, jumps or goes back gives no sample for that reading,
// and says why (issue 25 item 7: an overflow read as −9.2e15 CPU-ms per
// exchange).
func TestSampleRejectsCountersThatAreNoCounters(t *testing.T) {
	values := []string{"1", "1.01", "9.2e18", "1.02", "5e12", "5e12", "1.03", "1.04", "1.05"}
	var i atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := int(i.Add(1)) - 1
		if n >= len(values) {
			n = len(values) - 1
		}
		fmt.Fprintf(w, "process_cpu_seconds_total %s\nprocess_resident_memory_bytes 4096\n", values[n])
	}))
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var warns []string
	var got []float64
	done := make(chan struct{})
	go func() {
		defer close(done)
		Sample(ctx, 20*time.Millisecond, []Target{{Role: "engine", Source: &Prometheus{URL: ts.URL}}}, func(e event.Event) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, e.(event.Resource).CPUSecondsTotal)
			if len(got) == 4 {
				cancel()
			}
		}, func(s string) {
			mu.Lock()
			warns = append(warns, s)
			mu.Unlock()
		})
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("sampling did not end")
	}
	mu.Lock()
	defer mu.Unlock()
	// 1.01 after 1; 9.2e18 is refused by the parser; 1.02 after 1.01; 5e12
	// jumps (dropped); 5e12 again is steady; 1.03 went back (dropped); 1.04.
	if want := []float64{1.01, 1.02, 5e12, 1.04}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("samples %v, want %v", got, want)
	}
	all := strings.Join(warns, "\n")
	for _, w := range []string{"is not a CPU counter (more than 1e+13 s: an overflow)", "advanced 5e+12 s in", "went back"} {
		if !strings.Contains(all, w) {
			t.Errorf("no warning saying %q in:\n%s", w, all)
		}
	}
}

// TestScrapeKeepsOnlyTwoSeries: a page just under the 16 MiB cap costs one
// line of memory, not the whole page parsed (issue 25 item 7: ~560 MB per
// sample); the two series are found wherever they are.
func TestScrapeKeepsOnlyTwoSeries(t *testing.T) {
	var page bytes.Buffer
	page.WriteString("process_cpu_seconds_total{pid=\"1\"} 10\n")
	for i := 0; page.Len() < MaxScrapeBytes-(1<<10); i++ {
		fmt.Fprintf(&page, "http_requests_total{handler=\"/h%d\",code=\"200\",method=\"GET\"} %d\n", i, i)
	}
	page.WriteString("process_cpu_seconds_total{pid=\"2\"} 2.5\nprocess_resident_memory_bytes 1048576\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := parseProcessMetrics(bytes.NewReader(page.Bytes()), expfmt.NewFormat(expfmt.TypeTextPlain))
	runtime.ReadMemStats(&after)
	if err != nil || r.CPUSeconds != 12.5 || r.MemoryBytes != 1<<20 {
		t.Fatalf("%+v %v", r, err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d MiB page: %d KiB allocated", page.Len()>>20, alloc>>10)
	if alloc > 1<<20 {
		t.Errorf("parsing a %d MiB page allocated %d KiB", page.Len()>>20, alloc>>10)
	}
	// A long line of another series is skipped; of a kept one, refused.
	long := strings.Repeat("x", 2*maxLine)
	for text, want := range map[string]string{
		"other_series{a=\"" + long + "\"} 1\nprocess_cpu_seconds_total 3\n":        "",
		"process_cpu_seconds_total{a=\"" + long + "\"} 1\n":                        "longer than 4096 bytes",
		"process_cpu_seconds_total 1\nprocess_cpu_seconds_total{pid=\"x\"} -Inf\n": "not a CPU counter",
		"process_cpu_seconds_total 1\nprocess_resident_memory_bytes NaN\n":         "",
		"process_cpu_seconds_total 1\nprocess_cpu_seconds_created 1.7e9\n":         "",
		"process_cpu_seconds_total 1 1700000000000 # {trace_id=\"a\"} 1\n# EOF\n":  "",
	} {
		_, err := parseProcessMetrics(strings.NewReader(text), expfmt.NewFormat(expfmt.TypeTextPlain))
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%.60q: %v, want %q", text, err, want)
		}
	}
	r, err = parseProcessMetrics(strings.NewReader("process_cpu_seconds_total 1\nprocess_cpu_seconds_created 1.7e9\nprocess_resident_memory_bytes NaN\n"),
		expfmt.NewFormat(expfmt.TypeTextPlain))
	if err != nil || r.CPUSeconds != 1 || r.MemoryBytes != 0 {
		t.Errorf("created series or NaN memory: %+v %v", r, err)
	}
}
