package authserver

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"github.com/tokex-dev/tokex/internal/confload"
)

// procCPU is a process's user + system CPU from /proc/PID/stat, in seconds
// (clock ticks of 10 ms).
func procCPU(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100
}

// TestEngineServesProcessMetrics: with metrics.addr the engine serves its
// own CPU and memory in Prometheus's text format on a listener of its own —
// the CPU the kernel counts for its PID, nothing else, GET only — and the
// token endpoint's listener serves no /metrics.
func TestEngineServesProcessMetrics(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	path := engineConfig(t, false)
	var cfg Config
	b, _ := os.ReadFile(path)
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Metrics.Addr = addr
	b, _ = yaml.Marshal(cfg)
	path = filepath.Join(t.TempDir(), "serve.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	p, lines, err := startEngine(t, "engine", path)
	if err != nil {
		t.Fatal(err, lines)
	}
	defer p.Stop(5 * time.Second)
	before := procCPU(t, p.PID())
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	tp := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := tp.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	after := procCPU(t, p.PID())
	cpu := fams["process_cpu_seconds_total"]
	if cpu == nil || cpu.GetType().String() != "COUNTER" || len(fams) != 3 {
		t.Fatalf("families %v", fams)
	}
	v := cpu.GetMetric()[0].GetCounter().GetValue()
	// getrusage to the µs, /proc's user and system time each cut to the
	// 10 ms tick: the scrape lies between.
	if v <= 0 || v < before || v > after+0.02 {
		t.Errorf("process_cpu_seconds_total %v, /proc said %v before and %v after", v, before, after)
	}
	if rss := fams["process_resident_memory_bytes"].GetMetric()[0].GetGauge().GetValue(); rss < 1<<20 {
		t.Errorf("resident memory %v", rss)
	}
	if ct := resp.Header.Get("Content-Type"); expfmt.ResponseFormat(resp.Header) != expfmt.NewFormat(expfmt.TypeTextPlain) {
		t.Errorf("content type %q", ct)
	}
	for _, tc := range []struct {
		method, url string
		status      int
	}{
		{"POST", "http://" + addr + "/metrics", 405},
		{"GET", "http://" + addr + "/", 404},
		{"GET", "http://" + addr + "/as/token.oauth2", 404},
		{"GET", p.Ready.URL + "/metrics", 404},
	} {
		req, _ := http.NewRequest(tc.method, tc.url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.url, resp.StatusCode, tc.status)
		}
	}
}

func TestMetricsAddrIsChecked(t *testing.T) {
	for addr, says := range map[string]string{"9100": "host:port", "127.0.0.1:http": "not a TCP port", "127.0.0.1:70000": "not a TCP port",
		"example.com:9100": "IP address or localhost"} {
		err := MetricsConfig{Addr: addr}.validate(&confload.Doc{File: "serve.yaml"})
		if err == nil || !strings.Contains(err.Error(), "metrics.addr") || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v", addr, err)
		}
	}
	for _, ok := range []string{"", "127.0.0.1:0", ":9100", "[::1]:9100", "localhost:9100", "0.0.0.0:9100"} {
		if err := (MetricsConfig{Addr: ok}).validate(nil); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
